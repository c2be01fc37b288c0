/**
 * `npm run bench:stream`: 200 WebSocket viewers on `/v1/stream` while an open-loop generator
 * offers 2 000 events/s (1 000 acquire + release pairs/s over HTTP, on the durable SQLite log).
 * Reports events/s offered vs appended (the log's head moved), whether the target was reached,
 * the delivery lag (viewer's receipt − the event's `recordedAtMillis`, stamped when the append was
 * made: so fsync + fan-out + the viewer's turn) of every event at every viewer, gaps and
 * duplicates seen by viewers, slow-consumer disconnects, the server's CPU and memory
 * (`/proc/<pid>`), and this process's CPU (viewers + load) beside it, so the table says which
 * side is the limit.
 *
 * The viewers run in `--viewer-threads` worker threads (support/stream-viewers.worker.ts), the
 * load in one more (support/stream-load.worker.ts); all share the machine with the server.
 * Figures, not a test: nothing here asserts.
 * Options: `--viewers 200 --rate 2000 --seconds 10 --viewer-threads 2`.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine } from './support/bench-env.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf, memoryBytesOf, toMebibytes } from './support/proc-usage.js';
import { fixed, markdownTable } from './support/stats.js';
import type { StreamLoadOptions, StreamLoadProgress } from './support/stream-load.worker.js';
import type { StreamViewersOptions, ViewersReport } from './support/stream-viewers.worker.js';

const options = parseBenchArgs('stream', {
  viewers: { type: 'string', default: '200' },
  rate: { type: 'string', default: '2000' },
  seconds: { type: 'string', default: '10' },
  'viewer-threads': { type: 'string', default: '2' },
});
const VIEWERS = Number(options.viewers);
const EVENTS_PER_SECOND = Number(options.rate);
const SECONDS = Number(options.seconds);
const VIEWER_THREADS = Math.max(1, Math.min(VIEWERS, Number(options['viewer-threads'])));
const WARM_UP_SECONDS = 1;
const LOAD_AGENTS = 16; // holders the load rotates over
const DRAIN_TIMEOUT_MILLIS = 15_000;
/** The offered rate counts as reached when the appended rate is within 2 % of it. */
const REACHED_FRACTION = 0.98;

/** Busy and total jiffies of the whole machine (`/proc/stat`, all cores), to tell a saturated or shared machine. */
function machineJiffies(): { busy: number; total: number } {
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: total - idle, total };
}

/** One worker thread of viewers, and its latest report. */
class ViewerThread {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  private pendingReport: ((report: ViewersReport) => void) | undefined;

  constructor(options: StreamViewersOptions) {
    this.worker = new Worker(new URL('./support/stream-viewers.worker.js', import.meta.url), { workerData: options });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (message: { type: 'ready' } | ViewersReport) => {
        if (message.type === 'ready') resolve();
        else this.pendingReport?.(message);
      });
      this.worker.once('error', reject);
    });
  }

  post(message: { type: 'measure'; afterPosition: number } | { type: 'window-end' | 'close' }): void {
    this.worker.postMessage(message);
  }

  report(): Promise<ViewersReport> {
    return new Promise((resolve) => {
      this.pendingReport = resolve;
      this.worker.postMessage({ type: 'report' });
    });
  }
}

/** The log's head (`GET /v1/events?limit=1`). */
function logHead(baseUrl: URL, viewerToken: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    http
      .get(
        {
          host: baseUrl.hostname,
          port: baseUrl.port,
          path: '/v1/events?limit=1',
          headers: { authorization: `Bearer ${viewerToken}` },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.once('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString()) as { head: number }).head));
        },
      )
      .once('error', reject);
  });
}

/** The `p`-quantile of a 1 ms histogram (nearest rank), or `NaN` when empty. */
function histogramQuantile(counts: Uint32Array, total: number, p: number): number {
  const rank = Math.ceil(p * total);
  let seen = 0;
  for (let millis = 0; millis < counts.length; millis += 1) {
    seen += counts[millis]!;
    if (seen >= rank && rank > 0) return millis;
  }
  return Number.NaN;
}

