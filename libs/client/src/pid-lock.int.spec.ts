import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  acquirePidLock,
  PidLockedError,
  type PidLock,
  type PidLockOwner,
  type ProcessProbe,
  systemProbe,
} from './pid-lock.js';

/** What the coordinator's lock of its log says (apps/coordinator `acquireLogLock` wraps it so). */
const acquireLogLock = (logFile: string, probe?: ProcessProbe): PidLock =>
  acquirePidLock(`${logFile}.lock`, {
    holderKind: 'coordinator',
    guarded: logFile,
    advice: 'stop it or use another LEASE_FENCE_DATA_DIR/LEASE_FENCE_NAMESPACE',
    ...(probe === undefined ? {} : { probe }),
  });

let dir: string;
let logFile: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lease-fence-lock-'));
  logFile = join(dir, 'default.events.sqlite');
});

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** A live process of this machine other than this one, and its start time. */
function liveProcess(): Promise<{ pid: number; startTicks?: string }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); process.stdout.write("up")'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  return new Promise((resolve) =>
    child.stdout!.once('data', () => {
      const seen = systemProbe.inspect(child.pid!);
      resolve({ pid: child.pid!, ...(seen.startTicks === undefined ? {} : { startTicks: seen.startTicks }) });
    }),
  );
}

/**
 * Waits until `pid` is a zombie (`Z` in `/proc/<pid>/stat`: killed, not reaped); false where there
 * is no `/proc`. The kernel marks it as soon as the SIGKILL is delivered, so this ends quickly.
 */
async function becomesZombie(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return false;
    }
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`pid ${pid} did not become a zombie`);
}

/** Writes a lock file as another coordinator would have. */
const writeLock = (owner: Partial<PidLockOwner>): void => {
  writeFileSync(`${logFile}.lock`, JSON.stringify({ ...systemProbe.self(), sinceWallMillis: 0, ...owner }));
};

