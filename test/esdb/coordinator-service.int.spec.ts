/**
 * The BUILT coordinator service with `LEASE_FENCE_EVENT_LOG=eventstoredb`, against the ESDB wire
 * emulator (a test double of KurrentDB, test/support/esdb-wire-emulator), black-box over HTTP and
 * the WebSocket stream:
 * - losing the server: 503 with a reason and nothing acknowledged while it is unreachable, ready
 *   again once it answers (no restart, no exit), the fence counter continues above every minted
 *   fence, and the holder from before the cut renews;
 * - a server unreachable at start-up: the service waits for it instead of exiting;
 * - a demo-like run: contention, expiry, a higher fence, a stale write refused at the resource's
 *   FenceGate, reported and streamed, release;
 * - `LEASE_FENCE_ROLE=standby`: a second service follows the log and takes over when the active
 *   one dies.
 * Every wait is on a log line or a stream frame; nothing sleeps.
 */
import type { EventFrame, StreamFrame } from '@lease-fence/protocol';
import {
  createMonotonicClock,
  FenceGate,
  LeaseClient,
  StaleFenceError,
  type Grant,
  type RejectionRecord,
} from 'lease-fence';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type LogLine,
  type RunningCoordinator,
  spawnCoordinator,
  startCoordinator,
  type StartCoordinatorOptions,
} from '../support/coordinator-process.js';
import { coordinatorHttp, type HttpReply } from '../support/coordinator-http.js';
import { startEsdbWireEmulator, type EsdbWireEmulator } from '../support/esdb-wire-emulator/index.js';
import { createSigningKeysFile } from '../support/signing-keys.js';
import { waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { openStream, type StreamClient } from '../support/stream-client.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface GrantBody {
  readonly ok: true;
  readonly grant: Grant & { readonly fence: number };
}
interface ErrorBody {
  readonly error: string;
  readonly reason?: string;
  readonly retryable?: boolean;
}
interface ReadinessBody {
  readonly ready: boolean;
  readonly status: string;
  readonly reason?: string;
  readonly bootId?: string;
}
interface EventsBody {
  readonly events: readonly {
    readonly position: number;
    readonly event: { readonly type: string; readonly data: Record<string, unknown> };
  }[];
  readonly head: number;
}

let emulator: EsdbWireEmulator;
let namespaces = 0;
/** One signing key set for every coordinator here: an active one and its standby must sign with the same key. */
let keysDir: string;
let signingKeysFile: string;
const running: RunningCoordinator[] = [];
const streams: StreamClient[] = [];

beforeAll(async () => {
  emulator = await startEsdbWireEmulator();
  keysDir = await createTempDir('lease-fence-esdb-keys-');
  signingKeysFile = await createSigningKeysFile(keysDir);
});
afterEach(async () => {
  emulator.resume();
  for (const stream of streams.splice(0)) await stream.close();
  for (const app of running.splice(0)) await app.cleanup();
});
afterAll(async () => {
  await emulator.stop();
  await removeTempDir(keysDir);
});

/** The environment of a coordinator on a fresh namespace of the emulator; quick re-opens (≤ 1 s apart). */
const eventStoreEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  LEASE_FENCE_EVENT_LOG: 'eventstoredb',
  EVENTSTORE_CONNECTION_STRING: emulator.connectionString,
  LEASE_FENCE_SIGNING_KEYS_FILE: signingKeysFile,
  LEASE_FENCE_NAMESPACE: `service-${process.pid}-${++namespaces}`,
  LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS: '1000',
  ...extra,
});

async function start(options: StartCoordinatorOptions): Promise<RunningCoordinator> {
  const app = await startCoordinator(options);
  running.push(app);
  return app;
}

const message =
  (text: string) =>
  (line: LogLine): boolean =>
    line.msg === text;
const messageStarting =
  (prefix: string) =>
  (line: LogLine): boolean =>
    typeof line.msg === 'string' && line.msg.startsWith(prefix);
const isEvent =
  (type: string, resource?: string) =>
  (frame: StreamFrame): frame is EventFrame =>
    frame.type === 'event' &&
    frame.event.type === type &&
    (resource === undefined || (frame.event.data as { resource?: string }).resource === resource);
