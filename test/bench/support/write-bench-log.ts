/**
 * Writes a realistic SQLite event log for the recovery and dashboard benchmarks, through the
 * real coordinator: each round, agents acquire, renew and release 500 resources (grants,
 * renewals, releases; a snapshot every `snapshotEvery` events, as the service takes them).
 * Durability `normal` while writing: only reading is measured.
 */
import { DurableCoordinator } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';

/** The namespace the service uses by default (its log file is `<data dir>/default.events.sqlite`). */
export const BENCH_NAMESPACE = 'default';

let writers = 0;

/**
 * Writes at least `events` events to `file` (created).
 * @returns the log's version (number of events) afterwards.
 */
export async function writeBenchLog(
  file: string,
  options: { readonly events: number; readonly resources: number; readonly snapshotEvery: number },
): Promise<number> {
  const log = await openSqliteEventLog({ file, durability: 'normal' });
  const clock = createManualClock(`bench-writer-${process.pid}-${++writers}`);
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: BENCH_NAMESPACE,
    clock,
    defaultTtlMillis: 600_000,
    maxBatch: 4096,
    snapshotEvery: options.snapshotEvery,
    runTimers: false,
  });
  const resources = Array.from({ length: options.resources }, (_, i) => `resource-${i}`);
  for (let round = 0; coordinator.position < options.events; round += 1) {
    const grants = await Promise.all(
      resources.map((resource, i) =>
        coordinator.acquire({ resource, holderId: `agent-${(round + i) % 32}`, requestId: `q-${round}-${i}` }),
      ),
    );
    await Promise.all(
      grants.map((g, i) =>
        g.ok
          ? coordinator.renew({
              resource: g.grant.resource,
              holderId: g.grant.holderId,
              fence: g.grant.fence,
              requestId: `r-${round}-${i}`,
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
  }
  const position = coordinator.position;
  await coordinator.close();
  await log.close();
  return position;
}
