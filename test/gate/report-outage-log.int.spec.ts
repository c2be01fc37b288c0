/**
 * What the BUILT sidecar logs about its refusal reports across two coordinator outages, as an
 * operator reads it: each outage is said at warn in words, not only the first one since the gate
 * started. The coordinator sits behind a TCP front (`test/support/tcp-front.ts`) pointed at a port
 * nothing listens on for an outage, back at the coordinator to end it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpFront, type TcpFront } from '../support/tcp-front.js';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from '../sdk/support/coordinator-process.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';
import { acquireGrant, deadLoopbackUrl, type TestGrant } from '../support/coordinator-http.js';

const RETRIED = 'refusal not reported yet (retried; it stays in the outbox)';

describe.skipIf(!coordinatorBuilt() || !gateBuilt())("the sidecar's log of refusal reports across outages", () => {
  let coordinator: CoordinatorProcess;
  let upstream: RecordingUpstream;
  let front: TcpFront;
  let gate: GateProcess | undefined;
  let dataRoot: string;

  beforeAll(async () => {
    coordinator = await startCoordinator();
    upstream = await startRecordingUpstream();
    front = await startTcpFront(coordinator.url);
    dataRoot = await mkdtemp(join(tmpdir(), 'gate-outage-log-'));
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await front?.close();
    await upstream?.close();
    await coordinator?.stop();
    await rm(dataRoot, { recursive: true, force: true });
  });

  const acquire = (agent: number, resource: string): Promise<TestGrant> =>
    acquireGrant(coordinator.url, `agent-${agent}-token`, resource, `${resource}-${agent}`);
  const write = async (token: string): Promise<number> =>
    (await fetch(`${gate!.url}/outage-log`, { method: 'POST', body: 'x', headers: { 'lease-fence-token': token } }))
      .status;
  const lines = (): { level: number; msg: string; seq?: number }[] =>
    gate!.logLines.map((line) => JSON.parse(line) as { level: number; msg: string; seq?: number });

  it('a second outage after the refusals were delivered is logged at warn again, not only at debug', async () => {
    // Arrange: agent-1's lease handed over to agent-2, whose write raised the gate's floor
    const resource = 'deploy-outage-log';
    const old = await acquire(1, resource);
    await fetch(`${coordinator.url}/v1/leases/${resource}/release`, {
      method: 'POST',
      headers: { authorization: 'Bearer agent-1-token', 'content-type': 'application/json' },
      body: JSON.stringify({ fence: old.fence }),
    });
    const current = await acquire(2, resource);
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: resource,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: front.url,
      LEASE_FENCE_GATE_TOKEN: 'gate-token',
      LEASE_FENCE_DATA_DIR: join(dataRoot, resource),
      LOG_LEVEL: 'debug',
    });
    await eventually(
      'the gate to be ready',
      async () => (await fetch(`${gate!.url}/.well-known/lease-fence-gate/readyz`)).status === 200,
    );
    expect(await write(current.signedToken)).toBe(200);
    const dead = await deadLoopbackUrl();

    // Act: an outage with a refusal, its end, then a second outage with a refusal
    for (const outage of [1, 2]) {
      front.pointAt(dead);
      expect(await write(old.signedToken)).toBe(409);
      await eventually(`outage ${outage}'s refusal to fail a report`, () =>
        lines().some((line) => line.msg === RETRIED && line.seq === outage),
      );
      front.pointAt(coordinator.url);
      await eventually(`refusal ${outage} to be reported`, () =>
        lines().some((line) => line.msg === 'refusal reported' && line.seq === outage),
      );
    }

    // Assert: each outage has its warn line, in words
    const warned = lines().filter((line) => line.msg === RETRIED && line.level === 40);
    expect(warned.map((line) => line.seq)).toEqual([1, 2]);
  }, 20_000);
});
