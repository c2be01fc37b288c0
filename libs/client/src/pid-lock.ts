/**
 * One process per guarded file or directory: a pid lock file (`acquirePidLock`), taken at start-up
 * BEFORE the guarded state is read and held for the process lifetime. The coordinator locks its
 * SQLite log with it (`<log>.lock`), the gate sidecar its data directory (`gate.lock`), so a
 * second process started on the same state by mistake refuses to start, naming the holder.
 *
 * Why a pid file and not a library: `proper-lockfile` (the usual choice) keeps a lock alive by
 * rewriting its mtime on a timer and calls it stale only after `stale` ms (at least 2 s), so every
 * restart after a crash (`kill -9`, OOM) would wait out that delay, a long event-loop stall could
 * let a second process steal a live lock, and it records no pid for the message; its last release
 * is from 2021. Node has no `flock`. A pid file à la PostgreSQL's `postmaster.pid` frees a crashed
 * owner's lock at once:
 * - taken atomically: the owner record is written and fsynced to a temporary file, then
 *   `link()`ed to the lock path, which fails with `EEXIST` if it exists (so the lock file is never
 *   seen half-written);
 * - an existing lock is stale when its owner is gone: same host, and the machine rebooted (Linux
 *   boot id), or the pid is not running (a zombie, killed but not yet reaped by its parent, counts
 *   as not running), or the pid now belongs to a process started at another
 *   time (Linux `/proc/<pid>/stat`), or the pid is our own (a restarted container's pid 1);
 * - an owner on another host (a shared volume) cannot be checked: the lock counts as held, and the
 *   message says which file to delete if no such process runs there;
 * - a stale lock is removed only if it is still the record that was judged stale: it is first
 *   `rename()`d (atomic) to a name of this process's own and compared; a fresh lock that another
 *   starting process linked in the meantime is put back (`link()`, so it never replaces a
 *   third one) and this one refuses, naming that owner;
 * - released (unlinked, if still ours) by `release()`, which the caller runs at exit.
 *
 * Limits: a fresh lock moved aside is absent for one rename + link; if a third process links
 * its lock in that instant, the fresh lock cannot be put back and two processes believe they
 * hold the lock. The coordinator's expected-version check then supersedes one of them
 * (docs/design.md § "Persist before ack, single writer"); a gate's floor never goes down either way.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';

/** Who holds a lock: written as JSON into the lock file. */
export interface PidLockOwner {
  /** Process id of the owner. */
  readonly pid: number;
  /** Host name of the owner's machine (container). */
  readonly hostname: string;
  /** Linux boot id of the owner's machine (`/proc/sys/kernel/random/boot_id`); absent elsewhere. */
  readonly bootId?: string;
  /** Start time of the owner process in clock ticks since boot (`/proc/<pid>/stat` field 22); absent elsewhere. */
  readonly startTicks?: string;
  /** When the lock was taken: wall-clock epoch milliseconds, for people only. */
  readonly sinceWallMillis: number;
}

/** How the lock sees processes; injected by tests. */
export interface ProcessProbe {
  /** This process as a lock owner (without `sinceWallMillis`). */
  self(): Omit<PidLockOwner, 'sinceWallMillis'>;
  /** Whether process `pid` on this machine runs, and its start time in ticks when known. */
  inspect(pid: number): { readonly running: boolean; readonly startTicks?: string };
}

/** A held lock. */
export interface PidLock {
  /** The lock file. */
  readonly lockFile: string;
  /** The owner whose stale lock (its process gone) was replaced, if one was. */
  readonly replacedStale: PidLockOwner | undefined;
  /** Removes the lock file if it is still ours. Idempotent; synchronous, so it can run in `process.on('exit')`. */
  release(): void;
}

/** Options of {@link acquirePidLock}: how its refusals name things, and the process probe. */
export interface PidLockOptions {
  /** What kind of process holds the lock, for messages: `"coordinator"`, `"gate"`. */
  readonly holderKind: string;
  /** What the lock guards, for messages: the log file, the data directory. */
  readonly guarded: string;
  /** What to do about a live holder, for messages: `"stop it or use another LEASE_FENCE_DATA_DIR"`. */
  readonly advice: string;
  /** How processes are inspected. @defaultValue the real machine ({@link systemProbe}) */
  readonly probe?: ProcessProbe;
}

/**
 * Thrown by {@link acquirePidLock} when another process holds the lock (or the lock file cannot be
 * read, so that cannot be ruled out). Nothing was written but the attempt's own temporary file,
 * removed again.
 */
