/**
 * Faults on the agent link against the built coordinator (SQLite log, writer thread, grouped
 * commits), black box:
 * - a link dropped mid-batch, again and again, its frames resent with the same requestIds on a
 *   new link: each requestId is granted once in the log, with the fence every reply named;
 * - frames for another agent's lease in the middle of a batch: refused, the holder keeps it;
 * - malformed frames interleaved with a batch: answered 400 with id null, the batch unharmed;
 * - a flood on one connection that never reads its replies: the coordinator's RSS stays bounded
 *   (it stops reading, then closes the slow reader with 1008) and it still serves others.
 * RSS figures are printed, not asserted beyond a generous bound (no timed assertions).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openRawAgentLink, type RawAgentLink } from '../support/agent-link-client.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { COORDINATOR_MAIN, startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

const running: RunningCoordinator[] = [];
/** A coordinator on a fresh data dir of its own, stopped (by PID) and removed after the test. */
async function start(): Promise<RunningCoordinator> {
  const coordinator = await startCoordinator({ env: { LEASE_FENCE_TTL_MILLIS: '60000' } });
  running.push(coordinator);
  return coordinator;
}
afterEach(async () => {
  for (const coordinator of running.splice(0)) await coordinator.cleanup();
});

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));
const rssKibOf = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

interface LoggedEvent {
  readonly position: number;
  readonly event: { readonly type: string; readonly data: { resource?: string; fence?: number; requestId?: string } };
}

async function allEvents(coordinator: RunningCoordinator): Promise<LoggedEvent[]> {
  const viewer = coordinatorHttp(coordinator.url, TEST_TOKENS.viewer.token);
  const events: LoggedEvent[] = [];
  for (;;) {
    const page = await viewer.get<{ events: LoggedEvent[] }>(
      `/v1/events?after=${events.at(-1)?.position ?? 0}&limit=1000`,
    );
    if (page.body.events.length === 0) return events;
    events.push(...page.body.events);
  }
}