const grantedFences = (body: EventsBody): number[] =>
  body.events.flatMap((e) => (e.event.type === 'LeaseGranted' ? [e.event.data.fence as number] : []));

describe('the coordinator service on EventStoreDB', () => {
  it('exits 1 naming EVENTSTORE_CONNECTION_STRING when the eventstoredb log is selected without it', async () => {
    // Act
    const child = spawnCoordinator({ PORT: '0', HOST: '127.0.0.1', LEASE_FENCE_EVENT_LOG: 'eventstoredb' });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exit = await waitForExit(child);

    // Assert
    expect(exit.code).toBe(1);
    expect(stderr).toContain('EVENTSTORE_CONNECTION_STRING');
  });

  it('answers 503 with a reason while the server is unreachable, acknowledges nothing, and serves again once it answers: fences continue and the holder renews', async () => {
    // Given a coordinator that granted deploy-1 to agent-a
    const app = await start({ env: eventStoreEnv({ LEASE_FENCE_TTL_MILLIS: '60000' }) });
    const agentA = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
    const agentB = coordinatorHttp(app.url, TEST_TOKENS.agentB.token);
    const held = await agentA.post<GrantBody>('/v1/leases/deploy-1/acquire', { requestId: 'a-1' });
    expect(held.status).toBe(200);
    const firstBootId = (await coordinatorHttp(app.url).get<ReadinessBody>('/readyz')).body.bootId;

    // When the connection to the server is cut
    emulator.suspend();

    // Then a grant is refused with 503 and a reason: it was not acknowledged
    const refused = await agentB.post<ErrorBody>('/v1/leases/deploy-2/acquire', { requestId: 'b-1' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toMatchObject({
      retryable: true,
      reason: expect.stringMatching(/^(unhealthy|event-log-unavailable)$/),
    });

    // And once the coordinator has noticed, every command and /readyz say the log is unavailable; the process stays up
    await app.waitForLog(messageStarting('event log unavailable: next attempt in'));
    const renewWhileDown = await agentA.post<ErrorBody>('/v1/leases/deploy-1/renew', {
      requestId: 'a-2',
      fence: held.body.grant.fence,
    });
    expect(renewWhileDown.status).toBe(503);
    expect(renewWhileDown.body).toMatchObject({
      error: 'event-log-unavailable',
      reason: 'event-log-unavailable',
      retryable: true,
    });
    const notReady = await coordinatorHttp(app.url).get<ReadinessBody>('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({
      ready: false,
      status: 'unhealthy',
      reason: expect.stringMatching(/^event-log-unavailable: /),
    });

    // When the server answers again
    emulator.resume();
    await app.waitForLog(message('coordinator re-opened'));

    // Then it is ready with a new boot id, without having restarted
    const ready = await coordinatorHttp(app.url).get<ReadinessBody>('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.bootId).not.toBe(firstBootId);
    expect(app.child.exitCode).toBeNull();

    // And agent-a renews its lease with the same fence, while agent-b is still refused it
    const renewed = await agentA.post<GrantBody>('/v1/leases/deploy-1/renew', {
      requestId: 'a-3',
      fence: held.body.grant.fence,
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.grant.fence).toBe(held.body.grant.fence);
    expect((await agentB.post('/v1/leases/deploy-1/acquire', { requestId: 'b-2' })).status).toBe(409);

    // And agent-b's retry of the refused grant (same requestId) gets a fence above every one minted before the cut
    const retried = await agentB.post<GrantBody>('/v1/leases/deploy-2/acquire', { requestId: 'b-1' });
    expect(retried.status).toBe(200);
    expect(retried.body.grant.fence).toBeGreaterThan(held.body.grant.fence + 1);

    // And the log holds each acknowledged grant once, and no grant from the cut
    const events = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).get<EventsBody>('/v1/events');
    expect(grantedFences(events.body)).toEqual([held.body.grant.fence, retried.body.grant.fence]);
  });

  it('waits for a server that is unreachable at start-up instead of exiting, and becomes ready once it answers', async () => {
    // Given a server that is unreachable
    emulator.suspend();

    // When the coordinator starts
    const app = await start({ env: eventStoreEnv(), waitForReady: false });
    await app.waitForLog(messageStarting('event log unavailable: next attempt in'));

    // Then it listens, and answers 503 event-log-unavailable
    const notReady = await coordinatorHttp(app.url).get<ReadinessBody>('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({
      status: 'unhealthy',
      reason: expect.stringMatching(/^event-log-unavailable: /),
    });
    const refused = await coordinatorHttp(app.url, TEST_TOKENS.agentA.token).post<ErrorBody>(
      '/v1/leases/deploy-1/acquire',
      { requestId: 'a-1' },
    );
    expect(refused).toMatchObject({ status: 503, body: { reason: 'event-log-unavailable' } });

    // When the server answers
    emulator.resume();
    await app.waitForLog(message('ready'));

    // Then it grants
    const granted = await coordinatorHttp(app.url, TEST_TOKENS.agentA.token).post<GrantBody>(
      '/v1/leases/deploy-1/acquire',
      { requestId: 'a-1' },
    );
    expect(granted).toMatchObject({ status: 200, body: { ok: true, grant: { fence: 1 } } });
  });

  it('runs a demo-like sequence end to end: contention, expiry, a higher fence, a stale write refused at the gate, reported and streamed, release', async () => {
    // Given a coordinator, a viewer on the live stream, and the deploy slot's FenceGate reporting its refusals
    const app = await start({ env: eventStoreEnv() });
    const stream = await openStream(app.wsUrl, { token: TEST_TOKENS.viewer.token });
    streams.push(stream);
    const agentA = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
    const agentB = coordinatorHttp(app.url, TEST_TOKENS.agentB.token);
    const gateHttp = coordinatorHttp(app.url, TEST_TOKENS.gate.token);
    const reports: Promise<HttpReply>[] = [];
    const gate = new FenceGate('deploy-slot', {
      onRejection: (r: RejectionRecord) => {
        reports.push(
          gateHttp.post('/v1/resources/deploy-slot/rejections', {
            seq: r.seq,
            resource: r.resource,
            kind: r.kind,
            rejected: r.rejected,
            current: r.current,
          }),
        );
      },
    });
    const writes: string[] = [];
    const clientA = new LeaseClient({
      clock: createMonotonicClock('agent-a'),
      holderId: 'agent-a',
      clockSkewMillis: 50,
    });
    const clientB = new LeaseClient({
      clock: createMonotonicClock('agent-b'),
      holderId: 'agent-b',
      clockSkewMillis: 50,
    });

    // When agent-a takes the slot for 1 s and deploys through the gate
    const requestA = clientA.beginAcquire('deploy-slot', { ttlMillis: 1_000 });
    const grantA = await agentA.post<GrantBody>('/v1/leases/deploy-slot/acquire', {
      requestId: requestA.requestId,
      ttlMillis: 1_000,
    });
    const leaseA = clientA.completeAcquire(requestA, grantA.body.grant);
    gate.commit(leaseA.token, () => writes.push('a: deploy v1'));

    // Then agent-b is refused while agent-a holds it
    const contended = await agentB.post('/v1/leases/deploy-slot/acquire', { requestId: 'b-early' });
    expect(contended).toMatchObject({ status: 409, body: { ok: false, reason: 'held', heldBy: 'agent-a' } });

    // When agent-a stalls past its lease, which the coordinator expires
    await stream.waitFor(isEvent('LeaseExpired', 'deploy-slot'), 20_000);

    // Then agent-b gets the slot with a higher fence and deploys
    const requestB = clientB.beginAcquire('deploy-slot');
    const grantB = await agentB.post<GrantBody>('/v1/leases/deploy-slot/acquire', { requestId: requestB.requestId });
    expect(grantB.status).toBe(200);
    const leaseB = clientB.completeAcquire(requestB, grantB.body.grant);
    expect(leaseB.fence).toBeGreaterThan(leaseA.fence);
    gate.commit(leaseB.token, () => writes.push('b: deploy v2'));

    // And agent-a's late write is refused at the gate, and the refusal is recorded and streamed
    expect(() => gate.commit(leaseA.token, () => writes.push('a: late deploy'))).toThrow(StaleFenceError);
    const [report] = await Promise.all(reports);
    expect(report).toMatchObject({ status: 202, body: { ok: true, duplicate: false } });
    const rejected = await stream.waitFor(isEvent('FenceRejected', 'deploy-slot'));
    expect(rejected.event.data).toMatchObject({
      gateId: 'gate-1',
      rejected: { holderId: 'agent-a', fence: leaseA.fence },
      current: { holderId: 'agent-b', fence: leaseB.fence },
    });
    expect(writes).toEqual(['a: deploy v1', 'b: deploy v2']);

    // And agent-a's lease is gone for good, while agent-b releases the slot
    expect(
      (await agentA.post('/v1/leases/deploy-slot/renew', { requestId: 'a-renew', fence: leaseA.fence })).status,
    ).toBe(410);
    expect((await agentB.post('/v1/leases/deploy-slot/release', { fence: leaseB.fence })).status).toBe(200);
    await stream.waitFor(isEvent('LeaseReleased', 'deploy-slot'));

    // And the stream told the story in log order
    const story = stream.frames
      .filter(
        (f): f is EventFrame =>
          f.type === 'event' && (f.event.data as { resource?: string }).resource === 'deploy-slot',
      )
      .map((f) => f.event.type);
    expect(story).toEqual(['LeaseGranted', 'LeaseExpired', 'LeaseGranted', 'FenceRejected', 'LeaseReleased']);
    const recorded = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).get<{ rejections: unknown[] }>(
      '/v1/rejections',
    );
    expect(recorded.body.rejections).toEqual([
      expect.objectContaining({ resource: 'deploy-slot', rejected: { holderId: 'agent-a', fence: leaseA.fence } }),
    ]);
  });

  it('as LEASE_FENCE_ROLE=standby, follows the log refusing commands, then takes over when the active coordinator dies: the lease is carried and fences continue', async () => {
    // Given an active coordinator with a heartbeat, holding a lease for agent-a, and a standby on the same namespace
    const env = eventStoreEnv({
      LEASE_FENCE_TTL_MILLIS: '60000',
      LEASE_FENCE_HEARTBEAT: 'true',
      LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '100',
      LEASE_FENCE_TAKEOVER_AFTER_MILLIS: '2000',
    });
    const active = await start({ env });
    const held = await coordinatorHttp(active.url, TEST_TOKENS.agentA.token).post<GrantBody>(
      '/v1/leases/deploy-1/acquire',
      { requestId: 'a-1' },
    );
    expect(held.status).toBe(200);
    const standby = await start({ env: { ...env, LEASE_FENCE_ROLE: 'standby' }, waitForReady: false });
    await standby.waitForLog(messageStarting('standby: following the log'));

    // Then the standby refuses commands and is not ready, saying why
    const refused = await coordinatorHttp(standby.url, TEST_TOKENS.agentA.token).post<ErrorBody>(
      '/v1/leases/deploy-1/renew',
      { requestId: 'a-2', fence: held.body.grant.fence },
    );
    expect(refused).toMatchObject({ status: 503, body: { reason: 'standby', retryable: true } });
    const notReady = await coordinatorHttp(standby.url).get<ReadinessBody>('/readyz');
    expect(notReady).toMatchObject({
      status: 503,
      body: { ready: false, status: 'standby', reason: expect.stringMatching(/^standby: /) },
    });

    // When the active coordinator dies (kill -9)
    await active.kill();

    // Then the standby takes over and is ready
    await standby.waitForLog(message('standby: took over the log'));
    await standby.waitForLog(message('ready'));
    expect((await coordinatorHttp(standby.url).get<ReadinessBody>('/readyz')).status).toBe(200);

    // And agent-a renews its lease with the same fence, agent-b is refused it, and a new grant gets a higher fence
    const agentA = coordinatorHttp(standby.url, TEST_TOKENS.agentA.token);
    const agentB = coordinatorHttp(standby.url, TEST_TOKENS.agentB.token);
    expect(
      await agentA.post('/v1/leases/deploy-1/renew', { requestId: 'a-3', fence: held.body.grant.fence }),
    ).toMatchObject({ status: 200, body: { grant: { fence: held.body.grant.fence } } });
    expect((await agentB.post('/v1/leases/deploy-1/acquire', { requestId: 'b-1' })).status).toBe(409);
    const next = await agentB.post<GrantBody>('/v1/leases/deploy-2/acquire', { requestId: 'b-2' });
    expect(next.status).toBe(200);
    expect(next.body.grant.fence).toBeGreaterThan(held.body.grant.fence);
  });
});
