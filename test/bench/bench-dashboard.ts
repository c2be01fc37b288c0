/**
 * `npm run bench:dashboard`: the dashboard's two costs.
 *
 * 1. Fold: the time to fold 1 000 000 recorded events into the dashboard's view state with its
 *    own pure model (`foldEvents` of `@lease-fence/dashboard-model`). The events are a real log
 *    written through the coordinator (500 resources: grants, renewals, releases) and read back
 *    decoded, as `/v1/events` and the stream deliver them.
 * 2. The live dashboard in Chromium (Debian's, driven by playwright-core; headless, fresh temp
 *    profile): the built dashboard served by the coordinator while 500 resource lanes get
 *    2 000 events/s (acquire + release pairs over HTTP from a worker thread, paced, each pair waiting
 *    for its lane's previous one so the coordinator grants them all; offered and appended events
 *    per second are both printed): first paint after the
 *    first event frame, animation-frame gaps (p95, p99) following now and while dragging the lanes,
 *    event to pixel (p50, p95; see `support/dashboard-probe.ts`), main-thread busy share, and the
 *    JS heap's growth after GC over `--pause` seconds paused (extrapolated linearly to 10 minutes).
 *
 * `LEASE_FENCE_BENCH_SCREENSHOT=<file.png>` saves what the page showed at the end of the window.
 * `--cpu-prof DIR` records the page's main thread with Chromium's sampling profiler while it follows
 * now, writes `DIR/dashboard-live.cpuprofile` (open it in Chrome DevTools → Performance, or
 * speedscope) and prints the functions with the most self time.
 * `--trace DIR` records Chromium's timeline trace over the same window (tasks, style, layout, paint,
 * the compositor commit and the canvas handed to it) into `DIR/dashboard-live.trace.json`, for
 * DevTools → Performance (load profile) or ui.perfetto.dev: what the CPU profile calls `(program)`.
 * Figures, not a test: nothing here asserts. Options: `--events 1000000 --lanes 500 --rate 2000 --seconds 10 --preload 5 --pause 60 --cpu-prof DIR --trace DIR`.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { chromium, type CDPSession } from 'playwright-core';
import { foldEvents } from '@lease-fence/dashboard-model';
import type { RecordedEvent } from '@lease-fence/protocol';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import {
  DASHBOARD_PROBE_SCRIPT,
  quantile,
  readProbe,
  resetProbeScript,
  stopRecordingEventsScript,
} from './support/dashboard-probe.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf } from './support/proc-usage.js';
import { fixed, markdownTable, median } from './support/stats.js';
import type { StreamLoadOptions, StreamLoadProgress } from './support/stream-load.worker.js';
import { writeBenchLog } from './support/write-bench-log.js';

const options = parseBenchArgs('dashboard', {
  events: { type: 'string', default: '1000000' },
  lanes: { type: 'string', default: '500' },
  rate: { type: 'string', default: '2000' },
  seconds: { type: 'string', default: '10' },
  preload: { type: 'string', default: '5' },
  pause: { type: 'string', default: '60' },
  'cpu-prof': { type: 'string' },
  trace: { type: 'string' },
});
const EVENTS = Number(options.events);
const LANES = Number(options.lanes);
const RATE = Number(options.rate);
const SECONDS = Number(options.seconds);
const PRELOAD = Number(options.preload);
const PAUSE = Number(options.pause);
const CPU_PROFILE_DIR = options['cpu-prof'] === undefined ? undefined : resolve(options['cpu-prof']);
const TRACE_DIR = options.trace === undefined ? undefined : resolve(options.trace);
const LOAD_AGENTS = 20; // divides 500: each lane belongs to one agent, so acquires never contend
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Part 1: fold EVENTS events with the dashboard's model; median of 3. */
async function measureFold(work: string): Promise<string[][]> {
  const file = join(work, 'dashboard-fold.sqlite');
  const written = await writeBenchLog(file, {
    events: EVENTS,
    resources: LANES,
    snapshotEvery: Number.MAX_SAFE_INTEGER,
  });
  const log = await openSqliteEventLog({ file, durability: 'normal' });
  const events: RecordedEvent[] = [];
  for await (const recorded of log.read({ from: 1 })) events.push(recorded);
  await log.close();
  console.error(`bench:dashboard: folding ${events.length} events (3×)`);
  const runs: number[] = [];
  let lanes = 0;
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    const state = foldEvents(events);
    runs.push(performance.now() - started);
    lanes = state.lanes.size;
  }
  const millis = median(runs);
  return [
    [
      fixed(written, 0),
      String(lanes),
      fixed(millis, 0),
      fixed((events.length / millis) * 1000, 0),
      fixed((millis * 1e6) / events.length, 0),
    ],
  ];
}

