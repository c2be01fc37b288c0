/**
 * Stopping child processes by PID, and waiting for them to be gone.
 */
import type { ChildProcess } from 'node:child_process';

/** How a child ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Resolves when `child` has exited (at once if it already has). */
export function waitForExit(child: ChildProcess): Promise<ChildExit> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Sends `signal` to the child's PID and waits for it to exit. A child that is still running
 * after `timeoutMillis` is killed with SIGKILL (and the promise still resolves with how it ended).
 *
 * @param child - A child started by this process.
 * @param signal - `SIGTERM` for a graceful stop, `SIGKILL` for a crash (`kill -9`).
 * @param timeoutMillis - Grace before SIGKILL. @defaultValue 10 000
 */
export async function stopByPid(
  child: ChildProcess,
  signal: NodeJS.Signals,
  timeoutMillis = 10_000,
): Promise<ChildExit> {
  const exited = waitForExit(child);
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return exited;
  try {
    process.kill(child.pid, signal);
  } catch {
    return exited; // already gone
  }
  const timer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }, timeoutMillis);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
