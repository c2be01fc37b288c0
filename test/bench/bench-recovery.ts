/**
 * `npm run bench:recovery`: how long the coordinator takes from start to ready on logs of 10 000,
 * 100 000 and 1 000 000 events, with a snapshot (the latest one, taken every 10 000 events as the
 * service does by default) and without one, next to the floor: the time to open the same SQLite
 * file and merely read every row of it (no decoding, no folding).
 *
 * Measured three ways, each on a fresh copy of the log (recovery appends `CoordinatorStarted`, and
 * a log without a snapshot gets one soon after start), the median of `--repeat` runs:
 * - in process: `openSqliteEventLog` + `DurableCoordinator.open` (integrity check, snapshot, replay,
 *   the `CoordinatorStarted` append) — the part recovery itself controls;
 * - the service: spawn `node apps/coordinator/dist/main.js` → its `ready` log line, and the same on
 *   an empty data dir (Node + Nest start-up, the part that does not grow with the log).
 * Figures, not a test: nothing here asserts. Options: `--sizes 10000,100000,1000000 --repeat 3`.
 *
 * `--baseline <dir>`: also measure another build of this repository in the same run, in turns
 * with this one (each repeat alternates which goes first), and print this build's time over the
 * baseline's per size. `<dir>` is the root of that build's checkout, built (each `libs/<project>/dist`,
 * `apps/coordinator/dist`), whose `node_modules` resolves its own packages (e.g. `git archive main`
 * extracted, `node_modules` linked entry by entry to this checkout's except `@lease-fence/*` and
 * `lease-fence`, which point into it, then `npx nx run-many -t build`). Its in-process recovery
 * runs in this process, on its own modules.
 */
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { DurableCoordinator } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { machineLine } from './support/bench-env.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { BENCH_NAMESPACE, writeBenchLog } from './support/write-bench-log.js';
import { fixed, markdownTable, median } from './support/stats.js';

const { values: options } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    repeat: { type: 'string', default: '3' },
    baseline: { type: 'string' },
  },
});
const sizes = options.sizes.split(',').map(Number);
const repeat = Number(options.repeat);
const SNAPSHOT_EVERY = 10_000; // the service's default (LEASE_FENCE_SNAPSHOT_EVERY)
const NAMESPACE = BENCH_NAMESPACE;
const LOG_FILE = `${NAMESPACE}.events.sqlite`; // where the service looks in its data dir
const RESOURCES = 500;

let boots = 0;

/** CPU milliseconds (user + system) this process spent since `since` (a `process.cpuUsage()` reading). */
const cpuMillisSince = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** The floor: open the file read-only and read every event row (all columns), nothing else. */
function readEveryRow(file: string): { millis: number; cpuMillis: number; rows: number } {
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  const db = new Database(file, { readonly: true });
  let rows = 0;
  for (const row of db
    .prepare('SELECT position, type, version, data, recorded_at FROM events ORDER BY position')
    .raw()
    .iterate()) {
    if (row !== undefined) rows += 1;
  }
  db.close();
  return { millis: performance.now() - started, cpuMillis: cpuMillisSince(cpuStarted), rows };
}

/** A build whose recovery is measured: its modules for the in-process recovery, its service's entry point. */
interface Build {
  readonly label: string;
  readonly openSqliteEventLog: typeof openSqliteEventLog;
  readonly DurableCoordinator: typeof DurableCoordinator;
  readonly createManualClock: typeof createManualClock;
  /** `apps/coordinator/dist/main.js` of the build; `undefined`: this checkout's. */
  readonly main?: string;
}

/** The build of `--baseline <root>`, its modules loaded from its own `dist` folders. */
async function loadBuild(root: string): Promise<Build> {
  const load = (path: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(join(root, path)).href) as Promise<Record<string, unknown>>;
  const [sqlite, core, library] = await Promise.all([
    load('libs/event-log-sqlite/dist/index.js'),
    load('libs/coordinator-core/dist/index.js'),
    load('libs/lease-fence/dist/index.js'),
  ]);
  return {
    label: 'baseline',
    openSqliteEventLog: sqlite['openSqliteEventLog'] as typeof openSqliteEventLog,
    DurableCoordinator: core['DurableCoordinator'] as typeof DurableCoordinator,
    createManualClock: library['createManualClock'] as typeof createManualClock,
    main: join(root, 'apps', 'coordinator', 'dist', 'main.js'),
  };
}

const builds: readonly Build[] = [
  { label: 'this build', openSqliteEventLog, DurableCoordinator, createManualClock },
  ...(options.baseline === undefined ? [] : [await loadBuild(options.baseline)]),
];

