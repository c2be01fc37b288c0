/**
 * Probe: viewers that stop reading their WebSocket while eight agents keep the log busy. Each must
 * be disconnected with a reason (`closing`, `slow-consumer`, with its resume position, and 1013;
 * logged by the server), a
 * viewer that keeps reading must not be cut and must see every event in order, and the
 * coordinator's memory must stay bounded.
 *
 * The bound (what the stream promises): each live client holds at most
 * `LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES` of unsent frames plus the one frame that crossed it, and
 * the shared fan-out keeps at most 1 024 event frames; so N stalled viewers cost at most
 * N × (bound + one frame) + the fan-out's frames. The probe checks the coordinator's resident
 * memory (`process_resident_memory_bytes` at `/metrics`, sampled through the run) against that
 * bound plus a fixed allowance for the process's own growth under the load (`RSS_ALLOWANCE_BYTES`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { eventually } from '../support/eventually.js';
import { openStream, type StreamClient } from '../support/stream-client.js';
import { bySize, reportFigures, PROBE_START_TIMEOUT_MILLIS } from './support/probe-settings.js';
import { PROBE_AGENT_IDS, PROBE_AGENT_TOKENS, PROBE_TOKEN_ENTRIES, PROBE_TOKENS } from './support/probe-tokens.js';

/** Viewers that stop reading. */
const STALLED_VIEWERS = bySize(2, 32);
/** `LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES` for the run. */
const MAX_BUFFERED_BYTES = 256 * 1024;
/** Frames the fan-out keeps (stream.gateway.ts) and a generous size of one event frame. */
const FANOUT_FRAMES = 1_024;
const FRAME_BYTES = 2_048;
/** Growth of the process allowed besides the stream's buffers: heap and allocator slack under this load. */
const RSS_ALLOWANCE_BYTES = 96 * 1024 * 1024;
/** After the last stalled viewer is disconnected, keep the load on for this many more events. */
const EVENTS_AFTER_DISCONNECTS = bySize(1_000, 20_000);
/**
 * The agents' leases: far longer than the probe, so a release is never late however slowly a
 * loaded machine runs the agents (a late one would answer 410 and leave an expiry event behind).
 */
const LOAD_TTL_MILLIS = 3_600_000;
/** How often the probe reads `/metrics` while it waits (milliseconds). */
const SAMPLE_EVERY_MILLIS = 250;
/**
 * Deadlines of the probe's waits (milliseconds). They are failures with the state waited on, not
 * timing claims: filling the stalled viewers' socket buffers takes about 7 000 events, 20 s on a
 * quiet machine and over 2 minutes on 2 cores that other test suites load; the rest of the probe
 * is short. The test's timeout is their sum.
 */
const DISCONNECTS_DEADLINE_MILLIS = bySize(360_000, 1_200_000);
const LOAD_AFTER_DISCONNECTS_DEADLINE_MILLIS = bySize(120_000, 600_000);
const SETTLE_DEADLINE_MILLIS = 60_000;
const TEST_TIMEOUT_MILLIS =
  DISCONNECTS_DEADLINE_MILLIS + LOAD_AFTER_DISCONNECTS_DEADLINE_MILLIS + 4 * SETTLE_DEADLINE_MILLIS;

let app: RunningCoordinator;

beforeAll(async () => {
  app = await startCoordinator({
    tokens: PROBE_TOKEN_ENTRIES,
    env: {
      LEASE_FENCE_SQLITE_DURABILITY: 'normal',
      LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES: String(MAX_BUFFERED_BYTES),
      LEASE_FENCE_STREAM_PING_MILLIS: '600000',
    },
    startTimeoutMillis: PROBE_START_TIMEOUT_MILLIS,
  });
}, PROBE_START_TIMEOUT_MILLIS + 10_000);

afterAll(async () => {
  await app?.cleanup();
});

/** One gauge or counter read from `/metrics`. */
async function metric(name: string): Promise<number> {
  const reply = await call(app.url, 'GET', '/metrics', { token: PROBE_TOKENS.viewer });
  const line = reply.text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (line === undefined) throw new Error(`/metrics has no ${name}`);
  return Number(line.split(' ').at(-1));
}

const positionsOf = (stream: StreamClient): number[] =>
  stream.frames.flatMap((f) => (f.type === 'event' ? [f.position] : []));

