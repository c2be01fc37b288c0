/**
 * Crash and restart over HTTP: kill -9 the coordinator, start another on the same data dir, and
 * check that the fence counter continues, a pre-crash holder can renew in the grace period while
 * another holder is refused, and a graceful stop (SIGTERM) exits 0 with every acknowledged grant durable.
 * A log lost between two starts (truncated to 0 bytes) stops the next start with exit 1.
 */
import { existsSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coordinatorHttp, type HttpReply } from '../support/coordinator-http.js';
import { spawnCoordinator } from '../support/coordinator-process.js';
import { coordinatorsOnOneDataDir } from '../support/one-data-dir.js';
import { waitForExit } from '../support/stop-by-pid.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

interface GrantBody {
  ok: true;
  grant: { fence: number; holderId: string };
}
interface EventsBody {
  events: { position: number; event: { type: string; data: Record<string, unknown> } }[];
  head: number;
}

/** TTL long enough that the grace period cannot run out during the test; nothing here waits for it. */
const { start } = coordinatorsOnOneDataDir('lease-fence-restart-', { LEASE_FENCE_TTL_MILLIS: '60000' });

describe('restart with recovery', () => {
  it('after kill -9, continues the fence counter and honours the pre-crash holder in its grace period', async () => {
    // Given a coordinator that granted leases and then crashed
    const first = await start();
    const a1 = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    const b1 = coordinatorHttp(first.url, TEST_TOKENS.agentB.token);
    const held = await a1.post<GrantBody>('/v1/leases/deploy-slot/acquire', { requestId: 'before-crash' });
    const other = await b1.post<GrantBody>('/v1/leases/cache/acquire', { requestId: 'b-before-crash' });
    await b1.post('/v1/leases/cache/release', { fence: other.body.grant.fence });
    const highestBefore = Math.max(held.body.grant.fence, other.body.grant.fence);
    const crash = await first.kill();
    expect(crash.signal).toBe('SIGKILL');

    // When another coordinator starts on the same data dir
    const second = await start();
    const a2 = coordinatorHttp(second.url, TEST_TOKENS.agentA.token);
    const b2 = coordinatorHttp(second.url, TEST_TOKENS.agentB.token);
    const viewer = coordinatorHttp(second.url, TEST_TOKENS.viewer.token);

    // Then it is ready and lists the carried lease as in grace
    const ready = await viewer.get<{ ready: boolean }>('/readyz');
    expect(ready.status).toBe(200);
    const leases = await viewer.get<{
      leases: { resource: string; holderId: string; fence: number; inGrace: boolean }[];
    }>('/v1/leases');
    expect(leases.body.leases).toContainEqual(
      expect.objectContaining({
        resource: 'deploy-slot',
        holderId: 'agent-a',
        fence: held.body.grant.fence,
        inGrace: true,
      }),
    );

    // And another holder is refused while the pre-crash holder renews with the same fence
    const refused = await b2.post('/v1/leases/deploy-slot/acquire', { requestId: 'b-after-crash' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ ok: false, reason: 'held', heldBy: 'agent-a' });
    const renewed = await a2.post<GrantBody>('/v1/leases/deploy-slot/renew', {
      requestId: 'renew-after-crash',
      fence: held.body.grant.fence,
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.grant.fence).toBe(held.body.grant.fence);

    // And the fence counter continues above every fence issued before the crash
    const fresh = await b2.post<GrantBody>('/v1/leases/fresh-after-crash/acquire', { requestId: 'b-fresh' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.grant.fence).toBeGreaterThan(highestBefore);
    const events = await viewer.get<EventsBody>('/v1/events');
    const starts = events.body.events.filter((e) => e.event.type === 'CoordinatorStarted');
    expect(starts).toHaveLength(2);
    expect(starts[1]?.event.data).toMatchObject({
      recoveredFence: highestBefore,
      carriedLeases: [expect.objectContaining({ resource: 'deploy-slot', holderId: 'agent-a' })],
    });
    await second.stop(); // frees the data dir's lock for the next test
  });

  it('answers 200 to a release retried after a restart (its reply lost), without a second LeaseReleased', async () => {
    // Given a release applied just before a graceful stop, and a restart on the same data dir
    const first = await start();
    const a1 = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    const held = await a1.post<GrantBody>('/v1/leases/retried-release/acquire', { requestId: 'before-stop' });
    const body = { fence: held.body.grant.fence };
    expect((await a1.post('/v1/leases/retried-release/release', body)).status).toBe(200);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    const second = await start();
    const a2 = coordinatorHttp(second.url, TEST_TOKENS.agentA.token);
    const b2 = coordinatorHttp(second.url, TEST_TOKENS.agentB.token);

    // When agent-a sends the same release again, and agent-b presents that fence
    const retry = await a2.post('/v1/leases/retried-release/release', body);
    const other = await b2.post('/v1/leases/retried-release/release', body);

    // Then agent-a is told ok, agent-b that the generation ended, and the log holds one release
    expect([retry.status, retry.body]).toEqual([200, { ok: true }]);
    expect([other.status, other.body]).toEqual([410, { ok: false, reason: 'expired' }]);
    const events = await coordinatorHttp(second.url, TEST_TOKENS.viewer.token).get<EventsBody>('/v1/events');
    const releases = events.body.events.filter(
      (e) => e.event.type === 'LeaseReleased' && e.event.data['resource'] === 'retried-release',
    );
    expect(releases).toHaveLength(1);
    await second.stop();
  });

  it('stops on SIGTERM with exit code 0, and every grant it acknowledged is in the log after a restart', async () => {
    // Given a coordinator under a steady load of acquisitions (8 agents, one request at a time each)
    const app = await start();
    const agent = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
    const replies: (HttpReply<GrantBody> | undefined)[] = [];
    let enoughReplies: () => void = () => undefined;
    const loaded = new Promise<void>((resolve) => {
      enoughReplies = resolve;
    });
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; ; i += 1) {
        const reply = await agent
          .post<GrantBody>(`/v1/leases/drain-${w}-${i}/acquire`, { requestId: `drain-${w}-${i}` })
          .catch(() => undefined);
        replies.push(reply);
        if (replies.length >= 40) enoughReplies();
        if (reply?.status !== 200) return;
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    await loaded;

    // When it is told to stop while requests are in flight
    const exit = await app.stop();
    await workers;

    // Then it exits 0 after logging that it stopped
    expect(exit).toEqual({ code: 0, signal: null });
    expect(app.logs.map((l) => l.msg)).toContain('stopped');
    // And every acknowledged grant is durable: a new coordinator on the same log has it
    const granted = replies.filter((r) => r?.status === 200).map((r) => r!.body.grant.fence);
    const next = await start();
    const events = await coordinatorHttp(next.url, TEST_TOKENS.viewer.token).get<EventsBody>('/v1/events?limit=10000');
    const logged = new Set(
      events.body.events.filter((e) => e.event.type === 'LeaseGranted').map((e) => e.event.data.fence),
    );
    expect(granted.length).toBeGreaterThanOrEqual(40 - 8);
    for (const fence of granted) expect(logged.has(fence)).toBe(true);
    // A request that reached it while it was stopping was refused as retryable, never half-done.
    for (const reply of replies) if (reply !== undefined && reply.status !== 200) expect(reply.status).toBe(503);
    await next.stop(); // frees the data dir's lock for the next test
  });
});

describe('takeover by a standby', () => {
  // A data dir of its own: leases left in grace by the tests above would make the old coordinator
  // checkpoint every 100 ms (crash loops must shorten grace), and a standby takes over only after silence.
  const takeover = coordinatorsOnOneDataDir('lease-fence-takeover-', { LEASE_FENCE_TTL_MILLIS: '60000' });

  it('answers 503 superseded at /readyz and refuses commands as retryable once another coordinator took over the log', async () => {
    // Given a running coordinator (a second active one on its data dir would be refused: it holds the log's lock)
    const old = await takeover.start();
    const oldAgent = coordinatorHttp(old.url, TEST_TOKENS.agentA.token);
    expect((await oldAgent.post('/v1/leases/takeover-1/acquire', { requestId: 'takeover-1' })).status).toBe(200);

    // When a standby on the same log takes over in a silence between the old one's checkpoints (1 s apart)
    const successor = await takeover.start({
      LEASE_FENCE_ROLE: 'standby',
      LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '100',
      LEASE_FENCE_TAKEOVER_AFTER_MILLIS: '300',
    });

    // Then the old one's next append conflicts: it stops granting and says why
    const refused = await oldAgent.post('/v1/leases/takeover-2/acquire', { requestId: 'takeover-2' });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'coordinator-unavailable', reason: 'superseded', retryable: true });
    const readiness = await oldAgent.get('/readyz');
    expect(readiness.status).toBe(503);
    expect(readiness.body).toMatchObject({
      ready: false,
      status: 'superseded',
      reason: expect.stringContaining('another coordinator'),
    });
    // And the successor grants
    const granted = await coordinatorHttp(successor.url, TEST_TOKENS.agentA.token).post(
      '/v1/leases/takeover-2/acquire',
      { requestId: 'takeover-2b' },
    );
    expect(granted.status).toBe(200);
  });
});

