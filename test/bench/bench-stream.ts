/**
 * `npm run bench:stream`: 200 WebSocket viewers on `/v1/stream` while the log grows by 2 000
 * events/s (1 000 acquire + release pairs/s over HTTP, on the durable SQLite log). Reports the
 * delivery lag (viewer's receipt − the event's `recordedAtMillis`, stamped when the append was
 * made: so fsync + fan-out + the viewer's turn), the events each viewer got, slow-consumer
 * disconnects, and the server's CPU and memory (`/proc/<pid>`).
 *
 * The viewers run in this process, the load in a worker thread of it (its own event loop), and
 * both share the 2 cores with the server, so the figures are for this machine as a whole. Viewers read `position` and
 * `recordedAtMillis` without parsing the rest of the frame, to keep their cost low.
 * Figures, not a test: nothing here asserts. Options: `--viewers 200 --rate 2000 --seconds 10`.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { machineLine } from './support/bench-env.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf, memoryBytesOf, toMebibytes } from './support/proc-usage.js';
import { fixed, markdownTable } from './support/stats.js';
import type { StreamLoadOptions } from './support/stream-load.worker.js';

const { values: options } = parseArgs({
  options: { viewers: { type: 'string', default: '200' }, rate: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '10' } },
});
const VIEWERS = Number(options.viewers);
const EVENTS_PER_SECOND = Number(options.rate);
const SECONDS = Number(options.seconds);
const WARM_UP_SECONDS = 1;
const LOAD_AGENTS = 16; // concurrent acquire → release loops in the load worker, each on its own resource
const DRAIN_TIMEOUT_MILLIS = 15_000;
const MAX_LAG_MILLIS = 60_000;

/** Delivery lag histogram with 1 ms buckets (cheap to record 400 000 samples a second). */
class LagHistogram {
  private readonly counts = new Uint32Array(MAX_LAG_MILLIS + 1);
  count = 0;
  max = 0;
  record(lagMillis: number): void {
    const bucket = Math.min(MAX_LAG_MILLIS, Math.max(0, Math.round(lagMillis)));
    this.counts[bucket]! += 1;
    this.count += 1;
    if (lagMillis > this.max) this.max = lagMillis;
  }
  quantile(p: number): number {
    const rank = Math.ceil(p * this.count);
    let seen = 0;
    for (let millis = 0; millis < this.counts.length; millis += 1) {
      seen += this.counts[millis]!;
      if (seen >= rank && rank > 0) return millis;
    }
    return Number.NaN;
  }
}

const POSITION = /"position":(\d+)/;
const RECORDED_AT = /"recordedAtMillis":(\d+(?:\.\d+)?)/;

/** One viewer: connects, waits for `caught-up`, then records the lag of every live event. */
class Viewer {
  lastPosition = 0;
  received = 0;
  closedBy: string | undefined;
  private socket!: WebSocket;
  constructor(private readonly lag: LagHistogram, private readonly measuring: () => boolean) {}

  connect(wsUrl: string, token: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket = new WebSocket(`${wsUrl}/v1/stream?after=0&token=${encodeURIComponent(token)}`);
      this.socket.once('error', reject);
      this.socket.on('close', (code, reason) => {
        this.closedBy ??= `${code} ${reason.toString()}`;
      });
      this.socket.on('message', (data: Buffer) => {
        const text = data.toString();
        if (text.startsWith('{"type":"event"')) {
          const now = Date.now();
          this.lastPosition = Number(POSITION.exec(text)?.[1] ?? this.lastPosition);
          this.received += 1;
          if (this.measuring()) this.lag.record(now - Number(RECORDED_AT.exec(text)?.[1] ?? now));
        } else if (text.startsWith('{"type":"caught-up"')) {
          resolve();
        } else if (text.startsWith('{"type":"closing"')) {
          this.closedBy = text;
        }
      });
    });
  }

  close(): void {
    this.socket.terminate();
  }
}