const work = await createTempDir('lease-fence-bench-stream-');
const tokens = createBenchTokens(LOAD_AGENTS);
const tokensFile = await writeTokensFile(work, tokens.entries);
const coordinator = await startBenchCoordinator({ dataDir: work, tokensFile });
try {
  const url = new URL(coordinator.url);
  const threads = Array.from(
    { length: VIEWER_THREADS },
    (_, i) =>
      new ViewerThread({
        wsUrl: coordinator.wsUrl,
        token: tokens.viewer,
        viewers: Math.floor(VIEWERS / VIEWER_THREADS) + (i < VIEWERS % VIEWER_THREADS ? 1 : 0),
      }),
  );
  await Promise.all(threads.map((thread) => thread.ready));
  console.error(
    `bench:stream: ${VIEWERS} viewers in ${VIEWER_THREADS} threads caught up; offering ${EVENTS_PER_SECOND} events/s for ${WARM_UP_SECONDS} + ${SECONDS} s`,
  );

  let load: StreamLoadProgress = {
    offeredPairs: 0,
    completedPairs: 0,
    offeredEvents: 0,
    appendedEvents: 0,
    errors: 0,
    errorSamples: [],
    inFlight: 0,
    maxIssueDelayMillis: 0,
    done: false,
  };
  const loadWorker = new Worker(new URL('./support/stream-load.worker.js', import.meta.url), {
    workerData: {
      url: coordinator.url,
      agentTokens: tokens.agents,
      eventsPerSecond: EVENTS_PER_SECOND,
    } satisfies StreamLoadOptions,
  });
  const loadDone = new Promise<void>((resolve, reject) => {
    loadWorker.on('message', (progress: StreamLoadProgress) => {
      load = progress;
      if (progress.done) resolve();
    });
    loadWorker.once('error', reject);
  });

  // Warm-up, then the measured window (CPU of the server, of this process and of the machine; server memory sampled).
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_SECONDS * 1000));
  const head0 = await logHead(url, tokens.viewer);
  for (const thread of threads) thread.post({ type: 'measure', afterPosition: head0 });
  const offered0 = load.offeredPairs;
  const serverCpu0 = cpuSecondsOf(coordinator.pid) ?? Number.NaN;
  const benchCpu0 = process.cpuUsage();
  const machine0 = machineJiffies();
  const started = performance.now();
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(memoryBytesOf(coordinator.pid, 'VmRSS') ?? Number.NaN), 200);
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const head1 = await logHead(url, tokens.viewer);
  for (const thread of threads) thread.post({ type: 'window-end' });
  const windowSeconds = (performance.now() - started) / 1000;
  const offeredInWindow = load.offeredPairs - offered0;
  const serverCpu = ((cpuSecondsOf(coordinator.pid) ?? Number.NaN) - serverCpu0) / windowSeconds;
  const benchCpuUsage = process.cpuUsage(benchCpu0);
  const benchCpu = (benchCpuUsage.user + benchCpuUsage.system) / 1e6 / windowSeconds;
  const machine1 = machineJiffies();
  const machineBusy = (machine1.busy - machine0.busy) / (machine1.total - machine0.total);
  const machineBusyCores = machineBusy * availableParallelism();
  clearInterval(sampler);
  loadWorker.postMessage('stop');
  await loadDone;
  await loadWorker.terminate();

  // Drain: how long until every viewer still connected has the head.
  const head = await logHead(url, tokens.viewer);
  const drainStarted = performance.now();
  let reports = await Promise.all(threads.map((thread) => thread.report()));
  const pending = (): boolean =>
    reports.some((r) => r.lastPositions.some((position) => position < head)) &&
    performance.now() - drainStarted < DRAIN_TIMEOUT_MILLIS;
  while (pending()) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    reports = await Promise.all(threads.map((thread) => thread.report()));
  }
  const drainMillis = performance.now() - drainStarted;
  const peak = memoryBytesOf(coordinator.pid, 'VmHWM');
  for (const thread of threads) thread.post({ type: 'close' });
  await Promise.all(threads.map((thread) => thread.worker.terminate()));

  const lagCounts = new Uint32Array(reports[0]!.lagCounts.length);
  for (const report of reports)
    report.lagCounts.forEach((count, millis) => {
      lagCounts[millis]! += count;
    });
  const lagSamples = lagCounts.reduce((a, b) => a + b, 0);
  const closed = reports.flatMap((r) => r.closed);
  const slowConsumers = closed.filter((reason) => reason.includes('slow-consumer')).length;
  const behind =
    reports.reduce((n, r) => n + r.lastPositions.filter((position) => position < head).length, 0) - closed.length;
  const offeredPerSecond = (offeredInWindow * 2) / windowSeconds;
  const appendedPerSecond = (head1 - head0) / windowSeconds;
  const reached = appendedPerSecond >= REACHED_FRACTION * EVENTS_PER_SECOND;

  console.log(`\n## bench:stream: ${machineLine()}`);
  console.log(
    `${VIEWERS} viewers in ${VIEWER_THREADS} worker threads, open-loop load offering ${EVENTS_PER_SECOND} events/s (acquire + release pairs over HTTP), SQLite log synchronous=FULL, ${SECONDS} s measured after ${WARM_UP_SECONDS} s; viewers, load and server on this machine\n`,
  );
  const rssFinite = rss.filter(Number.isFinite);
  console.log(
    markdownTable(
      [
        'viewers',
        'target events/s',
        'offered events/s',
        'appended events/s',
        'target reached',
        'frames/s delivered (all viewers)',
        'lag p50 ms',
        'lag p99 ms',
        'lag max ms',
        'drain after load ms',
        'server CPU cores',
        'bench CPU cores (viewers + load)',
        'machine busy cores (other processes + kernel)',
        'server RSS mean / max / peak MiB',
        'slow-consumer disconnects',
        'gaps / duplicates',
        'behind at end',
        'load errors',
      ],
      [
        [
          String(VIEWERS),
          String(EVENTS_PER_SECOND),
          fixed(offeredPerSecond, 0),
          fixed(appendedPerSecond, 0),
          reached ? 'yes' : 'no',
          fixed(reports.reduce((n, r) => n + r.framesInWindow, 0) / windowSeconds, 0),
          fixed(histogramQuantile(lagCounts, lagSamples, 0.5), 0),
          fixed(histogramQuantile(lagCounts, lagSamples, 0.99), 0),
          fixed(Math.max(...reports.map((r) => r.lagMaxMillis)), 0),
          fixed(drainMillis, 0),
          fixed(serverCpu, 2),
          fixed(benchCpu, 2),
          `${fixed(machineBusyCores, 2)} (${fixed(machineBusyCores - serverCpu - benchCpu, 2)})`,
          `${fixed(toMebibytes(rssFinite.reduce((a, b) => a + b, 0) / rssFinite.length), 0)} / ${fixed(toMebibytes(Math.max(...rssFinite)), 0)} / ${fixed(toMebibytes(peak), 0)}`,
          String(slowConsumers),
          `${reports.reduce((n, r) => n + r.gaps, 0)} / ${reports.reduce((n, r) => n + r.duplicates, 0)}`,
          String(behind),
          String(load.errors),
        ],
      ],
    ),
  );
  console.log(
    `\noffered = pairs the open-loop generator issued in the window × 2; appended = the log's head moved (GET /v1/events) / window; ` +
      `target reached = appended ≥ ${REACHED_FRACTION * 100} % of the target. The generator issued its pairs at most ${fixed(load.maxIssueDelayMillis, 1)} ms late.`,
  );
  console.log(
    `machine busy = non-idle time of all ${availableParallelism()} cores (/proc/stat); the part in brackets is neither the server nor this process: ` +
      'other processes on the machine and kernel work not charged to either (e.g. loopback softirq).',
  );
  console.log(
    `lag = viewer receipt (Date.now()) − the event's recordedAtMillis (wall clock at append, before fsync), for EVERY event after position ${head0} at every viewer ` +
      `(${lagSamples} samples, through the drain). Expected frames/s if every viewer kept up: ${fixed(appendedPerSecond * VIEWERS, 0)}.`,
  );
  if (closed.length > 0) console.log(`viewers closed: ${closed.length}; first: ${closed[0]}`);
  if (load.errors > 0) {
    console.log(`load errors: ${load.errors} pairs failed; first reasons: ${load.errorSamples.join('; ')}`);
  }
} finally {
  await coordinator.stop();
  await removeTempDir(work);
}
