import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * Reads of files whose name ends with this suffix fail with EIO while `failReads` is set: the
 * stale lock `pid-lock.ts` moves aside to compare is `<lock>.<pid>.stale`.
 */
const failing = vi.hoisted(() => ({ suffix: '.stale', failReads: false }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], options?: unknown) => {
    if (failing.failReads && String(path).endsWith(failing.suffix))
      throw Object.assign(new Error(`EIO: i/o error, read '${String(path)}'`), { code: 'EIO' });
    return fs.readFileSync(path, options as BufferEncoding);
  }) as typeof fs.readFileSync;
  return { ...fs, default: { ...fs, readFileSync }, readFileSync };
});

const { acquirePidLock, systemProbe } = await import('./pid-lock.js');

let dir: string;
let logFile: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lease-fence-lock-eio-'));
  logFile = join(dir, 'default.events.sqlite');
});

afterEach(async () => {
  failing.failReads = false;
  await rm(dir, { recursive: true, force: true });
});

describe('acquirePidLock when the stale lock moved aside cannot be read', () => {
  it('puts the moved lock back and fails with the read error, so a lock it could not compare is never deleted', async () => {
    // Arrange: the lock of a coordinator that is gone (pid 42), judged stale; the comparison's read fails
    const record = `${JSON.stringify({ ...systemProbe.self(), pid: 42, sinceWallMillis: 1 })}\n`;
    await writeFile(`${logFile}.lock`, record);
    const gone = { self: () => ({ ...systemProbe.self(), pid: 1001 }), inspect: () => ({ running: false }) };
    failing.failReads = true;

    // Act / Assert
    expect(() =>
      acquirePidLock(`${logFile}.lock`, {
        holderKind: 'coordinator',
        guarded: logFile,
        advice: 'stop it',
        probe: gone,
      }),
    ).toThrow(/EIO/);
    expect(await readFile(`${logFile}.lock`, 'utf8')).toBe(record);
    expect(await readdir(dir)).toEqual(['default.events.sqlite.lock']);
  });
});
