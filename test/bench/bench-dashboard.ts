/**
 * `npm run bench:dashboard`: the dashboard's two costs.
 *
 * 1. Fold: the time to fold 1 000 000 recorded events into the dashboard's view state with its
 *    own pure model (`apps/dashboard/src/model/fold-events.ts`, compiled from source by
 *    `run-bench.mjs` into `test/dist/bench-build/dashboard-model/`). The events are a real log
 *    written through the coordinator (500 resources: grants, renewals, releases) and read back
 *    decoded, as `/v1/events` and the stream deliver them.
 * 2. Frames per second in Chromium (Debian's, driven by playwright-core; headless, fresh temp
 *    profile): the built dashboard served by the coordinator, live, while 500 resource lanes get
 *    2 000 events/s (acquire + release pairs over HTTP from a worker thread).
 *
 * `LEASE_FENCE_BENCH_SCREENSHOT=<file.png>` saves what the page showed at the end of the window.
 * Figures, not a test: nothing here asserts. Options: `--events 1000000 --lanes 500 --rate 2000 --seconds 10`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { chromium } from 'playwright-core';
import type { RecordedEvent } from '@lease-fence/protocol';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf } from './support/proc-usage.js';
import { fixed, markdownTable, median } from './support/stats.js';
import type { StreamLoadOptions } from './support/stream-load.worker.js';
import { writeBenchLog } from './support/write-bench-log.js';

const { values: options } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, lanes: { type: 'string', default: '500' }, rate: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '10' } },
});
const EVENTS = Number(options.events);
const LANES = Number(options.lanes);
const RATE = Number(options.rate);
const SECONDS = Number(options.seconds);
const LOAD_AGENTS = 20; // divides 500: each lane belongs to one agent, so acquires never contend
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The slice of the dashboard model this benchmark calls (compiled from apps/dashboard/src/model). */
interface DashboardModel {
  foldEvents(events: Iterable<RecordedEvent>): { readonly position: number; readonly lanes: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>> };
}

/** Part 1: fold EVENTS events with the dashboard's model; median of 3. */
async function measureFold(work: string): Promise<string[][]> {
  const modelFile = join(repoRoot(), 'test', 'dist', 'bench-build', 'dashboard-model', 'fold-events.js');
  if (!existsSync(modelFile)) throw new Error(`${modelFile} is missing: run this through \`npm run bench:dashboard\`, which compiles the model`);
  const model = (await import(modelFile)) as DashboardModel;
  const file = join(work, 'dashboard-fold.sqlite');
  const written = await writeBenchLog(file, { events: EVENTS, resources: LANES, snapshotEvery: Number.MAX_SAFE_INTEGER });
  const log = await openSqliteEventLog({ file, durability: 'normal' });
  const events: RecordedEvent[] = [];
  for await (const recorded of log.read({ from: 1 })) events.push(recorded);
  await log.close();
  console.error(`bench:dashboard: folding ${events.length} events (3×)`);
  const runs: number[] = [];
  let lanes = 0;
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    const state = model.foldEvents(events);
    runs.push(performance.now() - started);
    lanes = state.lanes instanceof Map ? state.lanes.size : Object.keys(state.lanes).length;
  }
  const millis = median(runs);
  return [[fixed(written, 0), String(lanes), fixed(millis, 0), fixed((events.length / millis) * 1000, 0), fixed((millis * 1e6) / events.length, 0)]];
}

/** Part 2: frames per second of the live dashboard in Chromium under load. */
async function measureFps(work: string): Promise<string[][]> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const dashboardDir = join(repoRoot(), 'apps', 'dashboard', 'dist');
  const tokens = createBenchTokens(LOAD_AGENTS);
  const dataDir = join(work, 'live');
  const coordinator = await startBenchCoordinator({ dataDir, tokensFile: await writeTokensFile(work, tokens.entries), env: { LEASE_FENCE_DASHBOARD_DIR: dashboardDir } });
  const profile = await createTempDir('lease-fence-bench-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    viewport: { width: 1600, height: 1000 },
  });
  let load: Worker | undefined;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${coordinator.url}/?token=${encodeURIComponent(tokens.viewer)}`);
    await page.waitForLoadState('networkidle');
    load = new Worker(new URL('./support/stream-load.worker.js', import.meta.url), {
      workerData: { url: coordinator.url, agentTokens: tokens.agents, eventsPerSecond: RATE, resources: LANES } satisfies StreamLoadOptions,
    });
    let pairs = 0;
    load.on('message', (progress: { pairs: number }) => {
      pairs = progress.pairs;
    });
    await page.waitForTimeout(3_000); // every lane has had events by now (one pair per lane per 0.5 s at 2 000 events/s)
    const pairs0 = pairs;
    const cpu0 = cpuSecondsOf(coordinator.pid) ?? Number.NaN;
    const started = performance.now();
    const measured = await page.evaluate(async (millis: number) => {
      // Runs in the page (no DOM types in this project): the browser's requestAnimationFrame.
      const nextFrame = (globalThis as unknown as { requestAnimationFrame(callback: (now: number) => void): void }).requestAnimationFrame;
      const gaps: number[] = [];
      let last = performance.now();
      const begin = last;
      await new Promise<void>((resolve) => {
        const frame = (now: number): void => {
          gaps.push(now - last);
          last = now;
          if (now - begin < millis) nextFrame(frame);
          else resolve();
        };
        nextFrame(frame);
      });
      gaps.sort((a, b) => a - b);
      const heap = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize;
      return { fps: (gaps.length * 1000) / (last - begin), p99GapMillis: gaps[Math.min(gaps.length - 1, Math.ceil(gaps.length * 0.99) - 1)] ?? Number.NaN, heapBytes: heap ?? Number.NaN };
    }, SECONDS * 1000);
    const seconds = (performance.now() - started) / 1000;
    const screenshot = process.env.LEASE_FENCE_BENCH_SCREENSHOT;
    if (screenshot !== undefined && screenshot !== '') await page.screenshot({ path: screenshot }); // to see what was drawn
    const eventsPerSecond = ((pairs - pairs0) * 2) / seconds;
    const serverCpu = ((cpuSecondsOf(coordinator.pid) ?? Number.NaN) - cpu0) / seconds;
    return [[String(LANES), fixed(eventsPerSecond, 0), fixed(measured.fps, 1), fixed(measured.p99GapMillis, 0), fixed(measured.heapBytes / (1024 * 1024), 0), fixed(serverCpu, 2)]];
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
  const fps = await measureFps(work);
  console.log(`\n## bench:dashboard: ${machineLine()}\n`);
  console.log(markdownTable(['events folded', 'lanes', 'fold ms (median of 3)', 'events / s', 'ns / event'], fold));
  console.log('');
  console.log(markdownTable(['lanes', 'events/s appended', 'frames / s', 'p99 frame gap ms', 'JS heap MiB', 'server CPU cores'], fps));
  console.log(`\nChromium ${CHROMIUM} headless (--disable-gpu), 1600×1000, the built dashboard (apps/dashboard/dist) served by the coordinator; ${SECONDS} s of requestAnimationFrame after 3 s of load.`);
} finally {
  await removeTempDir(work);
}
