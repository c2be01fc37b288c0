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
    expect(() => ledger?.deploy(restored, { resource: SLOT, holderId: 'agent-1', fence: 6 }, 'step', 2)).toThrow(
      StaleFenceError,
    );
    expect(ledger.deploymentCount(SLOT)).toBe(1);
  });

  it('writes nothing for a refused write, and has the refusal and its seq durable in the outbox before the writer hears of it', () => {
    // Arrange
    ledger = new DeployLedger(path);
    const gate = new FenceGate(SLOT, {
      onRejection: (rejection) => ledger?.recordRefusal(rejection, 1_700_000_000_000),
    });
    ledger.deploy(gate, { resource: SLOT, holderId: 'agent-2', fence: 7 }, 'claim', 1);

    // Act: read the database from another connection the moment the refusal is thrown.
    let seenByWriter: unknown;
    try {
      ledger.deploy(gate, { resource: SLOT, holderId: 'agent-1', fence: 3 }, 'step', 2);
    } catch (error) {
      const reader = new DeployLedger(path);
      seenByWriter = { error, state: reader.gateState(SLOT) };
      reader.close();
    }

    // Assert
    expect(ledger.deploymentCount(SLOT)).toBe(1);
    expect(seenByWriter).toEqual({
      error: expect.any(StaleFenceError),
      state: {
        resource: SLOT,
        floor: { fence: 7, holderId: 'agent-2' },
        nextSeq: 2,
        reportedThroughSeq: 0,
        outbox: [
          {
            seq: 1,
            resource: SLOT,
            kind: 'stale',
            rejected: { holderId: 'agent-1', fence: 3 },
            current: { holderId: 'agent-2', fence: 7 },
            wallMillis: 1_700_000_000_000,
          },
        ],
      },
    });
  });

  it('drains the outbox in seq order and forgets a refusal only once acknowledged, across a restart', async () => {
    // Arrange: two refusals.
    ledger = new DeployLedger(path);
    const gate = new FenceGate(SLOT, {
      initialFloor: { fence: 9, holderId: 'agent-2' },
      onRejection: (rejection) => ledger?.recordRefusal(rejection, 5),
    });
    for (const fence of [3, 4])
      expect(() => ledger?.deploy(gate, { resource: SLOT, holderId: 'agent-1', fence }, 'step', 2)).toThrow(
        StaleFenceError,
      );
    let announced = 0;
    ledger.outbox(SLOT).onPending(() => (announced += 1));
    expect(() => ledger?.deploy(gate, { resource: SLOT, holderId: 'agent-1', fence: 5 }, 'step', 3)).toThrow(
      StaleFenceError,
    );

    // Act
    await ledger.outbox(SLOT).acknowledgeRejections(1);
    ledger.close();
    ledger = new DeployLedger(path);
    const outbox = ledger.outbox(SLOT);

    // Assert
    expect(announced).toBe(1);
    expect(outbox.reportedThroughSeq).toBe(1);
    expect(outbox.pendingRejections().map((entry) => [entry.seq, entry.rejected.fence])).toEqual([
      [2, 4],
      [3, 5],
    ]);
    expect(ledger.gateState(SLOT)?.nextSeq).toBe(4);
  });

  it('answers a writer whose refusal could not be made durable with the storage error, not a refusal', () => {
    // Arrange
    ledger = new DeployLedger(path);
    const diskFull = new Error('SQLITE_FULL: database or disk is full');
    const gate = new FenceGate(SLOT, {
      initialFloor: { fence: 9, holderId: 'agent-2' },
      onRejection: () => {
        throw diskFull;
      },
    });

    // Act / Assert
    expect(() => ledger?.deploy(gate, { resource: SLOT, holderId: 'agent-1', fence: 3 }, 'step', 2)).toThrow(diskFull);
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
    expect(ledger.gateState(SLOT)).toEqual({
      resource: SLOT,
      floor: { fence: 9, holderId: 'agent-2' },
      nextSeq: 5,
      reportedThroughSeq: 4,
      outbox: [],
    });
  });
});
