/**
 * `npm run bench:recovery`: how long the coordinator takes from start to ready on logs of 10 000,
 * 100 000 and 1 000 000 events, with a snapshot (the latest one, taken every 10 000 events as the
 * service does by default) and without one, next to the floor: the time to open the same SQLite
 * file and merely read every row of it (no decoding, no folding).
 *
 * Measured three ways, each on a fresh copy of the log (recovery appends `CoordinatorStarted`, and
 * a log without a snapshot gets one soon after start), `--repeat` turns, medians:
 * - the floor, in a child process of its own, once per turn;
 * - in process: `openSqliteEventLog` + `DurableCoordinator.open` (integrity check, snapshot, replay,
 *   the `CoordinatorStarted` append) in a child process of its own (`support/recovery-child.ts`), so
 *   every build starts from a fresh heap; its ratio to the floor is the median of the per-turn
 *   ratios (the floor read in the same turn);
 * - the service: spawn `node apps/coordinator/dist/main.js` → its `ready` line (its `replayMillis`:
 *   snapshot, replay, `CoordinatorStarted`), and the same on an empty data dir (Node + Nest start-up).
 * Figures, not a test: nothing here asserts. Progress goes to stderr, the one table to stdout.
 * Options: `--sizes 10000,100000,1000000 --repeat 3`, `--only 'without snapshot'` (or `'with snapshot'`).
 *
 * `--baseline <dir>`: also measure another build of this repository in the same turns (the
 * order within a turn alternates), and add this build's time over the baseline's (median of the
 * per-turn ratios) to the table. `<dir>` is the root of that build's checkout, built (each
 * `libs/<project>/dist`, `apps/coordinator/dist`), whose `node_modules` resolves its own packages
 * (e.g. `git archive main` extracted, `node_modules` linked entry by entry to this checkout's
 * except `@lease-fence/*` and `lease-fence`, which point into it, then `npx nx run-many -t build`).
 *
 * `LEASE_FENCE_BENCH_CPU_PROF_DIR=<dir>`: every child (in-process recoveries, floors and services)
 * writes a `.cpuprofile` there.
 */
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { cpuProfileArgs, startBenchCoordinator } from './support/coordinator-child.js';
import { measureInChild } from './support/recovery-child.js';
import { BENCH_NAMESPACE, writeBenchLog } from './support/write-bench-log.js';
import { fixed, markdownTable, median } from './support/stats.js';

const options = parseBenchArgs('recovery', {
  sizes: { type: 'string', default: '10000,100000,1000000' },
  repeat: { type: 'string', default: '3' },
  baseline: { type: 'string' },
  only: { type: 'string' },
});
const sizes = options.sizes.split(',').map(Number);
const repeat = Number(options.repeat);
const SNAPSHOT_EVERY = 10_000; // the service's default (LEASE_FENCE_SNAPSHOT_EVERY)
const NAMESPACE = BENCH_NAMESPACE;
const LOG_FILE = `${NAMESPACE}.events.sqlite`; // where the service looks in its data dir
const RESOURCES = 500;

/** A build whose recovery is measured: the root of its checkout (its `dist` folders). */
interface Build {
  readonly label: string;
  readonly root: string;
  /** `apps/coordinator/dist/main.js` of the build; `undefined`: this checkout's. */
  readonly main?: string;
}

const builds: readonly Build[] = [
  { label: 'this build', root: repoRoot() },
  ...(options.baseline === undefined
    ? []
    : [
        {
          label: 'baseline',
          root: options.baseline,
          main: join(options.baseline, 'apps', 'coordinator', 'dist', 'main.js'),
        },
      ]),
];

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

/** Per repeat, `values[i] / over[i]`: their median and each, as `× m (a, b, …)`. */
function turns(values: readonly number[], over: readonly number[]): string {
  const ratios = values.map((value, i) => value / over[i]!);
  return `× ${fixed(median(ratios), 2)} (${ratios.map((ratio) => fixed(ratio, 2)).join(', ')})`;
}

/** `× median(values[i] / over[i])`. */
const ratioOf = (values: readonly number[], over: readonly number[]): string =>
  `× ${fixed(median(values.map((value, i) => value / over[i]!)), 2)}`;