/** What part 2 measured. */
interface LiveFigures {
  readonly live: string[][];
  readonly pause: string[][];
}

/** Main-thread busy share and heap of the page, from CDP `Performance.getMetrics` (seconds, bytes). */
async function pageMetrics(cdp: CDPSession): Promise<Record<string, number>> {
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

/** The parts of a CDP `Profiler.Profile` that {@link topSelfTime} reads. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/**
 * Self time per function of a sampled profile, largest first: each sample's interval (the next
 * sample's `timeDeltas`, microseconds) goes to the node it sampled, summed by function name and location.
 */
function topSelfTime(profile: CpuProfile, count: number): string[][] {
  const nameOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url === '' ? '' : ` ${url.slice(url.lastIndexOf('/') + 1)}:${lineNumber + 1}`;
    nameOf.set(node.id, `${functionName === '' ? '(anonymous)' : functionName}${file}`);
  }
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const selfMicros = new Map<string, number>();
  let totalMicros = 0;
  for (let i = 0; i < samples.length; i += 1) {
    const micros = deltas[i + 1] ?? 0;
    const name = nameOf.get(samples[i] ?? -1) ?? '?';
    selfMicros.set(name, (selfMicros.get(name) ?? 0) + micros);
    totalMicros += micros;
  }
  return [...selfMicros.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => [fixed(micros / 1000, 0), fixed((micros / totalMicros) * 100, 1), name]);
}

/** Chromium's trace categories of DevTools' Performance panel (tasks, layout, paint, the compositor's canvas hand-over). */
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'blink',
  'cc',
  'gpu',
  'toplevel',
  'v8.execute',
].join(',');

/** Ends the trace started on `cdp` and writes it to `file` (the JSON DevTools → Performance opens). */
async function writeTrace(cdp: CDPSession, file: string): Promise<void> {
  const complete = new Promise<string>((done) =>
    cdp.once('Tracing.tracingComplete', (event: { stream?: string }) => done(event.stream ?? '')),
  );
  await cdp.send('Tracing.end');
  const stream = await complete;
  const chunks: Buffer[] = [];
  for (;;) {
    const { data, eof, base64Encoded } = (await cdp.send('IO.read', { handle: stream })) as {
      data: string;
      eof: boolean;
      base64Encoded?: boolean;
    };
    chunks.push(Buffer.from(data, base64Encoded === true ? 'base64' : 'utf8')); // a chunk may end mid-character
    if (eof) break;
  }
  await cdp.send('IO.close', { handle: stream });
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat(chunks));
}

/** JS heap after a full garbage collection, bytes. */
async function heapAfterGc(cdp: CDPSession): Promise<number> {
  await cdp.send('HeapProfiler.collectGarbage');
  return (await pageMetrics(cdp))['JSHeapUsedSize'] ?? Number.NaN;
}

/**
 * Part 2: the live dashboard in Chromium under load: frame gaps while following now and while
 * panning, event to pixel, first paint after the first event frame, then heap growth while paused.
 */
