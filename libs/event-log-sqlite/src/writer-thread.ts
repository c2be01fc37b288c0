/**
 * The SQLite log's writer thread (`writer: 'thread'`): a worker (node:worker_threads) that owns
 * the write connection. The main thread encodes a batch's rows and posts them with the expected
 * version; the worker runs the same append rule as the inline writer ({@link appendRows}) in a
 * `BEGIN IMMEDIATE` transaction, commits (the fsync of `synchronous=FULL`), and replies with the
 * new version, the conflict, or the error. better-sqlite3 is synchronous, so on the main thread
 * the INSERTs, the COMMIT and its fsync hold the event loop; here they use another core while
 * the coordinator decides its next batch.
 *
 * Grouping: when the worker starts a transaction it takes every message already queued on its
 * port (`receiveMessageOnPort`), and writes the run of appends at the head of its queue in
 * **one** transaction with one COMMIT (one fsync), each append in a SAVEPOINT of its own. The
 * appends posted while a COMMIT waits on its fsync thus share the next one instead of queueing
 * one fsync each. Appends posted during a transaction wait for the next one: holding the COMMIT
 * back for them made each append slower (BENCHMARKS.md, "what a commit costs"). A snapshot save
 * is a transaction of its own, after the appends posted before it.
 *
 * Order: the worker handles messages in the order they were posted, checks the appends of a
 * group in that order (each one's expected version against the rows of the ones before it), and
 * replies in that order (one message per transaction), so appends apply in call order
 * (`EventLog.appendsInCallOrder`) and the expected-version check stays the source of truth.
 *
 * After a failed append (a conflict or an SQLite error), every append posted before the main
 * thread saw that failure is refused without being written: it was decided on a version that
 * does not exist. Each append carries the main thread's epoch, which moves past the failed
 * append's epoch when its reply arrives; the worker refuses appends of an epoch it saw fail. In
 * a group, a conflict writes nothing and an SQLite error rolls back to the append's savepoint,
 * so the appends before it stay in the transaction and are committed and acknowledged, and the
 * later ones of its epoch are refused. When the transaction as a whole fails (BEGIN, COMMIT, or
 * an error after which SQLite rolled the whole transaction back), no append of the group was
 * written: each is rejected with that error, and its epoch counts as failed.
 *
 * Lifecycle: the worker is a thread of this process and dies with it. It keeps the process alive
 * only while a write is in flight. `close()` lets every posted write finish, then closes the
 * connection and ends the thread. If the thread dies on its own, every write in flight and every
 * later one rejects with {@link EventLogUnavailableError} (a write in flight may have been
 * committed before the thread died: its outcome is unknown, and it is never acknowledged; the
 * test is `writer-thread-death.int.spec.ts`): the coordinator stops as 'unhealthy'
 * (nothing in flight acknowledged, their fences burned at the re-open) and the log handle starts
 * a new thread for its next write (see `sqlite-event-log.ts`).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { EventLogUnavailableError, type EncodedEvent } from '@lease-fence/coordinator-core';
import { appendRows, saveSnapshotRow, type AppendRowsResult } from './append-rows.js';
import { WRITE_SQL } from './statements.js';

/**
 * The worker's code, evaluated as a CommonJS script (`eval: true`) for the reason `quick-check.ts`
 * gives (a file beside this module would be `.ts` under the test runner). The append and snapshot
 * rules come in as source text of the functions the inline writer calls, so there is one copy.
 */