/** `count` consecutive positions from `first`. */
const consecutive = (first: number, count: number): number[] => Array.from({ length: count }, (_, i) => first + i);

/** The server's log line of each slow-consumer disconnection. */
const SLOW_CONSUMER_LOGGED = 'stream: slow consumer disconnected';
const DISCONNECTS_METRIC = 'lease_fence_stream_slow_consumer_disconnects_total';

/** Resolves with `promise`, or rejects with `what` once `timeoutMillis` have passed. */
async function within<T>(promise: Promise<T>, timeoutMillis: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), timeoutMillis);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('probe: a viewer that stops reading', () => {
  it(
    `disconnects ${STALLED_VIEWERS} stalled viewers with a reason under load, keeps a reading one, and stays within its memory bound`,
    async () => {
      // Given stalled viewers and one that keeps reading, all caught up
      const stalled = await Promise.all(
        Array.from({ length: STALLED_VIEWERS }, () => openStream(app.wsUrl, { token: PROBE_TOKENS.viewer })),
      );
      const reading = await openStream(app.wsUrl, { token: PROBE_TOKENS.viewer });
      await Promise.all([...stalled, reading].map((s) => s.waitFor((f) => f.type === 'caught-up')));
      for (const stream of stalled) stream.pause();
      const baselineRss = await metric('process_resident_memory_bytes');

      // When eight agents take and give back leases until every stalled viewer is disconnected, and then some more
      let stopping = false;
      let events = 0;
      /** The first error of an agent: a refused acquire or release, or a failed request. Every wait checks it. */
      let agentFailure: Error | undefined;
      const agents = PROBE_AGENT_IDS.map(async (holderId, index) => {
        const token = PROBE_AGENT_TOKENS[index]!;
        try {
          for (let n = 0; !stopping; n += 1) {
            // Long ids make large frames, so the stalled sockets' kernel buffers fill with fewer events.
            const resource = `slow-${holderId}-${n}-`.padEnd(200, 'x');
            const grant = await call<{ grant: { fence: number } }>(app.url, 'POST', `/v1/leases/${resource}/acquire`, {
              token,
              json: { requestId: resource, ttlMillis: LOAD_TTL_MILLIS },
            });
            if (grant.status !== 200) throw new Error(`${holderId}: acquire answered ${grant.status}: ${grant.text}`);
            events += 1;
            const release = await call(app.url, 'POST', `/v1/leases/${resource}/release`, {
              token,
              json: { fence: grant.body.grant.fence },
            });
            if (release.status !== 200)
              throw new Error(`${holderId}: release answered ${release.status}: ${release.text}`);
            events += 1;
          }
        } catch (error) {
          // Kept, not thrown: the probe fails on it at its next check, and after a failure of the
          // probe (the coordinator is then killed under the agents) nothing is left unhandled.
          agentFailure ??= error instanceof Error ? error : new Error(String(error));
        }
      });
      const bound =
        STALLED_VIEWERS * (MAX_BUFFERED_BYTES + FRAME_BYTES) + FANOUT_FRAMES * FRAME_BYTES + RSS_ALLOWANCE_BYTES;
      let peakRss = baselineRss;
      let disconnects = 0;
      /** One sample while waiting: records the resident memory; fails on an agent's error or memory beyond the bound. */
      const sample = async (): Promise<void> => {
        if (agentFailure !== undefined) throw agentFailure;
        peakRss = Math.max(peakRss, await metric('process_resident_memory_bytes'));
        expect(peakRss - baselineRss, `resident memory growth beyond the bound: ${state()}`).toBeLessThanOrEqual(bound);
      };
      const state = (): string =>
        `${disconnects} of ${STALLED_VIEWERS} stalled viewers disconnected, ${events} events, ` +
        `${app.logs.filter((l) => l.msg === SLOW_CONSUMER_LOGGED).length} disconnections logged, ` +
        `resident memory grew ${((peakRss - baselineRss) / 2 ** 20).toFixed(1)} MiB, ` +
        `the reading viewer has ${positionsOf(reading).length} events`;
      try {
        await eventually(
          () => `after ${DISCONNECTS_DEADLINE_MILLIS} ms of load: ${state()}`,
          async () => {
            await sample();
            disconnects = await metric(DISCONNECTS_METRIC);
            return disconnects >= STALLED_VIEWERS;
          },
          DISCONNECTS_DEADLINE_MILLIS,
          SAMPLE_EVERY_MILLIS,
        );

        // Then the server logged each disconnection with the position to resume from. The line comes
        // through the coordinator's asynchronous log destination and a pipe, the metric through HTTP:
        // the metric can be read before the test has the line.
        await eventually(
          () => `the server's log lines of the disconnections: ${state()}`,
          () => app.logs.filter((l) => l.msg === SLOW_CONSUMER_LOGGED).length >= STALLED_VIEWERS,
          SETTLE_DEADLINE_MILLIS,
        );
        const logged = app.logs.filter((l) => l.msg === SLOW_CONSUMER_LOGGED);
        expect(logged).toHaveLength(STALLED_VIEWERS);
        for (const line of logged) expect(line.position).toEqual(expect.any(Number));
        // And each stalled viewer, reading again, has a gap-free prefix of events followed by `closing`
        // (slow-consumer, with the logged resume position) and a 1013 close, or, if it came back after
        // the server's close grace (5 s) had run out, a destroyed socket (1006): the frames after the
        // bound were never sent.
        const closes = await within(
          Promise.all(
            stalled.map(async (stream) => {
              stream.resume();
              return stream.closed;
            }),
          ),
          SETTLE_DEADLINE_MILLIS,
          () => `stalled viewers still open ${SETTLE_DEADLINE_MILLIS} ms after they read again: ${state()}`,
        );
        let reasonsDelivered = 0;
        for (const [index, stream] of stalled.entries()) {
          const positions = positionsOf(stream);
          expect(positions).toEqual(consecutive(positions[0]!, positions.length));
          if (closes[index]!.code === 1006) continue;
          expect(closes[index]!.code).toBe(1013);
          expect(stream.frames.at(-1)).toEqual({
            type: 'closing',
            reason: 'slow-consumer',
            position: positions.at(-1),
          });
          expect(logged.map((l) => l.position)).toContain(positions.at(-1));
          reasonsDelivered += 1;
        }

        // And the load goes on without them
        const eventsAtDisconnects = events;
        await eventually(
          () => `${EVENTS_AFTER_DISCONNECTS} more events: ${state()}`,
          async () => {
            await sample();
            return events >= eventsAtDisconnects + EVENTS_AFTER_DISCONNECTS;
          },
          LOAD_AFTER_DISCONNECTS_DEADLINE_MILLIS,
          SAMPLE_EVERY_MILLIS,
        );
        stopping = true;
        await within(Promise.all(agents), SETTLE_DEADLINE_MILLIS, () => `the agents' last requests: ${state()}`);
        if (agentFailure !== undefined) throw agentFailure;

        // And the reading viewer is still connected and has every event up to the head, in order
        const head = (
          await call<{ head: number }>(app.url, 'GET', '/v1/events?limit=1', { token: PROBE_TOKENS.viewer })
        ).body.head;
        await reading.waitFor((f) => f.type === 'event' && f.position === head, SETTLE_DEADLINE_MILLIS);
        const readPositions = positionsOf(reading);
        expect(readPositions).toEqual(consecutive(1, readPositions.length));
        await reading.close();
        // And no other viewer was disconnected, the reading one included
        expect(await metric(DISCONNECTS_METRIC)).toBe(STALLED_VIEWERS);
        expect(app.logs.filter((l) => l.msg === SLOW_CONSUMER_LOGGED)).toHaveLength(STALLED_VIEWERS);

        // And the coordinator's memory stayed within the stream's bound plus the allowance
        reportFigures('slow-viewer', {
          stalledViewers: STALLED_VIEWERS,
          maxBufferedBytes: MAX_BUFFERED_BYTES,
          disconnects,
          reasonsDelivered,
          events: head,
          baselineRssMiB: (baselineRss / 2 ** 20).toFixed(1),
          peakRssGrowthMiB: ((peakRss - baselineRss) / 2 ** 20).toFixed(1),
          boundMiB: (bound / 2 ** 20).toFixed(1),
        });
        expect(peakRss - baselineRss).toBeLessThanOrEqual(bound);
      } finally {
        stopping = true; // on a failure the agents stop by themselves (their errors are kept, not thrown)
      }
    },
    TEST_TIMEOUT_MILLIS,
  );
});