const work = await createTempDir('lease-fence-bench-stream-');
const tokens = createBenchTokens(LOAD_AGENTS);
const tokensFile = await writeTokensFile(work, tokens.entries);
const coordinator = await startBenchCoordinator({ dataDir: work, tokensFile });
try {
  const url = new URL(coordinator.url);
  const lag = new LagHistogram();
  let measuring = false;
  const viewers = Array.from({ length: VIEWERS }, () => new Viewer(lag, () => measuring));
  // Connect in groups, so the upgrade requests do not all land in one turn.
  for (let i = 0; i < viewers.length; i += 20) await Promise.all(viewers.slice(i, i + 20).map((v) => v.connect(coordinator.wsUrl, tokens.viewer)));
  console.error(`bench:stream: ${VIEWERS} viewers caught up; loading ${EVENTS_PER_SECOND} events/s for ${WARM_UP_SECONDS} + ${SECONDS} s`);

  // Load, in a worker thread (its own event loop): acquire + release pairs paced to the target rate.
  let pairs = 0;
  let loadErrors = 0;
  const load = new Worker(new URL('./support/stream-load.worker.js', import.meta.url), {
    workerData: { url: coordinator.url, agentTokens: tokens.agents, eventsPerSecond: EVENTS_PER_SECOND } satisfies StreamLoadOptions,
  });
  const loadDone = new Promise<void>((resolve, reject) => {
    load.on('message', (progress: { pairs: number; errors: number; done: boolean }) => {
      pairs = progress.pairs;
      loadErrors = progress.errors;
      if (progress.done) resolve();
    });
    load.once('error', reject);
  });

  // Warm-up, then the measured window (server CPU and memory sampled).
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_SECONDS * 1000));
  measuring = true;
  const startPosition = Math.min(...viewers.map((v) => v.lastPosition));
  const received0 = viewers.reduce((n, v) => n + v.received, 0);
  const pairs0 = pairs;
  const cpu0 = cpuSecondsOf(coordinator.pid) ?? Number.NaN;
  const started = performance.now();
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(memoryBytesOf(coordinator.pid, 'VmRSS') ?? Number.NaN), 200);
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const windowSeconds = (performance.now() - started) / 1000;
  const serverCpu = ((cpuSecondsOf(coordinator.pid) ?? Number.NaN) - cpu0) / windowSeconds;
  const pairsInWindow = pairs - pairs0;
  const receivedInWindow = viewers.reduce((n, v) => n + v.received, 0) - received0;
  load.postMessage('stop');
  await loadDone;
  await load.terminate();
  clearInterval(sampler);

  // Drain: how long until every viewer still connected has the head.
  const head = await new Promise<number>((resolve, reject) => {
    http.get({ host: url.hostname, port: url.port, path: '/v1/events?limit=1', headers: { authorization: `Bearer ${tokens.viewer}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.once('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString()) as { head: number }).head));
    }).once('error', reject);
  });
  const drainStarted = performance.now();
  while (viewers.some((v) => v.closedBy === undefined && v.lastPosition < head) && performance.now() - drainStarted < DRAIN_TIMEOUT_MILLIS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const drainMillis = performance.now() - drainStarted;
  measuring = false;
  const peak = memoryBytesOf(coordinator.pid, 'VmHWM');
  const disconnected = viewers.filter((v) => v.closedBy !== undefined);
  const behind = viewers.filter((v) => v.closedBy === undefined && v.lastPosition < head).length;
  for (const viewer of viewers) viewer.close();

  const eventsPerSecond = (pairsInWindow * 2) / windowSeconds;
  console.log(`\n## bench:stream: ${machineLine()}`);
  console.log(`${VIEWERS} viewers, target ${EVENTS_PER_SECOND} events/s (acquire + release pairs over HTTP), SQLite log synchronous=FULL, ${SECONDS} s measured after ${WARM_UP_SECONDS} s; viewers, load and server on this machine\n`);
  const rssFinite = rss.filter(Number.isFinite);
  console.log(markdownTable(
    ['viewers', 'events/s appended', 'frames/s delivered (all viewers)', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'drain after load ms', 'server CPU cores', 'server RSS mean / max / peak MiB', 'slow-consumer disconnects', 'behind at end', 'load errors'],
    [[
      String(VIEWERS),
      fixed(eventsPerSecond, 0),
      fixed(receivedInWindow / windowSeconds, 0),
      fixed(lag.quantile(0.5), 0),
      fixed(lag.quantile(0.99), 0),
      fixed(lag.max, 0),
      fixed(drainMillis, 0),
      fixed(serverCpu, 2),
      `${fixed(toMebibytes(rssFinite.reduce((a, b) => a + b, 0) / rssFinite.length), 0)} / ${fixed(toMebibytes(Math.max(...rssFinite)), 0)} / ${fixed(toMebibytes(peak), 0)}`,
      String(disconnected.length),
      String(behind),
      String(loadErrors),
    ]],
  ));
  console.log(`\nlag = viewer receipt (Date.now()) − the event's recordedAtMillis (wall clock at append, before fsync); ${lag.count} lag samples from position ${startPosition}. ` +
    `Expected frames/s if every viewer kept up: ${fixed(eventsPerSecond * VIEWERS, 0)}.`);
  if (disconnected.length > 0) console.log(`first disconnect: ${disconnected[0]!.closedBy}`);
} finally {
  await coordinator.stop();
  await removeTempDir(work);
}
