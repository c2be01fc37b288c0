import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGateClient, FenceTokenVerifier, LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { createManualClock, type ManualClock } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeployLedger } from '../deploy-slot/deploy-ledger.js';
import { openDeploySlotServer, type DeploySlotServer } from '../deploy-slot/deploy-slot-server.js';
import { createRandom } from '../random.js';
import { runAgent } from './agent.js';
import { writeToSlot } from './deploy-slot-client.js';

const SLOT = 'deploy-slot-a';
const TTL_MILLIS = 60_000;

describe('runAgent (against the coordinator test double and a real deploy slot)', () => {
  let directory: string;
  let coordinatorClock: ManualClock;
  let double: CoordinatorTestDouble;
  let ledger: DeployLedger;
  let slot: DeploySlotServer;

  const agentClient = (holderId: string): LeaseFenceClient =>
    new LeaseFenceClient({
      baseUrl: double.url,
      token: `token-${holderId}`,
      holderId,
      clockSkewMillis: 100,
      retry: { initialDelayMillis: 0 },
    });

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'demo-agent-'));
    coordinatorClock = createManualClock('coordinator');
    double = await openCoordinatorTestDouble({
      clock: coordinatorClock,
      ttlMillis: TTL_MILLIS,
      tokens: [
        { token: 'token-agent-1', role: 'agent', holderId: 'agent-1' },
        { token: 'token-agent-2', role: 'agent', holderId: 'agent-2' },
        { token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] },
      ],
    });
    ledger = new DeployLedger(join(directory, 'deploy-slot.sqlite'));
    slot = await openDeploySlotServer({
      resources: [SLOT],
      ledger,
      gateClient: new FenceGateClient({ baseUrl: double.url, token: 'token-gate' }),
      verifier: new FenceTokenVerifier({ namespace: 'default', keys: { jwks: double.keys } }),
      port: 0,
      log: () => undefined,
    });
  });

  afterEach(async () => {
    await slot.close();
    ledger.close();
    await double.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('has its first write after a stall refused when another agent took over the expired lease meanwhile', async () => {
    // Arrange: agent-1 always stalls; during its stall its lease expires at the coordinator and
    // agent-2 acquires the slot and claims it.
    const stop = new AbortController();
    const lines: string[] = [];
    const stall = async (): Promise<void> => {
      coordinatorClock.advance(TTL_MILLIS);
      const taken = await agentClient('agent-2').acquire(SLOT);
      if (!taken.ok) throw new Error(`agent-2 expected a grant, got ${taken.reason}`);
      await writeToSlot(slot.url, taken.lease, 'claim');
    };

    // Act
    const stats = await runAgent({
      client: agentClient('agent-1'),
      slotUrl: slot.url,
      resources: [SLOT],
      ttlMillis: TTL_MILLIS,
      modelCallMillis: { min: 0, max: 0 },
      stallProbability: 1,
      random: createRandom(7),
      stall,
      signal: stop.signal,
      log: (resource, message) => {
        lines.push(`${resource ?? '-'} ${message}`);
        if (message.includes('REFUSED')) stop.abort();
      },
    });
    await slot.flushReports();

    // Assert
    expect(stats).toMatchObject({ grants: 1, acceptedWrites: 1, refusedWrites: 1 });
    expect(lines.filter((line) => line.includes('REFUSED'))).toEqual([
      expect.stringMatching(
        /^deploy-slot-a wrote "step 1\/\d" with fence 1: REFUSED by the slot \(stale-fence, floor 2 held by agent-2\)$/,
      ),
    ]);
    expect(double.rejections.map((entry) => entry.body.rejected)).toEqual([{ holderId: 'agent-1', fence: 1 }]);
  });
});