export class PidLockedError extends Error {
  /** Stable error code. */
  readonly code = 'pid-locked';

  /**
   * @param lockFile - The lock file.
   * @param owner - The holder, when the lock file could be read.
   * @param options - How the message names the holder's kind, what is guarded and the advice.
   * @param detail - Extra advice (why the owner cannot be checked, which file to delete).
   */
  constructor(
    readonly lockFile: string,
    readonly owner: PidLockOwner | undefined,
    options: Pick<PidLockOptions, 'holderKind' | 'guarded' | 'advice'>,
    readonly detail?: string,
  ) {
    const who =
      owner === undefined ? `another ${options.holderKind}` : `another ${options.holderKind} (pid ${owner.pid})`;
    super(`${who} holds ${options.guarded}; ${options.advice}${detail === undefined ? '' : ` (${detail})`}`);
    this.name = 'PidLockedError';
  }
}

/** Tries to take the lock (replacing a stale one each time) before giving up. */
const MAX_ATTEMPTS = 3;

/** Lock files held by this process: a second acquire in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * Takes the pid lock `lockFile` for this process.
 *
 * @param lockFile - The lock file (its directory must exist).
 * @param options - How refusals name things; the process probe.
 * @returns the held lock; call `release()` at exit (`process.on('exit', () => lock.release())`).
 * @throws {@link PidLockedError} when a live process holds it (this one included), one on another
 *   host may, or the lock file is unreadable or not a lock file.
 * @throws the file system's error when the directory is not writable, or a stale lock moved aside
 *   to be compared cannot be read (it is put back, so another process's fresh lock is never lost).
 * @example
 * ```ts
 * const lock = acquirePidLock(join(dataDir, 'my-app.lock'), {
 *   holderKind: 'my-app',
 *   guarded: `the data directory ${dataDir}`,
 *   advice: 'stop it or use another data directory',
 * });
 * process.on('exit', () => lock.release());
 * ```
 */
export function acquirePidLock(lockFile: string, options: PidLockOptions): PidLock {
  const probe = options.probe ?? systemProbe;
  const refuse = (owner: PidLockOwner | undefined, detail?: string): PidLockedError =>
    new PidLockedError(lockFile, owner, options, detail);
  const self: PidLockOwner = { ...probe.self(), sinceWallMillis: Date.now() };
  if (heldHere.has(lockFile)) throw refuse(self);
  const record = `${JSON.stringify(self)}\n`;
  const temporary = `${lockFile}.${self.pid}.tmp`;
  writeDurably(temporary, record);
  let replacedStale: PidLockOwner | undefined;
  try {
    for (let attempt = 1; ; attempt += 1) {
      if (attempt > MAX_ATTEMPTS)
        throw refuse(undefined, `its lock file keeps changing: another ${options.holderKind} is starting`);
      try {
        linkSync(temporary, lockFile);
        break;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const found = readOwner(lockFile, refuse, options.holderKind);
      if (found === undefined) continue; // released in between
      const stale = isStale(found.owner, self, probe, options.holderKind);
      if (stale !== true) throw refuse(found.owner, stale === false ? undefined : stale.detail);
      removeIfStill(lockFile, found.text, `${lockFile}.${self.pid}.stale`, refuse, options.holderKind);
      replacedStale = found.owner;
    }
  } finally {
    removeIfExists(temporary);
  }
  heldHere.add(lockFile);
  let released = false;
  return {
    lockFile,
    replacedStale,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(lockFile);
      try {
        if (readFileSync(lockFile, 'utf8') === record) unlinkSync(lockFile);
      } catch {
        // already gone, or unreadable: not ours to remove
      }
    },
  };
}

/** Builds the refusal of one acquire, naming `owner` when known. */
type Refuse = (owner: PidLockOwner | undefined, detail?: string) => PidLockedError;

/**
 * Whether the lock of `owner` is stale (its process is gone): `true`, `false` (held), or
 * `{ detail }` when it cannot be checked and so counts as held.
 */
function isStale(
  owner: PidLockOwner,
  self: PidLockOwner,
  probe: ProcessProbe,
  holderKind: string,
): true | false | { readonly detail: string } {
  if (owner.hostname !== self.hostname) {
    return {
      detail: `its lock file names host ${JSON.stringify(owner.hostname)}, which this one cannot check; if no ${holderKind} runs there, delete the lock file`,
    };
  }
  if (owner.bootId !== undefined && self.bootId !== undefined && owner.bootId !== self.bootId) return true; // the machine rebooted
  if (owner.pid === self.pid) return true; // our pid, and we do not hold it: an earlier life of this pid (a restarted container)
  const seen = probe.inspect(owner.pid);
  if (!seen.running) return true;
  if (owner.startTicks !== undefined && seen.startTicks !== undefined && owner.startTicks !== seen.startTicks)
    return true; // pid reused
  return false;
}