async function measureLive(work: string): Promise<LiveFigures> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  // LEASE_FENCE_BENCH_DASHBOARD_DIR: another build to measure (e.g. an older one, for a before/after).
  const dashboardDir = process.env.LEASE_FENCE_BENCH_DASHBOARD_DIR ?? join(repoRoot(), 'apps', 'dashboard', 'dist');
  const tokens = createBenchTokens(LOAD_AGENTS);
  const dataDir = join(work, 'live');
  const coordinator = await startBenchCoordinator({
    dataDir,
    tokensFile: await writeTokensFile(work, tokens.entries),
    env: { LEASE_FENCE_DASHBOARD_DIR: dashboardDir },
  });
  const profile = await createTempDir('lease-fence-bench-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: { width: 1600, height: 1000 },
  });
  let load: Worker | undefined;
  try {
    // The log has PRELOAD seconds of load before the page opens, so the first paint folds a catch-up.
    load = new Worker(new URL('./support/stream-load.worker.js', import.meta.url), {
      workerData: {
        url: coordinator.url,
        agentTokens: tokens.agents,
        eventsPerSecond: RATE,
        resources: LANES,
        onePairPerResource: true,
      } satisfies StreamLoadOptions,
    });
    let lastProgress: StreamLoadProgress | undefined;
    load.on('message', (progress: StreamLoadProgress) => {
      lastProgress = progress;
    });
    await new Promise((resolve) => setTimeout(resolve, PRELOAD * 1000)); // load runs meanwhile: a duration, not a synchronisation
    const page = context.pages()[0] ?? (await context.newPage());
    await page.addInitScript({ content: DASHBOARD_PROBE_SCRIPT });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const evaluate = (script: string): Promise<unknown> => page.evaluate(script);
    await page.goto(`${coordinator.url}/?token=${encodeURIComponent(tokens.viewer)}`);
    await page.waitForFunction(
      () => {
        const probe = (globalThis as unknown as { __leaseFenceBenchProbe?: { firstPaintAtMillis: number | null } })
          .__leaseFenceBenchProbe;
        return probe?.firstPaintAtMillis !== null && probe?.firstPaintAtMillis !== undefined;
      },
      undefined,
      { timeout: 120_000 },
    );
    const positionAtPaint = Number(await page.locator('[data-testid="lanes-canvas"]').getAttribute('data-position'));
    const opened = await readProbe(evaluate);
    const firstPaintMillis = (opened.firstPaintAtMillis ?? Number.NaN) - (opened.firstEventAtMillis ?? Number.NaN);
    await page.waitForTimeout(3_000); // every lane has had events by now (one pair per lane per 0.5 s at 2 000 events/s)

    // Following now, under load.
    await evaluate(resetProbeScript);
    const load0 = lastProgress;
    const cpu0 = cpuSecondsOf(coordinator.pid) ?? Number.NaN;
    const m0 = await pageMetrics(cdp);
    if (CPU_PROFILE_DIR !== undefined) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 }); // microseconds
      await cdp.send('Profiler.start');
    }
    if (TRACE_DIR !== undefined)
      await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES, transferMode: 'ReturnAsStream' });
    const started = performance.now();
    await page.waitForTimeout(SECONDS * 1000);
    const seconds = (performance.now() - started) / 1000;
    const m1 = await pageMetrics(cdp);
    if (TRACE_DIR !== undefined) {
      const file = join(TRACE_DIR, 'dashboard-live.trace.json');
      await writeTrace(cdp, file);
      console.error(`bench:dashboard: the page's trace while following now: ${file}`);
    }
    if (CPU_PROFILE_DIR !== undefined) {
      const { profile } = (await cdp.send('Profiler.stop')) as { profile: CpuProfile };
      mkdirSync(CPU_PROFILE_DIR, { recursive: true });
      const file = join(CPU_PROFILE_DIR, 'dashboard-live.cpuprofile');
      writeFileSync(file, JSON.stringify(profile));
      console.error(`bench:dashboard: the page's profile while following now: ${file}`);
      console.error(markdownTable(['self ms', 'self %', 'function'], topSelfTime(profile, 25)));
    }
    const live = await readProbe(evaluate);
    const load1 = lastProgress;
    const perSecond = (count: (p: StreamLoadProgress) => number): number =>
      load0 === undefined || load1 === undefined ? Number.NaN : (count(load1) - count(load0)) / seconds;
    const offeredPerSecond = perSecond((p) => p.offeredEvents);
    const appendedPerSecond = perSecond((p) => p.appendedEvents);
    console.error(
      `bench:dashboard: load while following now: ${fixed(offeredPerSecond, 0)} events/s offered, ${fixed(appendedPerSecond, 0)} appended; ` +
        `${load1?.errors ?? 0} pairs failed since the start${load1 === undefined || load1.errors === 0 ? '' : ` (${load1.errorSamples.join('; ')})`}, ${load1?.inFlight ?? 0} in flight`,
    );
    const serverCpu = ((cpuSecondsOf(coordinator.pid) ?? Number.NaN) - cpu0) / seconds;
    const busy =
      ((m1['TaskDuration'] ?? Number.NaN) - (m0['TaskDuration'] ?? Number.NaN)) /
      ((m1['Timestamp'] ?? Number.NaN) - (m0['Timestamp'] ?? Number.NaN));
    const screenshot = process.env.LEASE_FENCE_BENCH_SCREENSHOT;
    if (screenshot !== undefined && screenshot !== '') await page.screenshot({ path: screenshot }); // to see what was drawn

    // Panning: drag the lanes back and forth for SECONDS (still under load).
    const box = await page.locator('[data-testid="lanes-canvas"]').boundingBox();
    if (box === null) throw new Error('bench:dashboard: the lanes canvas is not visible');
    const y = box.y + Math.min(120, box.height / 2);
    const x0 = box.x + box.width / 2;
    await page.mouse.move(x0, y);
    await page.mouse.down();
    await evaluate(resetProbeScript);
    for (let k = 0, until = performance.now() + SECONDS * 1000; performance.now() < until; k += 1)
      await page.mouse.move(x0 + Math.sin(k / 10) * 300, y);
    const panning = await readProbe(evaluate);
    await page.mouse.up();

    // Paused (space): the view holds its position while the log grows; the heap should not.
    await evaluate(stopRecordingEventsScript);
    await page.keyboard.press(' ');
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { __leaseFence: { summary(): { live: boolean } } }).__leaseFence.summary().live ===
        false,
    );
    const heap0 = await heapAfterGc(cdp);
    await page.waitForTimeout(PAUSE * 1000);
    const heap1 = await heapAfterGc(cdp);
    const mib = (bytes: number): number => bytes / (1024 * 1024);
    return {
      live: [
        [
          String(LANES),
          `${fixed(offeredPerSecond, 0)} / ${fixed(appendedPerSecond, 0)}`,
          fixed(live.frameGapsMillis.length / seconds, 1),
          `${fixed(quantile(live.frameGapsMillis, 0.95), 1)} / ${fixed(quantile(live.frameGapsMillis, 0.99), 1)}`,
          `${live.longTasks} / ${fixed(live.longestTaskMillis, 0)}`,
          fixed(quantile(panning.frameGapsMillis, 0.95), 1),
          `${fixed(quantile(live.eventToPixelMillis, 0.5), 0)} / ${fixed(quantile(live.eventToPixelMillis, 0.95), 0)}`,
          `${fixed(quantile(live.eventToPageMillis, 0.5), 0)} / ${fixed(quantile(live.eventToPageMillis, 0.95), 0)}`,
          `${fixed(firstPaintMillis, 0)} (${positionAtPaint})`,
          fixed(busy, 2),
          fixed(mib(m1['JSHeapUsedSize'] ?? Number.NaN), 0),
          fixed(serverCpu, 2),
        ],
      ],
      pause: [
        [
          String(PAUSE),
          fixed(mib(heap0), 1),
          fixed(mib(heap1), 1),
          fixed(mib(heap1 - heap0), 1),
          fixed(mib(heap1 - heap0) * (600 / PAUSE), 1),
        ],
      ],
    };
  } finally {
    if (load !== undefined) {
      load.postMessage('stop');
      await load.terminate();
    }
    await context.close();
    await removeTempDir(profile);
    await coordinator.stop();
  }
}

