/**
 * The disk fills up under the writer thread's grouped commits: the data dir is on a small tmpfs the
 * operator mounted (`mount` needs root, so the test runs only when `LEASE_FENCE_FAULT_DIR` names
 * such a mount point, e.g. `mount -t tmpfs -o size=8m tmpfs <dir>`). While SDK clients keep 32
 * operations in flight, the disk is filled (a filler file until ENOSPC); 3 s later the filler is
 * removed, the workload goes on, then the coordinator is killed -9 and restarted, and the journal
 * of every acknowledgement is checked against the log (`checkJournal` in
 * `test/support/ack-journal.ts`). What the coordinator did during the fault is printed. (A
 * read-only remount is refused by Linux while the log is open for writing: `mount point is busy`.)
 */
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkJournal, startJournaledWorkload } from '../support/ack-journal.js';
import { COORDINATOR_MAIN, startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';

const FAULT_DIR = process.env.LEASE_FENCE_FAULT_DIR;

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** Writes zeros into `file` until the file system is full; returns the bytes written. */
function fillUp(file: string): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(16 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}

describe.skipIf(!existsSync(COORDINATOR_MAIN) || FAULT_DIR === undefined)('the disk fills up mid-run', () => {
  it('acknowledges nothing it did not write, and recovers every acknowledgement after the fault and a kill -9', async () => {
    const dataDir = mkdtempSync(join(FAULT_DIR!, 'run-'));
    const filler = join(FAULT_DIR!, 'filler');
    const running: RunningCoordinator[] = [];
    const env = { PORT: '0', LEASE_FENCE_TTL_MILLIS: '60000', LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS: '500' };
    try {
      let coordinator = await startCoordinator({ dataDir, env });
      running.push(coordinator);
      const port = new URL(coordinator.url).port;
      const workload = startJournaledWorkload(coordinator.url, 2, 8);
      await workload.acknowledged(200);

      // Act: the fault, for 3 s
      const beforeFault = workload.journal.length;
      fillUp(filler);
      const logLinesBefore = coordinator.logs.length;
      await sleep(3000);
      const duringFault = workload.journal.length - beforeFault;
      rmSync(filler);
      const faultLines = coordinator.logs
        .slice(logLinesBefore)
        .map((line) => String(line.msg))
        .filter((msg, index, all) => all.indexOf(msg) === index);
      const alive = coordinator.child.exitCode === null && coordinator.child.signalCode === null;
      if (!alive) {
        coordinator = await startCoordinator({ dataDir, env: { ...env, PORT: port } });
        running.push(coordinator);
      }
      await workload.acknowledged(200);
      await coordinator.kill();
      coordinator = await startCoordinator({ dataDir, env: { ...env, PORT: port } });
      running.push(coordinator);
      await workload.acknowledged(40);
      await workload.stop();

      // Assert
      const { problems } = await checkJournal(coordinator.url, workload.journal);
      console.log(
        `disk full: ${workload.journal.length} acknowledgements checked, ${duringFault} during the 3 s fault; ` +
          `the coordinator ${alive ? 'stayed up' : 'exited'}; its log lines during the fault: ${JSON.stringify(faultLines)}`,
      );
      expect(problems).toEqual([]);
    } finally {
      for (const coordinator of running) await coordinator.cleanup();
      rmSync(filler, { force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