/** Recovery in this process with `build`'s modules: open the log, recover, ready to grant. */
async function recoverInProcess(
  build: Build,
  file: string,
): Promise<{ millis: number; cpuMillis: number; eventsReplayed: number; fromSnapshot: boolean }> {
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  const log = await build.openSqliteEventLog({ file, durability: 'full' });
  const coordinator = await build.DurableCoordinator.open({
    log,
    namespace: NAMESPACE,
    clock: build.createManualClock(`reader-${++boots}`),
    defaultTtlMillis: 600_000,
    snapshotEvery: Number.MAX_SAFE_INTEGER,
    runTimers: false,
  });
  const millis = performance.now() - started;
  const cpuMillis = cpuMillisSince(cpuStarted);
  const { eventsReplayed, fromSnapshot } = coordinator.recovery;
  await coordinator.close();
  await log.close();
  return { millis, cpuMillis, eventsReplayed, fromSnapshot };
}

/** The service (this checkout's, or `main`) from spawn to its `ready` line, on a data dir holding `file` (or nothing). */
async function serviceStartToReady(
  dataDir: string,
  tokensFile: string,
  main?: string,
): Promise<{ millis: number; replayMillis: number }> {
  const coordinator = await startBenchCoordinator({
    dataDir,
    tokensFile,
    env: { LOG_LEVEL: 'info' },
    ...(main === undefined ? {} : { main }),
  });
  await coordinator.stop();
  const recovery = coordinator.ready.recovery as { replayMillis?: number } | undefined;
  return {
    millis: coordinator.readyAtMillis - coordinator.spawnedAtMillis,
    replayMillis: recovery?.replayMillis ?? Number.NaN,
  };
}