describe.skipIf(!existsSync(COORDINATOR_MAIN))('agent link faults on grouped commits', () => {
  it('grants each requestId once when its link drops mid-batch and the frames are resent on a new link', async () => {
    const coordinator = await start();
    const fenceOfRequest = new Map<string, number>();
    const ROUNDS = 20;
    const PER_ROUND = 64;
    let answeredBeforeDrop = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentA.token);
      for (let id = 1; id <= PER_ROUND; id += 1)
        first.send({ id, op: 'acquire', resource: `drop-${round}-${id}`, body: { requestId: `drop-${round}-${id}` } });
      await sleep(round % 5); // some replies arrive, most of the batch is still in flight
      first.socket.terminate(); // the connection is gone, as a network failure drops it
      answeredBeforeDrop += first.replies.length;
      for (const reply of first.replies)
        if (reply.status === 200)
          fenceOfRequest.set(`drop-${round}-${reply.id}`, (reply.body as { grant: { fence: number } }).grant.fence);
      const second = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentA.token);
      const replies = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, index) =>
          second.request(index + 1, 'acquire', `drop-${round}-${index + 1}`, {
            requestId: `drop-${round}-${index + 1}`,
          }),
        ),
      );
      for (const [index, reply] of replies.entries()) {
        expect(reply.status).toBe(200);
        const fence = (reply.body as { grant: { fence: number } }).grant.fence;
        const requestId = `drop-${round}-${index + 1}`;
        expect(fenceOfRequest.get(requestId) ?? fence).toBe(fence); // the retry names the fence the first reply named
        fenceOfRequest.set(requestId, fence);
      }
      await second.close();
    }
    const grants = (await allEvents(coordinator)).filter(({ event }) => event.type === 'LeaseGranted');
    const byRequest = new Map<string, number[]>();
    for (const { event } of grants)
      byRequest.set(event.data.requestId!, [...(byRequest.get(event.data.requestId!) ?? []), event.data.fence!]);
    console.log(
      `link drops: ${ROUNDS} drops, ${ROUNDS * PER_ROUND} acquires, ${answeredBeforeDrop} answered before a drop, ${grants.length} grants logged`,
    );
    expect(grants).toHaveLength(ROUNDS * PER_ROUND);
    for (const [requestId, fence] of fenceOfRequest) expect(byRequest.get(requestId)).toEqual([fence]);
  });

  it("refuses frames for another agent's lease and malformed frames inside a batch, and runs the rest", async () => {
    const coordinator = await start();
    const holder = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentA.token);
    const other = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentB.token);
    const held = await holder.request(1, 'acquire', 'mixed-held', { requestId: 'mixed-held' });
    const fence = (held.body as { grant: { fence: number } }).grant.fence;
    const BATCH = 200;
    for (let id = 1; id <= BATCH; id += 1) {
      other.send({ id, op: 'acquire', resource: `mixed-${id}`, body: { requestId: `mixed-${id}` } });
      if (id % 10 === 0) other.send({ id: 10_000 + id, op: 'release', resource: 'mixed-held', body: { fence } });
      if (id % 10 === 5)
        other.send({ id: 20_000 + id, op: 'renew', resource: 'mixed-held', body: { requestId: `steal-${id}`, fence } });
      if (id % 25 === 0) other.send('{"id": 1,');
      if (id % 25 === 1) other.send({ id: 30_000 + id, op: 'acquire', resource: '', body: { requestId: 'x' } });
    }
    const expected = BATCH + BATCH / 10 + BATCH / 10 + BATCH / 25 + BATCH / 25;
    while (other.replies.length < expected) await sleep(20);
    const statusOf = (predicate: (id: number | null) => boolean): number[] => [
      ...new Set(other.replies.filter((reply) => predicate(reply.id)).map((reply) => reply.status)),
    ];
    expect(statusOf((id) => id !== null && id <= BATCH)).toEqual([200]);
    expect(statusOf((id) => id !== null && id > 10_000 && id < 30_000)).toEqual([409]);
    expect(statusOf((id) => id === null || id > 30_000)).toEqual([400]);
    const renewed = await holder.request(2, 'renew', 'mixed-held', { requestId: 'mixed-held-renew', fence });
    expect(renewed.status).toBe(200); // the holder still holds it
    const events = await allEvents(coordinator);
    expect(events.filter(({ event }) => event.data.resource === 'mixed-held').map(({ event }) => event.type)).toEqual([
      'LeaseGranted',
      'LeaseRenewed',
    ]);
    await Promise.all([holder.close(), other.close()]);
  });

  it("bounds the coordinator's memory under a flood from a link that never reads, and keeps serving others", async () => {
    const coordinator = await start();
    const rssBeforeKib = rssKibOf(coordinator.pid);
    const flood: RawAgentLink = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentB.token);
    (flood.socket as unknown as { _socket: { pause(): void } })._socket.pause(); // never read a reply
    const FRAMES = 100_000;
    let sent = 0;
    const pump = (): void => {
      while (sent < FRAMES && flood.socket.bufferedAmount < 4 * 1024 * 1024) {
        sent += 1;
        // Denials (no append) and grants (appends) mixed: every 20th frame takes a fresh resource
        flood.send({
          id: sent,
          op: sent % 20 === 0 ? 'acquire' : 'renew',
          resource: `flood-${sent % 20 === 0 ? sent : 0}`,
          body: { requestId: `flood-${sent}`, fence: 1 },
        });
      }
      if (sent < FRAMES && flood.socket.readyState === flood.socket.OPEN) setTimeout(pump, 5);
    };
    let peakKib = rssBeforeKib;
    const sampler = setInterval(() => {
      peakKib = Math.max(peakKib, rssKibOf(coordinator.pid));
    }, 50);
    try {
      pump();
      const bystander = await openRawAgentLink(coordinator.wsUrl, TEST_TOKENS.agentA.token);
      const served = await bystander.request(1, 'acquire', 'bystander', { requestId: 'bystander' });
      // The flooding link does not read, so it cannot see the close: the coordinator's log says it
      const slowReader = await coordinator.waitForLog(
        (line) => line.msg === 'agent link: slow reader disconnected',
        60_000,
      );
      const bystanderAfter = await bystander.request(2, 'renew', 'bystander', {
        requestId: 'bystander-renew',
        fence: (served.body as { grant: { fence: number } }).grant.fence,
      });
      console.log(
        `flood: ${sent} frames sent by the close (code ${String(slowReader.code)}); coordinator RSS ${Math.round(rssBeforeKib / 1024)} MiB before, peak ${Math.round(peakKib / 1024)} MiB`,
      );
      expect(served.status).toBe(200);
      expect(bystanderAfter.status).toBe(200);
      expect(slowReader.code).toBe(1008);
      expect(peakKib - rssBeforeKib).toBeLessThan(256 * 1024);
      flood.socket.terminate();
      await bystander.close();
    } finally {
      clearInterval(sampler);
    }
  }, 120_000);
});
