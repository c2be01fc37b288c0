// @ts-check
/**
 * Child process of the kill -9 crash test (test/crash/kill-during-append.int.spec.ts): opens the
 * SQLite log at argv[2] with a DurableCoordinator and grants leases under load, forever, with
 * `argv[3]` acquires in flight, the log's writer being `argv[4]` (`inline`, the default, or
 * `thread`: the writer thread, with pipelined appends). It prints `ready <bootId>` once recovered, then one line per
 * ACKNOWLEDGED grant: `grant <resource> <holderId> <fence> <requestId>`. Lines go to a pipe, which Node
 * writes synchronously on Linux, so every printed grant left the process before any kill.
 *
 * Plain JavaScript so the test can start it with `node` (no TypeScript loader on Node 20).
 */
import { randomUUID } from 'node:crypto';
import { DurableCoordinator } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createMonotonicClock } from 'lease-fence';

const [file, concurrencyArgument = '16', writer = 'inline'] = process.argv.slice(2);
if (file === undefined)
  throw new TypeError(
    'usage: grant-under-load.child.mjs <sqlite file> [concurrency] [inline|thread (the SQLite writer)]',
  );
const concurrency = Number(concurrencyArgument);

const log = await openSqliteEventLog({ file, durability: 'full', writer: /** @type {'inline' | 'thread'} */ (writer) });
const bootId = `crash-child-${process.pid}-${randomUUID()}`;
const coordinator = await DurableCoordinator.open({
  log,
  namespace: 'crash',
  clock: createMonotonicClock(bootId),
  defaultTtlMillis: 60_000,
});
process.stdout.write(`ready ${bootId}\n`);

let next = 0;
/** One worker: acquires a fresh resource, prints the grant once acknowledged, repeats. */
async function worker() {
  for (;;) {
    const index = next++;
    const resource = `resource-${bootId}-${index}`;
    const requestId = `request-${index}`;
    const holderId = `holder-${index % 7}`;
    const outcome = await coordinator.acquire({ resource, holderId, requestId });
    if (outcome.ok) process.stdout.write(`grant ${resource} ${holderId} ${outcome.grant.fence} ${requestId}\n`);
  }
}
await Promise.all(Array.from({ length: concurrency }, () => worker()));
