/**
 * Benchmark: grants per second of the DurableCoordinator on the SQLite log (durability 'full':
 * one fsync per append), with group commit (maxBatch 256) and without (maxBatch 1), at a few
 * concurrency levels. Prints figures; asserts nothing. Run with `npm run bench:core -w @lease-fence/test`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DurableCoordinator } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createMonotonicClock } from 'lease-fence';

interface Run {
  readonly maxBatch: number;
  readonly concurrency: number;
  readonly grants: number;
}

interface Result extends Run {
  readonly grantsPerSecond: number;
  readonly appends: number;
  readonly meanBatchCommands: number;
}

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-bench-'));
let runs = 0;

/** Grants `run.grants` leases on fresh resources with `run.concurrency` acquires in flight. */
async function measure(run: Run): Promise<Result> {
  const log = await openSqliteEventLog({ file: join(directory, `group-commit-${++runs}.db`), durability: 'full' });
  let appends = 0;
  let commands = 0;
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: 'bench',
    clock: createMonotonicClock(`bench-${process.pid}-${runs}`),
    defaultTtlMillis: 600_000,
    maxBatch: run.maxBatch,
    snapshotEvery: 1_000_000,
    onAppend: (info) => {
      appends += 1;
      commands += info.commands;
    },
  });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: run.concurrency }, async () => {
      while (next < run.grants) {
        const index = next++;
        const outcome = await coordinator.acquire({
          resource: `r-${index}`,
          holderId: `h-${index % 97}`,
          requestId: `q-${index}`,
        });
        if (!outcome.ok) throw new Error(`unexpected denial ${JSON.stringify(outcome)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await coordinator.close();
  await log.close();
  return { ...run, grantsPerSecond: run.grants / seconds, appends, meanBatchCommands: commands / Math.max(1, appends) };
}

const plan: Run[] = [
  { maxBatch: 1, concurrency: 1, grants: 500 },
  { maxBatch: 1, concurrency: 64, grants: 1000 },
  { maxBatch: 256, concurrency: 1, grants: 500 },
  { maxBatch: 256, concurrency: 64, grants: 10_000 },
  { maxBatch: 256, concurrency: 256, grants: 20_000 },
];

try {
  console.log(`DurableCoordinator on SQLite (WAL, synchronous=FULL), ${process.version}, files in ${directory}`);
  const results: Result[] = [];
  for (const run of plan) results.push(await measure(run));
  console.table(
    results.map((r) => ({
      maxBatch: r.maxBatch,
      'in flight': r.concurrency,
      grants: r.grants,
      'grants/s': Math.round(r.grantsPerSecond),
      'appends (fsyncs)': r.appends,
      'commands/append': Number(r.meanBatchCommands.toFixed(1)),
    })),
  );
  const baseline = results.find((r) => r.maxBatch === 1 && r.concurrency === 64)!;
  const grouped = results.find((r) => r.maxBatch === 256 && r.concurrency === 64)!;
  console.log(
    `group commit vs maxBatch 1 at 64 in flight: ${(grouped.grantsPerSecond / baseline.grantsPerSecond).toFixed(1)}x`,
  );
} finally {
  rmSync(directory, { recursive: true, force: true });
}
