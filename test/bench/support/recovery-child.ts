/**
 * One measurement of `bench:recovery`'s in-process arm, in a process of its own: each build's
 * recovery (and the floor) then has a fresh heap and its own JIT, where running two builds in
 * the bench's process made them share one heap (the garbage of one collected during the other)
 * and hid a difference that one process per build showed (BENCHMARKS.md, issue 18 §2).
 *
 * `node recovery-child.js floor <file>`: open `file` read-only and iterate every event row.
 * `node recovery-child.js recover <file> <root> <namespace>`: the recovery of the build whose
 * checkout is `root` (its `libs/<project>/dist` modules): `openSqliteEventLog` +
 * `DurableCoordinator.open` on `file`, which it changes (recovery appends `CoordinatorStarted`).
 * Prints one JSON line, {@link ChildMeasurement}, on stdout. `--cpu-prof` works as for any Node
 * process (`recoveryInChild`'s `nodeArgs`).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import type { DurableCoordinator } from '@lease-fence/coordinator-core';
import type { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import type { createManualClock } from 'lease-fence';

/** What one child measured. */
export interface ChildMeasurement {
  /** Wall milliseconds of the step (the floor's read, or open → ready). */
  readonly millis: number;
  /** User + system CPU milliseconds of the child during the step (every thread: the background `quick_check` too). */
  readonly cpuMillis: number;
  /** Rows read (floor) or events replayed (recover). */
  readonly count: number;
  /** Whether recovery started from a snapshot (`false` for the floor). */
  readonly fromSnapshot: boolean;
}

/** CPU milliseconds (user + system) this process spent since `since`. */
const cpuMillisSince = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** The floor: open the file read-only and read every event row (all columns), nothing else. */
function readEveryRow(file: string): ChildMeasurement {
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
  return {
    millis: performance.now() - started,
    cpuMillis: cpuMillisSince(cpuStarted),
    count: rows,
    fromSnapshot: false,
  };
}

/** Recovery with the modules of the build at `root`: open the log, recover, ready to grant. */
async function recover(file: string, root: string, namespace: string): Promise<ChildMeasurement> {
  const load = (path: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(join(root, path)).href) as Promise<Record<string, unknown>>;
  const [sqlite, core, library] = await Promise.all([
    load('libs/event-log-sqlite/dist/index.js'),
    load('libs/coordinator-core/dist/index.js'),
    load('libs/lease-fence/dist/index.js'),
  ]);
  const open = sqlite['openSqliteEventLog'] as typeof openSqliteEventLog;
  const Coordinator = core['DurableCoordinator'] as typeof DurableCoordinator;
  const manualClock = library['createManualClock'] as typeof createManualClock;
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  const log = await open({ file, durability: 'full' });
  const coordinator = await Coordinator.open({
    log,
    namespace,
    clock: manualClock(`bench-recovery-${process.pid}`),
    defaultTtlMillis: 600_000,
    snapshotEvery: Number.MAX_SAFE_INTEGER,
    runTimers: false,
  });
  const millis = performance.now() - started;
  const cpuMillis = cpuMillisSince(cpuStarted);
  const { eventsReplayed, fromSnapshot } = coordinator.recovery;
  await coordinator.close();
  await log.close();
  return { millis, cpuMillis, count: eventsReplayed, fromSnapshot };
}

/** What {@link measureInChild} runs: the floor on `file`, or the recovery of the build at `root`. */
export type ChildTask =
  | { readonly kind: 'floor'; readonly file: string }
  | { readonly kind: 'recover'; readonly file: string; readonly root: string; readonly namespace: string };

/**
 * Runs `task` in a new Node process (this file) and resolves with what it measured.
 * @param nodeArgs - Node flags before the script, e.g. `['--cpu-prof', '--cpu-prof-dir=…']`.
 * @throws if the child exits with an error or prints no measurement (its stderr in the message).
 */
export function measureInChild(task: ChildTask, nodeArgs: readonly string[] = []): Promise<ChildMeasurement> {
  const args = task.kind === 'floor' ? ['floor', task.file] : ['recover', task.file, task.root, task.namespace];
  const child = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as ChildMeasurement);
      else reject(new Error(`recovery-child ${args[0]} failed (${signal ?? `exit ${code}`}): ${stderr.slice(-2000)}`));
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind, file, root, namespace] = process.argv.slice(2);
  const measured =
    kind === 'floor' && file !== undefined
      ? readEveryRow(file)
      : kind === 'recover' && file !== undefined && root !== undefined && namespace !== undefined
        ? await recover(file, root, namespace)
        : undefined;
  if (measured === undefined) {
    console.error('usage: recovery-child.js floor <file> | recover <file> <root> <namespace>');
    process.exit(2);
  }
  console.log(JSON.stringify(measured));
}
