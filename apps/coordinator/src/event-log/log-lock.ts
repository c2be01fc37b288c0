/**
 * One coordinator per SQLite log: the pid lock `<log>.lock` (`acquirePidLock` of
 * `@lease-fence/client/pid-lock`, the one copy of the mechanism, shared with the gate sidecar),
 * taken at start-up BEFORE the log is opened and held for the process lifetime.
 *
 * Without it, a second coordinator started on the same data directory and namespace replays the
 * log and appends its `CoordinatorStarted`, and the running one's next append conflicts: it is
 * superseded for good (docs/design.md § single writer). The expected-version check stays the safety
 * net; this lock turns the operator's mistake into a clear refusal before anything is touched.
 *
 * It lives in the coordinator, not in `@lease-fence/event-log-sqlite`: an event-log adapter may
 * not import the SDK (`.dependency-cruiser.cjs`, adapters-only-core-and-protocol).
 */
import {
  acquirePidLock,
  PidLockedError,
  type PidLock,
  type PidLockOwner,
  type ProcessProbe,
} from '@lease-fence/client/pid-lock';

/** A held log lock. */
export type LogLock = PidLock;

/**
 * Thrown by {@link acquireLogLock} when another coordinator holds the log (or the lock file cannot
 * be read, so that cannot be ruled out). Nothing was opened or written.
 */
export class LogLockedError extends Error {
  /** Stable error code. */
  readonly code = 'log-locked';

  /**
   * @param logFile - The SQLite log the lock protects.
   * @param lockFile - The lock file.
   * @param owner - The holder, when the lock file could be read.
   * @param message - The refusal, naming the holder and what to do.
   */
  constructor(
    readonly logFile: string,
    readonly lockFile: string,
    readonly owner: PidLockOwner | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'LogLockedError';
  }
}

/**
 * Takes the lock of `logFile` for this process.
 *
 * @param logFile - The SQLite log (its directory must exist); the lock is `<logFile>.lock`.
 * @param probe - How processes are inspected; the real machine when omitted.
 * @returns the held lock; call `release()` at exit.
 * @throws {@link LogLockedError} when a live coordinator holds it, one on another host may, or the lock file is unreadable.
 * @throws the file system's error when the directory is not writable.
 */
export function acquireLogLock(logFile: string, probe?: ProcessProbe): LogLock {
  try {
    return acquirePidLock(`${logFile}.lock`, {
      holderKind: 'coordinator',
      guarded: logFile,
      advice: 'stop it or use another LEASE_FENCE_DATA_DIR/LEASE_FENCE_NAMESPACE',
      ...(probe === undefined ? {} : { probe }),
    });
  } catch (error) {
    if (error instanceof PidLockedError) throw new LogLockedError(logFile, error.lockFile, error.owner, error.message);
    throw error;
  }
}