/**
 * Removes the lock file only if it still holds `staleText` (the record judged stale): moves it to
 * `aside` (rename is atomic), compares, and puts a different record back.
 * @throws {@link PidLockedError} naming the new owner when the lock was replaced in between (it is
 *   put back), or when it could not be put back because yet another lock was linked meanwhile.
 * @throws the file system's error when the record moved aside cannot be read; it is put back first.
 */
function removeIfStill(lockFile: string, staleText: string, aside: string, refuse: Refuse, holderKind: string): void {
  try {
    renameSync(lockFile, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return; // already removed by another starting process
    throw error;
  }
  let movedText: string | undefined;
  try {
    movedText = readFileSync(aside, 'utf8');
  } finally {
    // Only a record compared equal to the stale one is removed: a fresh lock taken in between, or
    // one that could not be read to compare (an I/O error), goes back first.
    if (movedText !== staleText) putBack(aside, lockFile);
    removeIfExists(aside);
  }
  if (movedText === staleText) return;
  throw refuse(parseOwner(lockFile, movedText, refuse, holderKind));
}

/** Links the lock moved `aside` back to `lockFile`; never over a lock linked there meanwhile. */
function putBack(aside: string, lockFile: string): void {
  try {
    linkSync(aside, lockFile);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  }
}

/** Reads the owner record and its text; `undefined` when the file vanished. */
function readOwner(
  lockFile: string,
  refuse: Refuse,
  holderKind: string,
): { owner: PidLockOwner; text: string } | undefined {
  let text: string;
  try {
    text = readFileSync(lockFile, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw refuse(undefined, `cannot read ${lockFile}: ${(error as Error).message}`);
  }
  return { owner: parseOwner(lockFile, text, refuse, holderKind), text };
}

/**
 * Parses an owner record.
 * @throws {@link PidLockedError} when `text` is not a record this lock wrote.
 */
function parseOwner(lockFile: string, text: string, refuse: Refuse, holderKind: string): PidLockOwner {
  try {
    const owner = JSON.parse(text) as Partial<PidLockOwner>;
    if (Number.isSafeInteger(owner.pid) && typeof owner.hostname === 'string') return owner as PidLockOwner;
  } catch {
    // fall through
  }
  throw refuse(
    undefined,
    `${lockFile} is not a lock file this ${holderKind} wrote; if no ${holderKind} uses it, delete it`,
  );
}

function writeDurably(file: string, text: string): void {
  const fd = openSync(file, 'w', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeIfExists(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

/** Reads a `/proc` file; `undefined` where there is none (not Linux) or it cannot be read. */
const readProc = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * Fields 3 (`state`) and 22 (`starttime`) of `/proc/<pid>/stat`; the command name (field 2) may
 * hold spaces and parentheses, so fields are counted from its closing parenthesis.
 */
const procStatOf = (pid: number | 'self'): { readonly state?: string; readonly startTicks?: string } | undefined => {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startTicks: fields[19] };
};

/**
 * Process states of a process that has ended but whose parent has not reaped it yet: `Z` (zombie)
 * and `X` (dead). `kill(pid, 0)` still succeeds for it, but it holds nothing any more: its files
 * are closed and it will never run again.
 */
const ENDED_STATES = new Set(['Z', 'X']);

/**
 * The real machine: `process.kill(pid, 0)` for liveness, `/proc` (where there is one) for a
 * process that has ended but is not reaped yet (a zombie counts as gone), and for boot and start
 * times.
 */
export const systemProbe: ProcessProbe = {
  self() {
    const bootId = readProc('/proc/sys/kernel/random/boot_id')?.trim();
    const startTicks = procStatOf('self')?.startTicks;
    return {
      pid: process.pid,
      hostname: osHostname(),
      ...(bootId === undefined ? {} : { bootId }),
      ...(startTicks === undefined ? {} : { startTicks }),
    };
  },
  inspect(pid) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if (errorCode(error) !== 'EPERM') return { running: false }; // ESRCH: no such process
    }
    const stat = procStatOf(pid);
    if (stat?.state !== undefined && ENDED_STATES.has(stat.state)) return { running: false };
    return { running: true, ...(stat?.startTicks === undefined ? {} : { startTicks: stat.startTicks }) };
  },
};