describe('acquirePidLock', () => {
  it('takes a free lock, records this process in it, and removes it on release', () => {
    // Act
    const lock = acquireLogLock(logFile);

    // Assert
    expect(JSON.parse(readFileSync(lock.lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    expect(lock.replacedStale).toBeUndefined();
    lock.release();
    expect(existsSync(lock.lockFile)).toBe(false);
    lock.release(); // idempotent
  });

  it('refuses while a live process holds it, naming its pid and the log, and leaves its lock file alone', async () => {
    // Arrange
    const owner = await liveProcess();
    writeLock(owner);
    const before = readFileSync(`${logFile}.lock`, 'utf8');

    // Act
    const attempt = () => acquireLogLock(logFile);

    // Assert
    expect(attempt).toThrow(PidLockedError);
    expect(attempt).toThrow(
      `another coordinator (pid ${owner.pid}) holds ${logFile}; stop it or use another LEASE_FENCE_DATA_DIR/LEASE_FENCE_NAMESPACE`,
    );
    expect(readFileSync(`${logFile}.lock`, 'utf8')).toBe(before);
  });

  it('refuses a second lock of the same log in the same process', () => {
    const lock = acquireLogLock(logFile);
    expect(() => acquireLogLock(logFile)).toThrow(PidLockedError);
    lock.release();
  });

  it('replaces the lock of a process that is gone (a crash), so a restart is not delayed', async () => {
    // Arrange: a process that exited
    const owner = await liveProcess();
    const child = children[0]!;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(owner.pid, 'SIGKILL');
    await exited;
    writeLock(owner);

    // Act
    const lock = acquireLogLock(logFile);

    // Assert
    expect(lock.replacedStale).toMatchObject({ pid: owner.pid });
    expect(JSON.parse(readFileSync(lock.lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('replaces the lock of a process killed but not yet reaped (a zombie), so a restart right after kill -9 is not refused', async () => {
    // Arrange: a parent that started the owner and is stopped, so it cannot reap it once it is killed
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `
      const owner = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      process.stdout.write(String(owner.pid));
      setInterval(() => {}, 1000);
    `,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(parent);
    const ownerPid = Number(
      await new Promise<string>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()))),
    );
    const { startTicks } = systemProbe.inspect(ownerPid);
    process.kill(parent.pid!, 'SIGSTOP');
    process.kill(ownerPid, 'SIGKILL');
    if (!(await becomesZombie(ownerPid))) return; // not Linux: no /proc to tell
    writeLock({ pid: ownerPid, ...(startTicks === undefined ? {} : { startTicks }) });

    // Act
    const lock = acquireLogLock(logFile);

    // Assert
    expect(lock.replacedStale).toMatchObject({ pid: ownerPid });
    lock.release();
  });

  it.each([
    ['the machine rebooted since (another boot id)', { bootId: 'an-earlier-boot' }],
    ['the pid now belongs to a process started at another time', { startTicks: '1' }],
  ])('replaces the lock of a live pid when %s', async (_name, change) => {
    // Arrange
    const owner = await liveProcess();
    const self = systemProbe.self();
    if (self.bootId === undefined || owner.startTicks === undefined) return; // not Linux: no /proc to tell
    writeLock({ ...owner, ...change });

    // Act / Assert
    const lock = acquireLogLock(logFile);
    expect(lock.replacedStale).toMatchObject({ pid: owner.pid });
    lock.release();
  });

  it('replaces a lock naming its own pid: an earlier life of this pid, e.g. a restarted container', () => {
    writeLock({ pid: process.pid, sinceWallMillis: 1 });
    const lock = acquireLogLock(logFile);
    expect(lock.replacedStale).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('counts a lock of another host as held (it cannot be checked) and says which file to delete', () => {
    // Arrange: a probe that would call every process gone
    const probe: ProcessProbe = {
      self: () => ({ ...systemProbe.self(), pid: 999_999 }),
      inspect: () => ({ running: false }),
    };
    writeLock({ pid: 42, hostname: 'other-host' });

    // Act / Assert
    expect(() => acquireLogLock(logFile, probe)).toThrow(
      /another coordinator \(pid 42\) holds .*; stop it .*other-host.*delete the lock file/,
    );
  });

  it('refuses a lock file it cannot read as an owner record rather than guessing', () => {
    writeFileSync(`${logFile}.lock`, 'not json');
    expect(() => acquireLogLock(logFile)).toThrow(
      /another coordinator holds .*is not a lock file this coordinator wrote/,
    );
  });

  it('leaves no temporary file behind', () => {
    writeLock({ pid: 42, hostname: 'other-host' });
    expect(() => acquireLogLock(logFile)).toThrow(PidLockedError);
    expect(readdirSync(dir)).toEqual(['default.events.sqlite.lock']);
  });
  it('refuses a second coordinator that judged the same stale lock while the first replaced it, and leaves the first its lock', () => {
    // Arrange: the lock of a crashed coordinator (pid 42); two starting coordinators, pids 1001 and
    // 1002. The second's liveness check of the dead owner runs while the first replaces the lock,
    // so both judged the same record stale (found by a new user's kill tests).
    writeLock({ pid: 42, sinceWallMillis: 1 });
    const probeOf = (pid: number, beforeAnswer: () => void = () => undefined): ProcessProbe => ({
      self: () => ({ ...systemProbe.self(), pid }),
      inspect: () => {
        beforeAnswer();
        return { running: false };
      },
    });
    let first: ReturnType<typeof acquireLogLock> | undefined;
    const second = probeOf(1002, () => {
      first ??= acquireLogLock(logFile, probeOf(1001));
    });

    try {
      // Act / Assert: the second sees the first's lock instead of removing it
      expect(() => acquireLogLock(logFile, second)).toThrow(/another coordinator \(pid 1001\) holds/);
      expect(first?.replacedStale?.pid).toBe(42);
      expect(JSON.parse(readFileSync(`${logFile}.lock`, 'utf8')).pid).toBe(1001);
      expect(readdirSync(dir)).toEqual(['default.events.sqlite.lock']);
    } finally {
      first?.release();
    }
  });
});
