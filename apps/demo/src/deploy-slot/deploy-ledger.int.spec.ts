import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateOptionsFrom } from '@lease-fence/client';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeployLedger } from './deploy-ledger.js';

const SLOT = 'deploy-slot-a';

describe('DeployLedger', () => {
  let directory: string;
  let path: string;
  let ledger: DeployLedger | undefined;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'deploy-ledger-'));
    path = join(directory, 'deploy-slot.sqlite');
  });

  afterEach(async () => {
    ledger?.close();
    ledger = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  it('commits the deployment and the raised floor together, so a restarted slot still refuses older fences', () => {
    // Arrange
    ledger = new DeployLedger(path);
    const gate = new FenceGate(SLOT, gateOptionsFrom(ledger.gateState(SLOT)));
    ledger.deploy(gate, { resource: SLOT, holderId: 'agent-2', fence: 7 }, 'claim', 1);

    // Act: the slot restarts.
    ledger.close();
    ledger = new DeployLedger(path);
    const restored = new FenceGate(SLOT, gateOptionsFrom(ledger.gateState(SLOT)));

    // Assert
    expect(restored.floor).toEqual({ fence: 7, holderId: 'agent-2' });
    expect(() => ledger?.deploy(restored, { resource: SLOT, holderId: 'agent-1', fence: 6 }, 'step', 2)).toThrow(StaleFenceError);
    expect(ledger.deploymentCount(SLOT)).toBe(1);
  });

  it('writes nothing for a refused write but keeps its refusal counter across a restart', () => {
    // Arrange
    ledger = new DeployLedger(path);
    const gate = new FenceGate(SLOT, { onRejection: (rejection) => ledger?.saveProgress(SLOT, { nextSeq: rejection.seq + 1 }) });
    ledger.deploy(gate, { resource: SLOT, holderId: 'agent-2', fence: 7 }, 'claim', 1);

    // Act
    expect(() => ledger?.deploy(gate, { resource: SLOT, holderId: 'agent-1', fence: 3 }, 'step', 2)).toThrow(StaleFenceError);
    ledger.close();
    ledger = new DeployLedger(path);

    // Assert
    expect(ledger.deploymentCount(SLOT)).toBe(1);
    expect(ledger.gateState(SLOT)).toEqual({ resource: SLOT, floor: { fence: 7, holderId: 'agent-2' }, nextSeq: 2, reportedThroughSeq: 0 });
  });

  it('never lowers a saved floor, counter or report position', () => {
    // Arrange
    ledger = new DeployLedger(path);
    const gate = new FenceGate(SLOT);
    ledger.deploy(gate, { resource: SLOT, holderId: 'agent-2', fence: 9 }, 'claim', 1);
    ledger.saveProgress(SLOT, { nextSeq: 5, reportedThroughSeq: 4 });

    // Act: late, lower updates.
    ledger.saveProgress(SLOT, { nextSeq: 2, reportedThroughSeq: 1 });
    ledger.deploy(new FenceGate(SLOT), { resource: SLOT, holderId: 'agent-1', fence: 3 }, 'late', 2);

    // Assert
    expect(ledger.gateState(SLOT)).toEqual({ resource: SLOT, floor: { fence: 9, holderId: 'agent-2' }, nextSeq: 5, reportedThroughSeq: 4 });
  });
});
