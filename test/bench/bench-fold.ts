/**
 * The fold's share of recovery, quickly: recovery without a snapshot, in process, next to the
 * floor (read every row), on one log written once. `bench:recovery` measures more (snapshots,
 * the service); this one is for A/B runs of the fold (two builds on the same log file, run in
 * turns) and for a CPU profile of a replay (`node --cpu-prof`). It also times the fold alone:
 * `evolve` over the log's events decoded beforehand (held in memory), so the fold's own cost is
 * seen without the read and the decoding, which dominate recovery and its noise.
 *
 * Options: `--events 1000000` (log size), `--repeat 3`, `--log FILE` (reuse or keep that log:
 * written when absent, without snapshots; without `--log` the log is written to a temp dir and removed). Figures, not a test: nothing here asserts.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DurableCoordinator, createInitialState, evolve } from '@lease-fence/coordinator-core';
import type { CoordinatorEvent } from '@lease-fence/protocol';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { median } from './support/stats.js';
import { BENCH_NAMESPACE, writeBenchLog } from './support/write-bench-log.js';
import { parseBenchArgs } from './support/bench-args.js';

const options = parseBenchArgs('fold', {
  events: { type: 'string', default: '1000000' },
  repeat: { type: 'string', default: '3' },
  log: { type: 'string' },
});
const events = Number(options.events);
const repeat = Number(options.repeat);
/** Where the log is written when `--log` is not given: removed at the end. */
const work = options.log === undefined ? await createTempDir('lease-fence-bench-fold-') : undefined;
const log = options.log ?? join(work!, 'log.sqlite');

if (!existsSync(log)) {
  const written = await writeBenchLog(log, { events, resources: 500, snapshotEvery: Number.MAX_SAFE_INTEGER });
  const db = new Database(log);
  db.prepare('DELETE FROM snapshots').run();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  console.error(`bench:fold: wrote ${written} events to ${log}`);
}

/** Milliseconds to open `file` read-only and iterate every event row (no decoding, no fold). */
function floorMillis(file: string): number {
  const started = performance.now();
  const db = new Database(file, { readonly: true });
  for (const row of db
    .prepare('SELECT position, type, version, data, recorded_at FROM events ORDER BY position')
    .raw()
    .iterate()) {
    if (row === undefined) throw new Error('unreachable');
  }
  db.close();
  return performance.now() - started;
}

/** Milliseconds from opening a copy of `file` to a recovered coordinator, and the events it replayed. */
async function recoverMillis(file: string, run: number): Promise<{ millis: number; replayed: number }> {
  const copy = `${file}.run`;
  copyFileSync(file, copy);
  const started = performance.now();
  const eventLog = await openSqliteEventLog({ file: copy, durability: 'full' });
  const coordinator = await DurableCoordinator.open({
    log: eventLog,
    namespace: BENCH_NAMESPACE,
    clock: createManualClock(`bench-fold-${process.pid}-${run}`),
    defaultTtlMillis: 600_000,
    snapshotEvery: Number.MAX_SAFE_INTEGER,
    runTimers: false,
  });
  const millis = performance.now() - started;
  const replayed = coordinator.recovery.eventsReplayed;
  await coordinator.close();
  await eventLog.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${copy}${suffix}`, { force: true });
  return { millis, replayed };
}

/** Milliseconds of `evolve` over `events` from the initial state (no I/O, no decoding). */
function foldMillis(events: readonly CoordinatorEvent[]): number {
  const started = performance.now();
  const state = createInitialState();
  for (const event of events) evolve(state, event);
  return performance.now() - started;
}

const floors: number[] = [];
const recoveries: number[] = [];
let replayed = 0;
for (let run = 0; run < repeat; run += 1) {
  floors.push(floorMillis(log));
  const recovery = await recoverMillis(log, run);
  recoveries.push(recovery.millis);
  replayed = recovery.replayed;
}
const decoded: CoordinatorEvent[] = [];
const reader = await openSqliteEventLog({ file: log, durability: 'full' });
for await (const recorded of reader.read({ from: 1 })) decoded.push(recorded.event);
await reader.close();
const folds = Array.from({ length: repeat + 1 }, () => foldMillis(decoded)).slice(1); // the first warms up
const fold = median(folds);
const floor = median(floors);
const recovery = median(recoveries);
console.log(
  `bench:fold: ${replayed} events replayed; floor ${floor.toFixed(0)} ms, in process ${recovery.toFixed(0)} ms, ` +
    `ratio × ${(recovery / floor).toFixed(2)}, ${((recovery * 1000) / replayed).toFixed(2)} µs per event ` +
    `(medians of ${repeat}; runs ${recoveries.map((millis) => millis.toFixed(0)).join(', ')} ms); ` +
    `fold alone (evolve over the decoded events) ${fold.toFixed(0)} ms, ${((fold * 1000) / decoded.length).toFixed(3)} µs per event ` +
    `(runs ${folds.map((millis) => millis.toFixed(0)).join(', ')} ms)`,
);
if (work !== undefined) await removeTempDir(work);
