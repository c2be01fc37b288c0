import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemProbe } from '@lease-fence/client/pid-lock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLogLock, LogLockedError } from './log-lock.js';

let dir: string;
let logFile: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lease-fence-log-lock-'));
  logFile = join(dir, 'default.events.sqlite');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The mechanism is `acquirePidLock` (libs/client, tested there); this is the coordinator's wording of it. */
describe('acquireLogLock', () => {
  it('takes `<log>.lock` and removes it on release', () => {
    const lock = acquireLogLock(logFile);
    expect(lock.lockFile).toBe(`${logFile}.lock`);
    lock.release();
    expect(existsSync(`${logFile}.lock`)).toBe(false);
  });

  it('refuses a held log with a LogLockedError naming the holder, the log and the variables to change', () => {
    // Arrange: a live coordinator (pid 4242 on this host, which the probe says runs)
    writeFileSync(`${logFile}.lock`, JSON.stringify({ ...systemProbe.self(), pid: 4242, sinceWallMillis: 0 }));
    const probe = { self: () => systemProbe.self(), inspect: () => ({ running: true }) };

    // Act
    let refusal: unknown;
    try {
      acquireLogLock(logFile, probe);
    } catch (error) {
      refusal = error;
    }

    // Assert
    expect(refusal).toBeInstanceOf(LogLockedError);
    expect(refusal).toMatchObject({
      code: 'log-locked',
      logFile,
      lockFile: `${logFile}.lock`,
      owner: { pid: 4242 },
      message: `another coordinator (pid 4242) holds ${logFile}; stop it or use another LEASE_FENCE_DATA_DIR/LEASE_FENCE_NAMESPACE`,
    });
  });

  it('refuses a second lock of the same log in the same process', () => {
    const lock = acquireLogLock(logFile);
    expect(() => acquireLogLock(logFile)).toThrow(LogLockedError);
    lock.release();
  });
});
