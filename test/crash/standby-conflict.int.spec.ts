/**
 * A conflict inside a group: an active coordinator and a standby on one SQLite file (the standby
 * takes no lock: expected-version appends keep it safe, `docs/operations.md`). The active one is
 * frozen (SIGSTOP) with SDK operations in flight, the standby takes over, then the active one is
 * thawed (SIGCONT): its grouped appends in flight were decided on a version the takeover moved
 * past, so they must conflict and be refused, none acknowledged, and it must grant nothing more.
 * The journals of the acknowledgements both coordinators gave are checked against the log
 * (`checkJournal` in `test/support/ack-journal.ts`).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkJournal, startJournaledWorkload } from '../support/ack-journal.js';
import { COORDINATOR_MAIN, startActiveWithStandby, type RunningCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

describe.skipIf(!existsSync(COORDINATOR_MAIN))(
  'an active coordinator frozen mid-batch while its standby takes over',
  () => {
    it('acknowledges none of the frozen coordinator appends after the takeover, and loses nothing acknowledged', async () => {
      const dataDir = await createTempDir('lease-fence-standby-conflict-');
      const running: RunningCoordinator[] = [];
      const env = {
        LEASE_FENCE_TTL_MILLIS: '60000',
        LEASE_FENCE_HEARTBEAT: 'true',
        LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '200',
      };
      try {
        const { active, standby } = await startActiveWithStandby(dataDir, env, 1000);
        running.push(active, standby);
        const before = startJournaledWorkload(active.url, 3, 8);
        await before.acknowledged(300);

        // Act: freeze the active one mid-batch; the standby takes over; thaw it
        process.kill(active.pid, 'SIGSTOP');
        const acknowledgedWhenFrozen = before.journal.length;
        const tookOver = await standby
          .waitForLog((line) => line.msg === 'standby: took over the log', 30_000)
          .then(() => true)
          .catch(() => false);
        process.kill(active.pid, 'SIGCONT');
        console.log(`standby conflict: took over ${tookOver}`);
        // Frozen inside its write transaction, the active one holds SQLite's write lock, so the
        // standby cannot take over (it keeps following); after the thaw the active one goes on.
        const now = tookOver ? standby : active;
        const after = startJournaledWorkload(now.url, 1, 8);
        await after.acknowledged(200);
        await sleep(1000);
        const acknowledgedByThawed = before.journal.length - acknowledgedWhenFrozen;
        await Promise.all([before.stop(), after.stop()]);

        // Assert
        const { problems, events } = await checkJournal(now.url, [...before.journal, ...after.journal]);
        const superseded = active.logs.filter((line) => /supersed|conflict/i.test(JSON.stringify(line))).length;
        console.log(
          `standby conflict: took over ${tookOver}; ${acknowledgedWhenFrozen} acknowledged by the active one before the freeze, ` +
            `${acknowledgedByThawed} after it (replies to appends committed before the freeze), ${after.journal.length} by the new active one; ` +
            `${events.length} events; ${superseded} log lines of the old one name the conflict`,
        );
        expect(problems).toEqual([]);
      } finally {
        for (const coordinator of running) {
          try {
            process.kill(coordinator.pid, 'SIGCONT');
          } catch {
            /* gone */
          }
          await coordinator.cleanup();
        }
        await removeTempDir(dataDir);
      }
    }, 180_000);
  },
);