const work = await createTempDir('lease-fence-bench-dashboard-');
try {
  const fold = await measureFold(work);
  console.error(`bench:dashboard: Chromium with ${LANES} lanes at ${RATE} events/s for ${SECONDS} s`);
  const live = await measureLive(work);
  console.log(`\n## bench:dashboard: ${machineLine()}\n`);
  console.log(markdownTable(['events folded', 'lanes', 'fold ms (median of 3)', 'events / s', 'ns / event'], fold));
  console.log('');
  console.log(
    markdownTable(
      [
        'lanes',
        'events/s offered / appended',
        'frames / s',
        'frame gap p95 / p99 ms',
        'long tasks / longest ms',
        'panning: frame gap p95 ms',
        'event → pixel p50 / p95 ms',
        'of which event → page p50 / p95 ms',
        'first paint ms (position)',
        'main thread busy',
        'JS heap MiB',
        'server CPU cores',
      ],
      live.live,
    ),
  );
  console.log('');
  console.log(
    markdownTable(
      ['paused s', 'heap after GC at pause MiB', 'after MiB', 'growth MiB', 'growth per 10 min MiB (linear)'],
      live.pause,
    ),
  );
  console.log(
    `\nChromium ${CHROMIUM} headless (--disable-gpu), 1600×1000, the built dashboard (apps/dashboard/dist) served by the coordinator; ${PRELOAD} s of load before the page opens, ${SECONDS} s following now and ${SECONDS} s of dragging after 3 s, then ${PAUSE} s paused, all under load. First paint: first event frame → first drawn frame. Event → pixel: the event's recordedAtMillis → the first animation frame that finds it drawn; event → page: recordedAtMillis → the page's socket delivering its frame.`,
  );
} finally {
  await removeTempDir(work);
}