const work = await createTempDir('lease-fence-bench-recovery-');
try {
  const tokensFile = await writeTokensFile(work, createBenchTokens(1).entries);
  console.error(
    `bench:recovery: measuring the service's start-up on an empty log (${repeat}×, after one unmeasured start)`,
  );
  const warmUp = join(work, 'warm-up');
  mkdirSync(warmUp);
  await serviceStartToReady(warmUp, tokensFile); // the first start reads the code from disk: not counted
  await removeTempDir(warmUp);
  const emptyBoots: number[] = [];
  for (let i = 0; i < repeat; i += 1) {
    const dir = join(work, `empty-${i}`);
    mkdirSync(dir);
    emptyBoots.push((await serviceStartToReady(dir, tokensFile)).millis);
    await removeTempDir(dir);
  }
  const emptyBoot = median(emptyBoots);

  const rows: string[][] = [];
  const perEvent: string[] = [];
  /** With `--baseline`: this build over the baseline, per size and kind of recovery. */
  const comparisons: string[] = [];
  for (const size of sizes) {
    const pristine = join(work, `log-${size}.sqlite`);
    const writeStarted = performance.now();
    const written = await writeBenchLog(pristine, {
      events: size,
      resources: RESOURCES,
      snapshotEvery: SNAPSHOT_EVERY,
    });
    const noSnapshot = join(work, `log-${size}-no-snapshot.sqlite`);
    copyFileSync(pristine, noSnapshot);
    const db = new Database(noSnapshot);
    db.prepare('DELETE FROM snapshots').run();
    db.close();
    const megabytes = statSync(pristine).size / (1024 * 1024);
    console.error(
      `bench:recovery: wrote ${written} events (${megabytes.toFixed(0)} MiB) in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s; measuring (${repeat}× each)`,
    );

    const floorRuns = Array.from({ length: repeat }, () => readEveryRow(pristine));
    const floor = median(floorRuns.map((run) => run.millis));
    const floorCpu = median(floorRuns.map((run) => run.cpuMillis));
    for (const [label, source] of [
      ['with snapshot', pristine],
      ['without snapshot', noSnapshot],
    ] as const) {
      const runs = new Map(
        builds.map((build) => [
          build,
          {
            inProcess: [] as number[],
            inProcessCpu: [] as number[],
            service: [] as number[],
            serviceReplay: [] as number[],
          },
        ]),
      );
      let replayed = 0;
      for (let i = 0; i < repeat; i += 1) {
        // Builds in turns, the first one alternating, so a drift of the machine falls on both.
        for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
          const measured = runs.get(build)!;
          const copy = join(work, 'copy.sqlite');
          copyFileSync(source, copy);
          const result = await recoverInProcess(build, copy);
          measured.inProcess.push(result.millis);
          measured.inProcessCpu.push(result.cpuMillis);
          replayed = result.eventsReplayed;
          await removeTempDir(copy);
          const dataDir = join(work, `service-${i}`);
          mkdirSync(dataDir);
          copyFileSync(source, join(dataDir, LOG_FILE));
          const started = await serviceStartToReady(dataDir, tokensFile, build.main);
          measured.service.push(started.millis);
          measured.serviceReplay.push(started.replayMillis);
          await removeTempDir(dataDir);
        }
      }
      for (const build of builds) {
        const { inProcess, inProcessCpu, service, serviceReplay } = runs.get(build)!;
        const recovery = median(inProcess);
        const recoveryCpu = median(inProcessCpu);
        const named = builds.length === 1 ? label : `${label} (${build.label})`;
        if (label === 'without snapshot') {
          perEvent.push(
            `${written.toLocaleString('en-US')} events${builds.length === 1 ? '' : `, ${build.label}`}: in process ${fixed((recovery * 1000) / replayed, 2)} µs per event replayed, ` +
              `service replayMillis ${fixed((median(serviceReplay) * 1000) / replayed, 2)} µs per event; floor ${fixed((floor * 1000) / written, 2)} µs per row; ` +
              `CPU time in process ${fixed((recoveryCpu * 1000) / replayed, 2)} µs per event, floor ${fixed((floorCpu * 1000) / written, 2)} µs per row`,
          );
        }
        rows.push([
          `${written.toLocaleString('en-US')}`,
          named,
          fixed(replayed, 0),
          fixed(floor, 0),
          fixed(recovery, 0),
          `× ${fixed(recovery / floor, 2)}`,
          `× ${fixed(recoveryCpu / floorCpu, 2)}`,
          fixed(median(service), 0),
          fixed(median(serviceReplay), 0),
          `× ${fixed(median(serviceReplay) / floor, 2)}`,
        ]);
      }
      if (builds.length === 2) {
        const own = runs.get(builds[0]!)!;
        const baseline = runs.get(builds[1]!)!;
        /** Per repeat, this build's figure over the baseline's in the same turn; their median and each. */
        const turns = (figure: (measured: typeof own) => readonly number[]): string => {
          const ratios = figure(own).map((value, i) => value / figure(baseline)[i]!);
          return `× ${fixed(median(ratios), 2)} (${ratios.map((ratio) => fixed(ratio, 2)).join(', ')})`;
        };
        comparisons.push(
          `${written.toLocaleString('en-US')} events, ${label}: in process ${turns((m) => m.inProcess)}, CPU time ${turns((m) => m.inProcessCpu)}, ` +
            `service spawn → ready ${turns((m) => m.service)}, service replayMillis ${turns((m) => m.serviceReplay)}`,
        );
      }
    }
    await removeTempDir(pristine);
    await removeTempDir(noSnapshot);
  }
  console.log(`\n## bench:recovery: ${machineLine()}`);
  console.log(
    `SQLite log (WAL), snapshots every ${SNAPSHOT_EVERY} events; medians of ${repeat}; milliseconds. Service start-up on an empty log: ${fixed(emptyBoot, 0)} ms.\n`,
  );
  console.log(
    markdownTable(
      [
        'events in log',
        'recovery',
        'events replayed',
        'floor: read every row',
        'in process: open → ready',
        'ratio to floor',
        'CPU time ratio to floor',
        'service: spawn → ready',
        'service: recovery (replayMillis)',
        'ratio to floor',
      ],
      rows,
    ),
  );
  console.log(`\nWithout a snapshot, per event:\n${perEvent.map((line) => `- ${line}`).join('\n')}`);
  if (comparisons.length > 0) {
    console.log(
      `\nThis build over the baseline (${options.baseline}), measured in turns; median of the per-repeat ratios (each):\n` +
        comparisons.map((line) => `- ${line}`).join('\n'),
    );
  }
  console.log(
    '\nfloor = open the file read-only and iterate every row of `events` (no decoding, no fold). in process = openSqliteEventLog + DurableCoordinator.open: ' +
      'integrity check, latest snapshot, replay, CoordinatorStarted appended (fsync). service replayMillis = the recovery time the service reports in its `ready` line ' +
      '(snapshot, replay and CoordinatorStarted, after its log file is opened and checked); spawn → ready adds Node and Nest start-up and the file check. ' +
      "CPU time ratio = this process's user + system CPU time for the in-process recovery over that of the floor (medians): on a shared machine it leaves out the time spent waiting for a core.",
  );
} finally {
  await removeTempDir(work);
}