const work = await createTempDir('lease-fence-bench-recovery-');
try {
  const tokensFile = await writeTokensFile(work, createBenchTokens(1).entries);
  console.error(`bench:recovery: the service's start-up on an empty log (${repeat}×, after one unmeasured start)`);
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
      `bench:recovery: wrote ${written} events (${megabytes.toFixed(0)} MiB) in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s; measuring (${repeat} turns)`,
    );

    for (const [label, source] of (
      [
        ['with snapshot', pristine],
        ['without snapshot', noSnapshot],
      ] as const
    ).filter(([kind]) => options.only === undefined || kind === options.only)) {
      /** The floor of each turn, read next to that turn's recoveries. */
      const floors: number[] = [];
      const floorsCpu: number[] = [];
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
        const floor = await measureInChild({ kind: 'floor', file: source }, cpuProfileArgs());
        floors.push(floor.millis);
        floorsCpu.push(floor.cpuMillis);
        // Builds in turns, the first one alternating, so a drift of the machine falls on both.
        for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
          const measured = runs.get(build)!;
          const copy = join(work, 'copy.sqlite');
          copyFileSync(source, copy);
          const result = await measureInChild(
            { kind: 'recover', file: copy, root: build.root, namespace: NAMESPACE },
            cpuProfileArgs(),
          );
          measured.inProcess.push(result.millis);
          measured.inProcessCpu.push(result.cpuMillis);
          replayed = result.count;
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
      const baseline = builds.length === 2 ? runs.get(builds[1]!)! : undefined;
      for (const build of builds) {
        const { inProcess, inProcessCpu, service, serviceReplay } = runs.get(build)!;
        const own = build === builds[0];
        rows.push([
          written.toLocaleString('en-US'),
          label,
          ...(builds.length === 1 ? [] : [build.label]),
          fixed(replayed, 0),
          fixed(median(floors), 0),
          fixed(median(inProcess), 0),
          ratioOf(inProcess, floors),
          ratioOf(inProcessCpu, floorsCpu),
          fixed((median(inProcess) * 1000) / replayed, 2),
          fixed(median(service), 0),
          fixed(median(serviceReplay), 0),
          ratioOf(serviceReplay, floors),
          ...(baseline === undefined
            ? []
            : [
                own ? turns(inProcess, baseline.inProcess) : '',
                own ? turns(inProcessCpu, baseline.inProcessCpu) : '',
                own ? turns(serviceReplay, baseline.serviceReplay) : '',
              ]),
        ]);
      }
    }
    await removeTempDir(pristine);
    await removeTempDir(noSnapshot);
  }
  console.log(`\n## bench:recovery: ${machineLine()}`);
  console.log(
    `SQLite log (WAL), snapshots every ${SNAPSHOT_EVERY} events; ${repeat} turns, medians; milliseconds; ratios are medians of per-turn ratios. ` +
      `Service start-up on an empty log: ${fixed(emptyBoot, 0)} ms.\n`,
  );
  console.log(
    markdownTable(
      [
        'events',
        'recovery',
        ...(builds.length === 1 ? [] : ['build']),
        'replayed',
        'floor',
        'in process',
        '× floor',
        'CPU × floor',
        'µs / event',
        'service spawn → ready',
        'replayMillis',
        '× floor',
        ...(builds.length === 1
          ? []
          : ['in process ÷ baseline (per turn)', 'CPU ÷ baseline (per turn)', 'replayMillis ÷ baseline (per turn)']),
      ],
      rows,
    ),
  );
  console.log(
    '\nfloor = a child process opens the file read-only and iterates every row of `events` (no decoding, no fold). ' +
      'in process = a child process per build runs openSqliteEventLog + DurableCoordinator.open (integrity check, latest snapshot, replay, ' +
      'CoordinatorStarted appended with its fsync); CPU = its user + system time, every thread. replayMillis = the recovery time the service reports ' +
      'in its `ready` line. µs / event = in process per event replayed.' +
      (builds.length === 1 ? '' : ` Baseline: ${options.baseline}.`),
  );
} finally {
  await removeTempDir(work);
}