const WORKER_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const failure = (error) => ({
  message: String(error instanceof Error ? error.message : error),
  code: error instanceof Error && typeof error.code === 'string' ? error.code : undefined,
});
let db;
let appendGroup;
let snapshot;
// Appends of an epoch up to this one are refused unwritten: an append of that epoch failed.
let refusedThroughEpoch = -1;
try {
  const Database = require(workerData.driverPath);
  const appendRows = (0, eval)('(' + workerData.appendRowsSource + ')');
  const saveSnapshotRow = (0, eval)('(' + workerData.saveSnapshotRowSource + ')');
  db = new Database(workerData.file, { fileMustExist: true, timeout: workerData.busyTimeoutMillis });
  db.pragma('synchronous = ' + workerData.synchronous);
  const sql = workerData.sql;
  const statements = {
    version: db.prepare(sql.version).pluck(),
    insertEvent: db.prepare(sql.insertEvent),
    saveSnapshot: db.prepare(sql.saveSnapshot),
    pruneSnapshots: db.prepare(sql.pruneSnapshots),
  };
  // Called inside appendGroup's transaction, better-sqlite3 runs it in a SAVEPOINT: a throw rolls back this append only.
  const appendOne = db.transaction((m) => appendRows(statements, m.rows, m.expectedVersion, m.recordedAt));
  appendGroup = db.transaction((group) => {
    const replies = [];
    for (const m of group) {
      if (m.epoch <= refusedThroughEpoch) {
        replies.push({ refused: true });
        continue;
      }
      try {
        const result = appendOne(m);
        if (result.conflict) refusedThroughEpoch = m.epoch;
        replies.push({ result });
      } catch (error) {
        // SQLite rolled back the whole transaction (SQLITE_FULL, IOERR, ...): the earlier appends are gone too.
        if (!db.inTransaction) throw error;
        refusedThroughEpoch = m.epoch;
        replies.push({ error: failure(error) });
      }
    }
    return replies;
  });
  snapshot = db.transaction((m) => saveSnapshotRow(statements, m.position, m.schemaVersion, m.state, m.savedAt, m.kept));
} catch (error) {
  if (db !== undefined) db.close();
  db = undefined;
  parentPort.postMessage({ kind: 'open-failed', error: failure(error) });
}
if (db !== undefined) {
  // Messages taken from the port and not yet handled, in posting order.
  const pending = [];
  const takeQueued = () => {
    for (let next = receiveMessageOnPort(parentPort); next !== undefined; next = receiveMessageOnPort(parentPort)) {
      pending.push(next.message);
    }
  };
  parentPort.on('message', (message) => {
    pending.push(message);
    while (pending.length > 0) {
      // Before each transaction (never during one): every message already posted joins the queue.
      takeQueued();
      const head = pending[0];
      if (head.kind === 'close') {
        db.close();
        parentPort.postMessage({ kind: 'closed' });
        parentPort.close();
        return;
      }
      if (head.kind === 'snapshot') {
        pending.shift();
        try {
          parentPort.postMessage({ replies: [{ result: snapshot.immediate(head) }] });
        } catch (error) {
          parentPort.postMessage({ replies: [{ error: failure(error) }] });
        }
        continue;
      }
      let count = 1;
      while (count < pending.length && pending[count].kind === 'append') count += 1;
      const group = pending.splice(0, count);
      try {
        parentPort.postMessage({ replies: appendGroup.immediate(group) });
      } catch (error) {
        // BEGIN or COMMIT failed, or SQLite rolled the transaction back: nothing of the group was written.
        refusedThroughEpoch = Math.max(refusedThroughEpoch, group[group.length - 1].epoch);
        const reply = { error: failure(error) };
        parentPort.postMessage({ replies: group.map(() => reply) });
      }
    }
  });
  parentPort.postMessage({ kind: 'ready' });
}
`;

/** A reply of the worker to one write, in posting order. */
interface Reply {
  readonly result?: unknown;
  /** An SQLite failure: its message and result code (translated by the caller's `toEventLogError`). */
  readonly error?: { readonly message: string; readonly code: string | undefined };
  /** An append of an epoch in which an earlier append failed: not written. */
  readonly refused?: true;
}

/** A write posted to the worker, waiting for its reply. */
interface InFlightWrite {
  readonly epoch: number;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** Options of {@link startWriterThread}. */
export interface WriterThreadOptions {
  /** The database file (it exists and has its schema: the opening connection migrated it). */
  readonly file: string;
  /** How long a write waits for another connection's lock, in milliseconds. */
  readonly busyTimeoutMillis: number;
  /** The connection's `synchronous` level. */
  readonly synchronous: 'FULL' | 'NORMAL';
}

/** The main thread's handle on a running writer thread. */
export interface WriterThread {
  /**
   * Posts an append; settles with the worker's reply. Appends apply in call order.
   * @param recordedAt - wall clock of the append (epoch milliseconds, display only).
   * @returns {@link AppendRowsResult}: the new version, or the conflict (nothing written).
   * @throws (rejects) an `Error` with SQLite's `code` when the transaction failed;
   *   {@link EventLogUnavailableError} when an earlier append in flight failed (nothing written)
   *   or the thread stopped.
   */
  append(rows: readonly EncodedEvent[], expectedVersion: number, recordedAt: number): Promise<AppendRowsResult>;
  /**
   * Posts a snapshot save (after every append posted before it).
   * @throws (rejects) as {@link WriterThread.append}, without the refusal.
   */
  saveSnapshot(snapshot: {
    readonly position: number;
    readonly schemaVersion: number;
    readonly state: string;
    readonly savedAt: number;
    readonly kept: number;
  }): Promise<void>;
  /** Lets every posted write finish, closes the worker's connection and ends the thread. Idempotent. */
  close(): Promise<void>;
  /** Why the thread stopped on its own (every write rejects with it), or `undefined` while it runs. */
  readonly stoppedBy: EventLogUnavailableError | undefined;
  /**
   * Write transactions the worker has replied to since it started, committed or rolled back: one
   * per group of appends, one per snapshot save (diagnostics; the grouping's tests count them).
   */
  readonly transactions: number;
}

/**
 * Starts the writer thread on `file` and waits until its connection is open.
 * @throws an `Error` with SQLite's `code` when the worker cannot open the file;
 *   {@link EventLogUnavailableError} when the thread cannot start.
 */
export async function startWriterThread(options: WriterThreadOptions): Promise<WriterThread> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      file: options.file,
      busyTimeoutMillis: options.busyTimeoutMillis,
      synchronous: options.synchronous,
      driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
      sql: WRITE_SQL,
      appendRowsSource: appendRows.toString(),
      saveSnapshotRowSource: saveSnapshotRow.toString(),
    },
  });
  const inFlight: InFlightWrite[] = [];
  /** The epoch of appends posted now; moves past a failed append's epoch when its reply arrives. */
  let epoch = 0;
  /** Set when the thread stopped on its own: every write in flight and every later one rejects with it. */
  let stopped: EventLogUnavailableError | undefined;
  let closing: Promise<void> | undefined;
  /** Transactions the worker has run (one per reply message): see {@link WriterThread.transactions}. */
  let transactions = 0;
  let onClosed: (() => void) | undefined;

  await new Promise<void>((resolve, reject) => {
    // Only these listeners are removed: Worker keeps internal ones of its own.
    const detach = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const fail = (message: string, cause?: unknown): void => {
      detach();
      void worker.terminate();
      reject(new EventLogUnavailableError('sqlite', { message: `the writer thread did not start: ${message}`, cause }));
    };
    const onMessage = (message: { kind: 'ready' } | { kind: 'open-failed'; error: Reply['error'] }): void => {
      detach();
      if (message.kind === 'ready') return resolve();
      void worker.terminate();
      reject(Object.assign(new Error(message.error!.message), { code: message.error!.code }));
    };
    const onError = (error: Error): void => fail(error.message, error);
    const onExit = (code: number): void => fail(`exited with code ${code}`);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });

  /** Settles the oldest write in flight with its reply (replies come in posting order). */
  const settle = (reply: Reply): void => {
    const write = inFlight.shift();
    if (write === undefined) return; // replies after a stop: nobody waits for them
    if (reply.error !== undefined || reply.refused === true || (reply.result as AppendRowsResult | undefined)?.conflict)
      epoch = Math.max(epoch, write.epoch + 1);
    if (reply.refused === true) {
      write.reject(
        new EventLogUnavailableError('sqlite', {
          message: 'append refused: an earlier append in flight failed, this one was decided after it',
        }),
      );
    } else if (reply.error !== undefined) {
      write.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    } else {
      write.resolve(reply.result);
    }
  };
  const stop = (error: EventLogUnavailableError): void => {
    if (stopped !== undefined) return;
    stopped = error;
    for (const write of inFlight.splice(0)) write.reject(error);
  };
  worker.on('message', (message: { readonly replies: readonly Reply[] } | { kind: 'closed' }) => {
    if ('kind' in message) return onClosed?.();
    transactions += 1;
    for (const reply of message.replies) settle(reply);
    if (inFlight.length === 0) worker.unref();
  });
  worker.on('error', (error) =>
    stop(
      new EventLogUnavailableError('sqlite', { message: `the writer thread failed: ${error.message}`, cause: error }),
    ),
  );
  worker.on('exit', (code) => {
    stop(new EventLogUnavailableError('sqlite', { message: `the writer thread exited (code ${code})` }));
    onClosed?.();
  });
  worker.unref();

  const post = <T>(message: Record<string, unknown>): Promise<T> => {
    if (stopped !== undefined) return Promise.reject(stopped);
    if (closing !== undefined)
      return Promise.reject(new EventLogUnavailableError('sqlite', { message: 'the writer thread is closing' }));
    return new Promise<T>((resolve, reject) => {
      if (inFlight.length === 0) worker.ref();
      inFlight.push({ epoch, resolve: resolve as (result: unknown) => void, reject });
      worker.postMessage({ ...message, epoch });
    });
  };

  return {
    append: (rows, expectedVersion, recordedAt) =>
      post<AppendRowsResult>({ kind: 'append', rows, expectedVersion, recordedAt }),
    saveSnapshot: (snapshot) => post<void>({ kind: 'snapshot', ...snapshot }),
    get stoppedBy() {
      return stopped;
    },
    get transactions() {
      return transactions;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        onClosed = resolve;
        if (stopped !== undefined) return resolve();
        worker.ref();
        worker.postMessage({ kind: 'close' }); // after every write posted before it
      }).then(() => worker.terminate().then(() => undefined));
      return closing;
    },
  };
}
