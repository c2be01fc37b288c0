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
import { openStream, type StreamClient } from '../support/stream-client.js';
import { bySize, pause, reportFigures, PROBE_START_TIMEOUT_MILLIS } from './support/probe-settings.js';
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
      const agents = PROBE_AGENT_IDS.map(async (holderId, index) => {
        for (let n = 0; !stopping; n += 1) {
          // Long ids make large frames, so the stalled sockets' kernel buffers fill with fewer events.
          const resource = `slow-${holderId}-${n}-`.padEnd(200, 'x');
          const grant = await call<{ grant: { fence: number } }>(app.url, 'POST', `/v1/leases/${resource}/acquire`, {
            token: PROBE_AGENT_TOKENS[index]!,
            json: { requestId: resource },
          });
          if (grant.status !== 200) throw new Error(`acquire answered ${grant.status}: ${grant.text}`);
          await call(app.url, 'POST', `/v1/leases/${resource}/release`, {
            token: PROBE_AGENT_TOKENS[index]!,
            json: { fence: grant.body.grant.fence },
          });
          events += 2;
        }
      });
      let peakRss = baselineRss;
      const sampleRss = async (): Promise<void> => {
        peakRss = Math.max(peakRss, await metric('process_resident_memory_bytes'));
      };
      let disconnects = 0;
      while (disconnects < STALLED_VIEWERS) {
        await pause(250);
        await sampleRss();
        disconnects = await metric('lease_fence_stream_slow_consumer_disconnects_total');
      }

      // Then the server logged each disconnection with the position to resume from
      const logged = app.logs.filter((l) => l.msg === 'stream: slow consumer disconnected');
      expect(logged).toHaveLength(STALLED_VIEWERS);
      for (const line of logged) expect(line.position).toEqual(expect.any(Number));
      // And each stalled viewer, reading again, has a gap-free prefix of events followed by `closing`
      // (slow-consumer) and a 1013 close, or, if it came back after the server's close grace (5 s)
      // had run out, a destroyed socket (1006): the frames after the bound were never sent.
      const closes = await Promise.all(
        stalled.map(async (stream) => {
          stream.resume();
          return stream.closed;
        }),
      );
      let reasonsDelivered = 0;
      for (const [index, stream] of stalled.entries()) {
        const positions = positionsOf(stream);
        expect(positions).toEqual(Array.from({ length: positions.length }, (_, i) => positions[0]! + i));
        if (closes[index]!.code === 1006) continue;
        expect(closes[index]!.code).toBe(1013);
        expect(stream.frames.at(-1)).toEqual({ type: 'closing', reason: 'slow-consumer', position: positions.at(-1) });
        reasonsDelivered += 1;
      }

      // And the load goes on without them
      const eventsAtDisconnects = events;
      while (events < eventsAtDisconnects + EVENTS_AFTER_DISCONNECTS) {
        await pause(250);
        await sampleRss();
      }
      stopping = true;
      await Promise.all(agents);

      // And the reading viewer is still connected and has every event up to the head, in order
      const head = (await call<{ head: number }>(app.url, 'GET', '/v1/events?limit=1', { token: PROBE_TOKENS.viewer }))
        .body.head;
      await reading.waitFor((f) => f.type === 'event' && f.position === head, 30_000);
      expect(positionsOf(reading)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
      await reading.close();

      // And the coordinator's memory stayed within the stream's bound plus the allowance
      const bound =
        STALLED_VIEWERS * (MAX_BUFFERED_BYTES + FRAME_BYTES) + FANOUT_FRAMES * FRAME_BYTES + RSS_ALLOWANCE_BYTES;
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
      expect(disconnects).toBe(STALLED_VIEWERS);
      expect(peakRss - baselineRss).toBeLessThanOrEqual(bound);
    },
    bySize(240_000, 1_800_000),
  );
});
