/**
 * The example of `libs/coordinator-core/README.md` (this file's imports and the region between the
 * `#region readme` markers are the README block, verbatim; `readme-example.int.spec.ts` checks
 * both and runs it): grant on the
 * SQLite log, die without a clean shutdown, recover, and see the grant honoured.
 */
import { randomUUID } from 'node:crypto';
import { DurableCoordinator } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createMonotonicClock } from 'lease-fence';

/** Runs the README example on the SQLite file `file` (which should not exist yet). */
export async function runReadmeExample(file: string): Promise<void> {
  // #region readme
  // Boot 1: open the log, then the coordinator (it replays the log and appends CoordinatorStarted).
  // Every boot gets a fresh boot id: the clock domain of every instant it hands out.
  const log = await openSqliteEventLog({ file, durability: 'full' });
  const first = await DurableCoordinator.open({
    log,
    namespace: 'default',
    clock: createMonotonicClock(randomUUID()),
    defaultTtlMillis: 30_000,
  });
  const grant = await first.acquire({ resource: 'deploy-slot', holderId: 'agent-a', requestId: 'r-1' });
  console.log(grant.ok && `granted fence ${grant.grant.fence}`); // resolved only once durable

  // The process dies here, without closing anything. Boot 2 recovers from the same file:
  const reopened = await openSqliteEventLog({ file, durability: 'full' });
  const second = await DurableCoordinator.open({
    log: reopened,
    namespace: 'default',
    clock: createMonotonicClock(randomUUID()),
    defaultTtlMillis: 30_000,
  });
  console.log(
    `recovered fence ${second.recovery.recoveredFence}, ${second.recovery.carriedLeases} lease carried in grace`,
  );

  const retry = await second.acquire({ resource: 'deploy-slot', holderId: 'agent-a', requestId: 'r-1' });
  console.log(retry.ok && `retry of r-1 answered with fence ${retry.grant.fence}`); // the replay cache survived
  const other = await second.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'r-2' });
  console.log(other.ok ? 'agent-b granted' : `agent-b: ${other.reason}`); // blocked until the grace deadline
  // #endregion
  await first.close();
  await second.close();
  await log.close();
  await reopened.close();
}
