/**
 * A standby on one SQLite file whose write lock is held by a frozen process. A writer paused
 * (SIGSTOP, a frozen VM, a debugger) inside its write transaction keeps SQLite's write lock, and
 * no other process can break it: the standby's takeover waits the busy timeout, fails as
 * unavailable naming the lock, and keeps following; once the frozen process is killed, the next
 * attempt takes over. This is what `docs/operations.md` § "A standby coordinator" tells operators.
 * The frozen writer here is a plain process that holds `BEGIN IMMEDIATE` on the log, the state an
 * active coordinator is in when it is frozen mid-commit (`standby-conflict.int.spec.ts` freezes a
 * real one, but cannot choose the moment).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  COORDINATOR_MAIN,
  REPO_ROOT,
  startActiveWithStandby,
  type RunningCoordinator,
} from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

/** Starts a process that takes the log's write lock and stops itself (SIGSTOP) while holding it. */
async function freezeHoldingWriteLock(file: string): Promise<ChildProcess> {
  const source = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1], { fileMustExist: true });
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked', () => process.kill(process.pid, 'SIGSTOP'));`;
  const child = spawn(process.execPath, ['-e', source, file], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code}) before taking the lock`)));
  });
  return child;
}

describe.skipIf(!existsSync(COORDINATOR_MAIN))('a standby whose log is write-locked by a frozen process', () => {
  it('keeps following while the lock is held, says why, and takes over once the frozen process is killed', async () => {
    const dataDir = await createTempDir('lease-fence-standby-frozen-');
    const running: RunningCoordinator[] = [];
    let holder: ChildProcess | undefined;
    try {
      // Arrange: an active coordinator and its standby on one file; the active one dies, and
      // before the silence ends a frozen process holds the write lock
      const env = { LEASE_FENCE_HEARTBEAT: 'true', LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '200' };
      const { active, standby } = await startActiveWithStandby(dataDir, env, 1000);
      running.push(active, standby);
      await active.kill();
      holder = await freezeHoldingWriteLock(join(dataDir, 'default.events.sqlite'));

      // Act / Assert: the takeover is refused by the lock and the standby keeps following
      const blocked = await standby.waitForLog((line) => String(line.msg).startsWith('standby: taking over failed'));
      expect(blocked.msg).toMatch(/the log is unavailable: .*database is locked.*still following/);
      expect((await fetch(`${standby.url}/readyz`)).status).toBe(503);

      // Act / Assert: killed (a stopped process dies on SIGKILL), the lock is gone and the next attempt takes over
      holder.kill('SIGKILL');
      await standby.waitForLog((line) => line.msg === 'standby: took over the log', 30_000);
      await standby.waitForLog((line) => line.msg === 'ready', 30_000);
      expect((await fetch(`${standby.url}/readyz`)).status).toBe(200);
    } finally {
      holder?.kill('SIGKILL');
      for (const coordinator of running) await coordinator.cleanup();
      await removeTempDir(dataDir);
    }
  }, 120_000);
});