describe('a log lost between two starts', () => {
  const lost = coordinatorsOnOneDataDir('lease-fence-lost-log-', {});

  it('exits 1 saying the log is empty and which marker records it, issues no fence, and starts a new log once the marker is deleted', async () => {
    // Given a coordinator that granted fences 1..3 on its data dir and stopped
    const first = await lost.start();
    const agent = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    for (let i = 1; i <= 3; i += 1) {
      const granted = await agent.post<GrantBody>(`/v1/leases/r-${i}/acquire`, { requestId: `lost-${i}` });
      expect(granted.body.grant.fence).toBe(i);
    }
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    // When its log is truncated to 0 bytes and a coordinator starts on the data dir
    const logFile = join(lost.dataDir, 'default.events.sqlite');
    const marker = `${logFile}.id`;
    truncateSync(logFile, 0);
    const child = spawnCoordinator({
      PORT: '0',
      HOST: '127.0.0.1',
      LEASE_FENCE_DATA_DIR: lost.dataDir,
      LEASE_FENCE_TOKENS_FILE: await writeTokensFile(lost.dataDir),
    });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exit = await waitForExit(child);

    // Then it exits 1 saying what happened and what to do, never ready
    expect(exit.code).toBe(1);
    expect(output).toContain(`event log ${logFile} is empty, but this data directory held log `);
    expect(output).toContain(`(recorded in ${marker}): a lost log would issue fences again from 1`);
    expect(output).not.toContain('"msg":"ready"');
    // And it wrote nothing: no CoordinatorStarted, no grant, so no fence was issued
    expect(statSync(logFile).size).toBe(0);

    // And deleting the marker is the way to start a new log on purpose
    rmSync(marker);
    const fresh = await lost.start();
    expect(existsSync(marker)).toBe(true);
    const restarted = await coordinatorHttp(fresh.url, TEST_TOKENS.agentA.token).post<GrantBody>(
      '/v1/leases/r-1/acquire',
      { requestId: 'after-new-log' },
    );
    expect(restarted.status).toBe(200);
    await fresh.stop();
  });
});
