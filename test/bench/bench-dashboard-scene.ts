/**
 * `node test/bench/run-bench.mjs dashboard-scene`: the dashboard's frame time at the scale target
 * with no coordinator in the way. `bench-dashboard` needs the coordinator to take 2 000 events/s
 * over HTTP; on a shared machine it often cannot, and the page then measures a trickle. Here the
 * page itself serves the synthetic scene (500 lanes, 20 000 generations, 2 000 rejections; see
 * `apps/dashboard/src/dev/demo-environment.ts`), built with `VITE_LEASE_FENCE_DEMO=1` and opened at
 * `/?demo=1&rate=RATE&history=0.5`, so every build gets the same events at the same rate.
 *
 * Each build (this worktree's, plus any `--compare DIR` of another worktree's `apps/dashboard`) is
 * built into a temp dir and measured `--rounds` times, alternating, in the same minutes: frame gaps
 * (p50, p95, p99) following now and while dragging the lanes, long tasks, the main thread's busy
 * share and the CPU the browser's processes used (cores). Figures, not a test: nothing asserts.
 * Options: `--seconds 8 --rate 2000 --rounds 2 --compare DIR`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve } from 'node:path';
import { chromium, type CDPSession } from 'playwright-core';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { quantile } from './support/dashboard-probe.js';
import { fixed, markdownTable } from './support/stats.js';

const options = parseBenchArgs('dashboard-scene', {
  seconds: { type: 'string', default: '8' },
  rate: { type: 'string', default: '2000' },
  rounds: { type: 'string', default: '2' },
  compare: { type: 'string', multiple: true, default: [] },
});
const SECONDS = Number(options.seconds);
const RATE = Number(options.rate);
const ROUNDS = Number(options.rounds);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Builds `dashboardDir` (an `apps/dashboard` folder) with the demo environment into `outDir`. */
function buildScene(dashboardDir: string, outDir: string): Promise<void> {
  return new Promise((done, fail) => {
    const vite = join(repoRoot(), 'node_modules', '.bin', 'vite');
    const child = spawn(vite, ['build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'], {
      cwd: dashboardDir,
      env: { ...process.env, VITE_LEASE_FENCE_DEMO: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done() : fail(new Error(`vite build in ${dashboardDir}: exit ${code}`)),
    );
  });
}

/** Serves the files of `dir` (any other path: `index.html`) on 127.0.0.1, an ephemeral port. */
async function serveStatic(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };
  const server = http.createServer((request, response) => {
    const path = join(dir, new URL(request.url ?? '/', 'http://x').pathname);
    const file = path.startsWith(dir) && existsSync(path) && !path.endsWith('/') ? path : join(dir, 'index.html');
    response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
    response.end(readFileSync(file));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** CPU seconds (user + system) of every descendant process of this one, from `/proc` (Linux). */
function descendantsCpuSeconds(): number {
  const parentOf = new Map<number, number>();
  const ticksOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
      ticksOf.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended while we read
    }
  }
  let ticks = 0;
  for (const [pid, own] of ticksOf) {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) {
      if (p === process.pid) {
        ticks += own;
        break;
      }
    }
  }
  return ticks / 100; // USER_HZ
}

/** The init script: animation-frame gaps and long tasks, kept on `window.__sceneProbe`. */
const PROBE = `(() => {
  const probe = { gaps: [], longTasks: [] };
  window.__sceneProbe = probe;
  try { new PerformanceObserver((l) => { for (const e of l.getEntries()) probe.longTasks.push(e.duration); }).observe({ type: 'longtask' }); } catch {}
  let last = performance.now();
  const frame = (t) => { probe.gaps.push(t - last); last = t; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
})();`;

/** One window's figures. */
function row(build: string, phase: string, gaps: number[], longTasks: number[], busy: number, cores: number): string[] {
  return [
    build,
    phase,
    fixed(gaps.length / SECONDS, 1),
    `${fixed(quantile(gaps, 0.5), 1)} / ${fixed(quantile(gaps, 0.95), 1)} / ${fixed(quantile(gaps, 0.99), 1)}`,
    `${longTasks.length} / ${fixed(Math.max(0, ...longTasks), 0)}`,
    fixed(busy, 2),
    fixed(cores, 2),
  ];
}

/** Opens the scene of `dist` in a fresh headless Chromium and measures following now, then dragging. */
async function measure(label: string, dist: string): Promise<string[][]> {
  const server = await serveStatic(dist);
  const profile = await createTempDir('lease-fence-bench-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    viewport: { width: 1600, height: 1000 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.addInitScript({ content: PROBE });
    const cdp: CDPSession = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const taskSeconds = async (): Promise<[number, number]> => {
      const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
      const value = (name: string): number => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
      return [value('TaskDuration'), value('Timestamp')];
    };
    await page.goto(`${server.url}/?demo=1&rate=${RATE}&history=0.5`);
    await page.waitForSelector('[data-testid="lanes-canvas"]');
    await page.waitForTimeout(4_000); // the catch-up is folded and the live feed runs
    const window = async (phase: string, act: () => Promise<void>): Promise<string[]> => {
      await page.evaluate('window.__sceneProbe.gaps.length = 0; window.__sceneProbe.longTasks.length = 0');
      const [task0, at0] = await taskSeconds();
      const cpu0 = descendantsCpuSeconds();
      const started = performance.now();
      await act();
      const cores = (descendantsCpuSeconds() - cpu0) / ((performance.now() - started) / 1000);
      const [task1, at1] = await taskSeconds();
      const probe = (await page.evaluate('window.__sceneProbe')) as { gaps: number[]; longTasks: number[] };
      return row(label, phase, probe.gaps.slice(1), probe.longTasks, (task1 - task0) / (at1 - at0), cores);
    };
    const following = await window('following now', () => page.waitForTimeout(SECONDS * 1000));
    const box = await page.locator('[data-testid="lanes-canvas"]').boundingBox();
    if (box === null) throw new Error('bench:dashboard-scene: the lanes canvas is not visible');
    const y = box.y + Math.min(120, box.height / 2);
    const x0 = box.x + box.width / 2;
    await page.mouse.move(x0, y);
    await page.mouse.down();
    const dragging = await window('dragging', async () => {
      for (let k = 0, until = performance.now() + SECONDS * 1000; performance.now() < until; k += 1)
        await page.mouse.move(x0 + Math.sin(k / 10) * 300, y);
    });
    await page.mouse.up();
    return [following, dragging];
  } finally {
    await context.close();
    await removeTempDir(profile);
    await server.close();
  }
}

if (!existsSync(CHROMIUM))
  throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
const work = await createTempDir('lease-fence-bench-scene-');
try {
  const builds: { label: string; dist: string }[] = [];
  const sources = [join(repoRoot(), 'apps', 'dashboard'), ...(options.compare ?? []).map((dir) => resolve(dir))];
  for (const [i, source] of sources.entries()) {
    const dist = join(work, `scene-${i}`);
    console.error(`bench:dashboard-scene: building ${source} with VITE_LEASE_FENCE_DEMO=1`);
    await buildScene(source, dist);
    builds.push({ label: i === 0 ? 'this build' : `--compare ${i}`, dist });
  }
  const rows: string[][] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const build of builds) {
      console.error(`bench:dashboard-scene: round ${round + 1}, ${build.label}`);
      rows.push(...(await measure(build.label, build.dist)));
    }
  }
  console.log(`\n## bench:dashboard-scene: ${machineLine()}\n`);
  console.log(
    markdownTable(
      [
        'build',
        'window',
        'frames / s',
        'frame gap p50 / p95 / p99 ms',
        'long tasks / longest ms',
        'main thread busy',
        'browser CPU cores',
      ],
      rows,
    ),
  );
  console.log(
    `\nChromium ${CHROMIUM} headless (--disable-gpu), 1600×1000; the synthetic scene (500 lanes, 20 000 generations) at ${RATE} events/s in the page, ${SECONDS} s following now then ${SECONDS} s dragging, after 4 s; builds alternate, ${ROUNDS} rounds. --compare: ${sources.slice(1).join(', ') || 'none'}.`,
  );
} finally {
  await removeTempDir(work);
}
