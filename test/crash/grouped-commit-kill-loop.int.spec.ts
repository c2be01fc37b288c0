/**
 * kill -9 of the coordinator, again and again, while SDK clients over agent links keep acquires,
 * renewals and releases in flight (the writer thread's grouped commits mid-batch, and snapshot
 * saves: `LEASE_FENCE_SNAPSHOT_EVERY` is small so saves come often). Each client resends its
 * operations in flight with the same requestId on the next connection. After the last restart the
 * client-side journal of every acknowledgement is checked against the log (`checkJournal` in
 * `test/support/ack-journal.ts`: nothing acknowledged lost, fences strictly increasing, none
 * handed out twice, no lease both released and live). `KILL_LOOP_CYCLES` (default 20) sets the
 * number of kills, `KILL_LOOP_SNAPSHOT_EVERY` (default 50) the events between snapshots. The same
 * with SIGTERM instead (half as many stops): the shutdown must exit 0 and lose nothing acknowledged.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkJournal, startJournaledWorkload } from '../support/ack-journal.js';
import { COORDINATOR_MAIN, type RunningCoordinator } from '../support/coordinator-process.js';
import { coordinatorsOnOneDataDir } from '../support/one-data-dir.js';

const { start } = coordinatorsOnOneDataDir('lease-fence-grouped-kill-loop-', {
  LEASE_FENCE_TTL_MILLIS: '60000',
  LEASE_FENCE_SNAPSHOT_EVERY: process.env.KILL_LOOP_SNAPSHOT_EVERY ?? '50',
});

const CYCLES = Number(process.env.KILL_LOOP_CYCLES ?? 20);

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

describe.skipIf(!existsSync(COORDINATOR_MAIN))('grouped commits through repeated kill -9', () => {
  it(
    'loses no acknowledged acquire, renewal or release, and never hands out a fence twice',
    async () => {
      // Arrange: 6 links (3 per agent), 8 operation loops each: 48 operations in flight
      let coordinator: RunningCoordinator = await start({ PORT: '0' });
      const port = new URL(coordinator.url).port;
      const workload = startJournaledWorkload(coordinator.url, 3, 8);

      // Act: kill -9 at a random moment after 40 more acknowledgements, restart on the same port and log
      for (let cycle = 0; cycle < CYCLES; cycle += 1) {
        await workload.acknowledged(40);
        await sleep(Math.floor(Math.random() * 300));
        const crash = await coordinator.kill();
        expect(crash.signal).toBe('SIGKILL');
        coordinator = await start({ PORT: port });
      }
      await workload.acknowledged(40);
      await workload.stop();

      // Assert
      const { problems, events } = await checkJournal(coordinator.url, workload.journal);
      await coordinator.stop(); // the data dir is shared with the next test: free its lock
      const snapshots = events.filter(({ event }) => event.type === 'SnapshotTaken').length;
      console.log(
        `kill loop: ${CYCLES} kills, ${workload.operationsSent} operations sent, ${workload.journal.length} acknowledgements checked ` +
          `(${workload.journal.filter((ack) => ack.kind === 'acquire').length} grants), ${events.length} events, ${snapshots} snapshots`,
      );
      expect(problems).toEqual([]);
    },
    20 * 60_000,
  );
  it(
    'loses nothing acknowledged and exits 0 when stopped with SIGTERM mid-batch, again and again',
    async () => {
      // Arrange: as above; the shutdown lets the appends in flight finish (or answers them 503)
      let coordinator: RunningCoordinator = await start({ PORT: '0' });
      const port = new URL(coordinator.url).port;
      const workload = startJournaledWorkload(coordinator.url, 3, 8);
      const exits: (number | null)[] = [];

      // Act
      for (let cycle = 0; cycle < Math.ceil(CYCLES / 2); cycle += 1) {
        await workload.acknowledged(40);
        await sleep(Math.floor(Math.random() * 300));
        exits.push((await coordinator.stop()).code);
        coordinator = await start({ PORT: port });
      }
      await workload.acknowledged(40);
      await workload.stop();

      // Assert
      const { problems } = await checkJournal(coordinator.url, workload.journal);
      await coordinator.stop();
      console.log(
        `stop loop: ${exits.length} SIGTERMs, ${workload.journal.length} acknowledgements checked, exit codes ${JSON.stringify(exits)}`,
      );
      expect(problems).toEqual([]);
      expect(exits.every((code) => code === 0)).toBe(true);
    },
    20 * 60_000,
  );
});
