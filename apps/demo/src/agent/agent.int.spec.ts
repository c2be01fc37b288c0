/**
 * A demo agent against the coordinator test double and a REAL `lease-fence-gate` sidecar (the
 * built `apps/gate`) in front of the demo's deploy recorder: the stale write after a stall is
 * refused by the sidecar with 409, never reaches the recorder, and is reported to the coordinator.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { createManualClock, type ManualClock } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDeployRecorder, type DeployRecorder } from '../deploy-recorder/deploy-recorder.js';
import { startGateProcess, type GateProcess } from '../gate-process.js';
import { createRandom } from '../random.js';
import { runAgent } from './agent.js';
import { deployThroughGate } from './deploy-client.js';

const SLOT = 'deploy-slot-a';
const TTL_MILLIS = 60_000;

describe('runAgent (against the coordinator test double and a real gate sidecar)', () => {
  let directory: string;
  let coordinatorClock: ManualClock;
  let double: CoordinatorTestDouble;
  let recorder: DeployRecorder;
  let gate: GateProcess | undefined;

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
    recorder = await openDeployRecorder({ port: 0 });
    gate = await startGateProcess({
      resource: SLOT,
      upstreamUrl: recorder.url,
      coordinatorUrl: double.url,
      gateToken: 'token-gate',
      dataDir: directory,
      port: 0,
      log: () => undefined,
    });
  }, 60_000); // starting the sidecar process takes seconds on a loaded machine

  afterEach(async () => {
    const child = gate?.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await recorder.close();
    await double.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('has its first write after a stall refused by the gate (409) when another agent took over the expired lease meanwhile', async () => {
    // Arrange: agent-1 always stalls; during its stall its lease expires at the coordinator and
    // agent-2 acquires the slot and claims it through the gate.
    const stop = new AbortController();
    const lines: string[] = [];
    const stall = async (): Promise<void> => {
      coordinatorClock.advance(TTL_MILLIS);
      const taken = await agentClient('agent-2').acquire(SLOT);
      if (!taken.ok) throw new Error(`agent-2 expected a grant, got ${taken.reason}`);
      const claimed = await deployThroughGate(gate!.url, taken.lease, 'claim');
      if (!claimed.ok) throw new Error(`agent-2's claim was not admitted: ${JSON.stringify(claimed)}`);
    };

    // Act
    const stats = await runAgent({
      client: agentClient('agent-1'),
      gateUrls: { [SLOT]: gate!.url },
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
    for (let waited = 0; double.rejections.length === 0 && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));

    // Assert: the agent says who, which fence, and who holds the floor; the recorder never saw the
    // stale step; the gate reported the refusal to the coordinator.
    expect(stats).toMatchObject({ grants: 1, acceptedWrites: 1, refusedWrites: 1 });
    expect(lines.filter((line) => line.includes('REFUSED'))).toEqual([
      expect.stringMatching(
        /^deploy-slot-a wrote "step 1\/\d" with fence 1: REFUSED by the gate with 409 \(stale-fence: agent-1 holds fence 1, the slot's floor is fence 2 of agent-2; refusal #1; not forwarded to the deploy recorder\)$/,
      ),
    ]);
    expect(recorder.deployments().map(({ holderId, fence, step }) => [holderId, fence, step])).toEqual([
      ['agent-1', 1, 'claim'],
      ['agent-2', 2, 'claim'],
    ]);
    expect(double.rejections.map((entry) => entry.body.rejected)).toEqual([{ holderId: 'agent-1', fence: 1 }]);
  });

  it('has a forged token refused by the gate with 401, never reaching the recorder', async () => {
    const taken = await agentClient('agent-1').acquire(SLOT);
    if (!taken.ok) throw new Error(`expected a grant, got ${taken.reason}`);
    const [head, payload, signature] = taken.lease.signedToken.split('.') as [string, string, string];
    const flipped = Buffer.from(signature, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 0xff;

    const result = await deployThroughGate(
      gate!.url,
      { ...taken.lease, signedToken: `${head}.${payload}.${flipped.toString('base64url')}` },
      'forged',
    );

    expect(result).toMatchObject({ ok: false, reason: 'invalid-token' });
    expect(recorder.deployments()).toEqual([]);
  });
});
