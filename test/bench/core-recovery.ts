/**
 * Benchmark: time for the DurableCoordinator to recover from a SQLite log of 100 000 events,
 * with a snapshot (every 10 000 events) and without one. Prints figures; asserts nothing.
 * Run with `npm run bench:core -w @lease-fence/test`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DurableCoordinator, replayLog } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';

const EVENTS = 100_000;
const directory = mkdtempSync(join(tmpdir(), 'lease-fence-bench-'));
let boots = 0;

/**
 * Writes a log of at least EVENTS events through the coordinator: agents acquire, renew and
 * release 500 resources in turn (grants, renewals, releases), batched 1024 commands per append.
 */
async function writeLog(file: string, snapshotEvery: number): Promise<number> {
  const log = await openSqliteEventLog({ file, durability: 'normal' });
  const clock = createManualClock(`writer-${++boots}`);
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: 'bench',
    clock,
    defaultTtlMillis: 600_000,
    maxBatch: 1024,
    snapshotEvery,
    runTimers: false,
  });
  let round = 0;
  while (coordinator.position < EVENTS) {
    const resources = Array.from({ length: 500 }, (_, i) => `r-${i}`);
    const grants = await Promise.all(
      resources.map((resource) =>
        coordinator.acquire({ resource, holderId: `h-${round % 13}`, requestId: `q-${round}-${resource}` }),
      ),
    );
    await Promise.all(
      grants.map((g) =>
        g.ok
          ? coordinator.renew({
              resource: g.grant.resource,
              holderId: g.grant.holderId,
              fence: g.grant.fence,
              requestId: `renew-${round}-${g.grant.resource}`,
            })
          : undefined,
      ),
    );
    await Promise.all(
      grants.map((g) =>
        g.ok
          ? coordinator.release({ resource: g.grant.resource, holderId: g.grant.holderId, fence: g.grant.fence })
          : undefined,
      ),
    );
    clock.advance(10);
    round += 1;
  }
  const position = coordinator.position;
  await coordinator.close();
  await log.close();
  return position;
}

/** Opens a coordinator on `file` (a fresh process's view) and reports how long recovery took. */
async function recover(file: string): Promise<{ millis: number; eventsReplayed: number; fromSnapshot: boolean }> {
  const started = performance.now();
  const log = await openSqliteEventLog({ file, durability: 'full' });
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: 'bench',
    clock: createManualClock(`reader-${++boots}`),
    defaultTtlMillis: 600_000,
    snapshotEvery: 1_000_000_000,
    runTimers: false,
  });
  const millis = performance.now() - started;
  const { eventsReplayed, fromSnapshot } = coordinator.recovery;
  await coordinator.close();
  await log.close();
  return { millis, eventsReplayed, fromSnapshot };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  console.log(`DurableCoordinator recovery on SQLite, ${EVENTS} events, ${process.version}`);
  const withSnapshots = join(directory, 'with-snapshots.db');
  const withoutSnapshots = join(directory, 'without-snapshots.db');
  const writeStarted = performance.now();
  const sizes = [await writeLog(withSnapshots, 10_000), await writeLog(withoutSnapshots, Number.MAX_SAFE_INTEGER)];
  console.log(`wrote ${sizes.join(' and ')} events in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s`);

  const rows = [];
  for (const [label, file] of [
    ['with snapshot (every 10 000)', withSnapshots],
    ['without snapshot', withoutSnapshots],
  ] as const) {
    const samples = [];
    for (let i = 0; i < 3; i += 1) samples.push(await recover(file));
    rows.push({
      log: label,
      'open → ready (median ms)': Math.round(median(samples.map((s) => s.millis))),
      'events replayed': samples[0]!.eventsReplayed,
      'from snapshot': samples[0]!.fromSnapshot,
    });
  }
  console.table(rows);

  const log = await openSqliteEventLog({ file: withSnapshots });
  const started = performance.now();
  const full = await replayLog(log, { ignoreSnapshot: true });
  const replayMillis = performance.now() - started;
  console.log(
    `replayLog alone, ignoring the snapshot: ${full.eventsReplayed} events in ${Math.round(replayMillis)} ms (${((replayMillis * 1000) / full.eventsReplayed).toFixed(2)} µs per event)`,
  );
  await log.close();
} finally {
  rmSync(directory, { recursive: true, force: true });
}
