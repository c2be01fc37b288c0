/**
 * The BUILT sidecar's refusal reports in batches: a storm of refusals told while the coordinator
 * was out of reach reaches its log once it answers, each refusal exactly once and in seq order,
 * also when the gate is killed with a batch on its way (the coordinator records it, the gate
 * never hears so, and the restarted gate sends it again: duplicates, appended once).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventsReplySchema } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpFront, type TcpFront } from '../support/tcp-front.js';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from '../sdk/support/coordinator-process.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startHoldingProxy, startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';
import { acquireGrant, deadLoopbackUrl, type TestGrant } from '../support/coordinator-http.js';

const STORM = 100;

describe.skipIf(!coordinatorBuilt() || !gateBuilt())("the sidecar's refusal reports in batches", () => {
  let coordinator: CoordinatorProcess;
  let upstream: RecordingUpstream;
  let front: TcpFront;
  const gates: GateProcess[] = [];
  let dataRoot: string;

  beforeAll(async () => {
    coordinator = await startCoordinator();
    upstream = await startRecordingUpstream();
    front = await startTcpFront(coordinator.url);
    dataRoot = await mkdtemp(join(tmpdir(), 'gate-report-batches-'));
  });

  afterAll(async () => {
    for (const gate of gates) await gate.stop('SIGKILL');
    await front?.close();
    await upstream?.close();
    await coordinator?.stop();
    await rm(dataRoot, { recursive: true, force: true });
  });

  const post = (path: string, token: string, body: unknown) =>
    fetch(`${coordinator.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const acquire = (agent: number, resource: string): Promise<TestGrant> =>
    acquireGrant(coordinator.url, `agent-${agent}-token`, resource, `${resource}-${agent}`);
  const rejectedSeqs = async (resource: string): Promise<number[]> => {
    const response = await fetch(`${coordinator.url}/v1/events?after=0&limit=10000`, {
      headers: { authorization: 'Bearer viewer-token' },
    });
    return EventsReplySchema.parse(await response.json())
      .events.map((recorded) => recorded.event)
      .filter((event) => event.type === 'FenceRejected' && event.data.resource === resource)
      .map((event) => (event.data as { seq: number }).seq);
  };
  const gateFor = async (resource: string, coordinatorUrl: string): Promise<GateProcess> => {
    const gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: resource,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: coordinatorUrl,
      LEASE_FENCE_GATE_TOKEN: 'gate-token',
      LEASE_FENCE_DATA_DIR: join(dataRoot, resource),
    });
    gates.push(gate);
    await eventually(
      'the gate to be ready',
      async () => (await fetch(`${gate.url}/.well-known/lease-fence-gate/readyz`)).status === 200,
    );
    return gate;
  };
  const write = async (gate: GateProcess, token: string): Promise<number> =>
    (await fetch(`${gate.url}/batches`, { method: 'POST', body: 'x', headers: { 'lease-fence-token': token } })).status;
  const reportedSeqs = (gate: GateProcess): number[] =>
    gate.logLines
      .map((line) => JSON.parse(line) as { msg: string; seq?: number })
      .filter((line) => line.msg === 'refusal reported')
      .map((line) => line.seq!);

  it('a storm told during an outage reaches the log exactly once, in order, although the gate was killed with a batch on its way', async () => {
    // Arrange: agent-1's lease handed over to agent-2, whose write raised the gate's floor
    const resource = 'deploy-report-batches';
    const old = await acquire(1, resource);
    await post(`/v1/leases/${resource}/release`, 'agent-1-token', { fence: old.fence });
    const current = await acquire(2, resource);
    // The gate reaches the coordinator through a front, and that through a proxy holding batches.
    const holding = await startHoldingProxy(coordinator.url, /\/rejections\/batch$/);
    try {
      front.pointAt(holding.url);
      const first = await gateFor(resource, front.url);
      expect(await write(first, current.signedToken)).toBe(200);

      // Act: a storm of stale writes while the coordinator is out of reach
      front.pointAt(await deadLoopbackUrl());
      for (let index = 0; index < STORM; index += 1) expect(await write(first, old.signedToken)).toBe(409);
      // Back: the waiting refusals go as a batch, which the proxy holds; the gate dies meanwhile
      front.pointAt(holding.url);
      await eventually('a batch on its way', () => holding.held > 0, 30_000);
      await first.stop('SIGKILL');
      holding.release(); // the coordinator records the batch the dead gate sent
      await eventually('the held batch to be recorded', async () => (await rejectedSeqs(resource)).length > 0);
      const second = await gateFor(resource, coordinator.url);

      // Assert
      const every = Array.from({ length: STORM }, (_, index) => index + 1);
      await eventually('every refusal in the log', async () => (await rejectedSeqs(resource)).length === STORM, 30_000);
      expect(await rejectedSeqs(resource)).toEqual(every);
      // Each refusal is logged as reported once across the two gates. Seq 1 was alone when the
      // storm began, so it went in a single report, whose client retries it until the coordinator
      // is back: it lands before the batch the first gate was killed with. The restarted gate
      // reports the rest from its outbox, the held batch's again.
      const reportedByBoth = (): number[] => [...reportedSeqs(first), ...reportedSeqs(second)];
      await eventually(
        () => `every refusal reported once by the two gates, got ${JSON.stringify(reportedByBoth())}`,
        () => reportedByBoth().length >= STORM,
      );
      expect(reportedByBoth()).toEqual(every);
      expect(upstream.received.filter((request) => request.url === '/batches')).toHaveLength(1);
    } finally {
      await holding.close();
    }
  }, 90_000);
});
