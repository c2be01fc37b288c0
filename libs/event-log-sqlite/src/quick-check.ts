/**
 * `PRAGMA quick_check` on a worker thread, overlapped with recovery's replay.
 *
 * Why a worker: `quick_check` reads every page of the file (about a fifth of a raw read of every
 * row at 1M events), and better-sqlite3 is synchronous, so on the opening thread it holds the
 * event loop before the first row is replayed. During start-up the replay keeps one core busy
 * and a second one is idle: the check runs there, on its own read-only connection (WAL lets a
 * reader run beside the replay's reads), and start-up takes the longer of the two instead of
 * their sum.
 *
 * The guarantee is unchanged: nothing is written to a file the check has not passed. The log
 * that started the check awaits it before every append and snapshot, so recovery's
 * `CoordinatorStarted` (and with it readiness, and every grant) waits for it; a failed check
 * makes that append, and every later read, throw the same {@link EventLogCorruptError} an open
 * on the main thread would have thrown, and the coordinator refuses to start.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { quickCheckError } from './schema.js';
import { toEventLogError } from './to-event-log-error.js';

/**
 * The worker's code, evaluated as a CommonJS script (`eval: true`) rather than loaded from a
 * file: a file beside this module would be a `.ts` file under the test runner and a `.js` file
 * in `dist`, and a bundler would not follow it. It loads the same better-sqlite3 the adapter
 * uses (its resolved path comes in `workerData`).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
try {
  const Database = require(workerData.driverPath);
  db = new Database(workerData.file, { readonly: true, fileMustExist: true, timeout: workerData.busyTimeoutMillis });
  parentPort.postMessage({ problems: db.prepare('PRAGMA quick_check').pluck().all() });
} catch (error) {
  parentPort.postMessage({ failed: true });
} finally {
  if (db !== undefined) db.close();
}
`;

/** A `quick_check` running on a worker. */
export interface BackgroundQuickCheck {
  /**
   * Settles when the check is done: `undefined` when the file passed, else the refusal
   * ({@link quickCheckError}, or the port error SQLite's own failure translates to). Never
   * rejects: when the worker cannot run the check (it could not start or open the file),
   * `runInline` runs it on the caller's connection instead.
   */
  readonly result: Promise<Error | undefined>;
  /** Stops the worker (the log was closed before the check ended); `result` then settles `undefined`. */
  stop(): Promise<void>;
}

/**
 * Starts `quick_check` of `file` on a worker thread.
 * @param runInline - the same check on the caller's connection, for when the worker cannot run
 *   it; its `problems` go through {@link quickCheckError} the same way.
 */
export function startQuickCheck(
  file: string,
  busyTimeoutMillis: number,
  runInline: () => readonly string[],
): BackgroundQuickCheck {
  const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driverPath, busyTimeoutMillis } });
  let stopped = false;
  const result = new Promise<Error | undefined>((resolve) => {
    let settled = false;
    const settle = (problems: readonly string[] | undefined): void => {
      if (settled) return;
      settled = true;
      if (stopped) return resolve(undefined);
      try {
        // The worker could not run the check: run it here, so the guarantee never depends on it.
        resolve(quickCheckError(problems ?? runInline()));
      } catch (error) {
        const translated = toEventLogError(error, 'quick_check');
        resolve(translated instanceof Error ? translated : new Error(String(translated)));
      }
    };
    worker.once('message', (message: { problems?: string[]; failed?: true }) => settle(message.problems));
    worker.once('error', () => settle(undefined));
    worker.once('exit', () => settle(undefined));
  });
  return {
    result,
    async stop() {
      stopped = true;
      await worker.terminate();
    },
  };
}
