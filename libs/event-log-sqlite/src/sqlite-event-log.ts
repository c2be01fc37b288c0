/**
 * The embedded EventLog over better-sqlite3: one file, WAL journal, `synchronous=FULL` in the
 * durable mode, one transaction per append with the expected-version check inside it. A corrupt,
 * truncated or foreign file is refused at open with {@link EventLogCorruptError}; rows are never
 * deleted or rewritten, so nothing acknowledged is ever dropped by this adapter.
 *
 * better-sqlite3 is synchronous: with the inline writer an append holds the event loop for its
 * transaction and fsync, which is why the coordinator group-commits (one append per batch of
 * commands). With the writer thread (`writer: 'thread'`, `writer-thread.ts`) the transaction and
 * fsync run on a worker that owns the write connection, appends apply in call order, and the
 * coordinator pipelines its batches (decides batch n+1 while n is made durable).
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer)
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  checkAppendOptions,
  checkSnapshot,
  checkSubscribeAfter,
  createCatchUpSubscription,
  decodeFields,
  decodeSnapshot,
  encodeEvents,
  EventLogCorruptError,
  EventLogClosedError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  readInPages,
  readRecordPages,
  type AppendOptions,
  type AppendResult,
  type CoordinatorEvent,
  type EventLog,
  type PagedRecordSource,
  type ReadRange,
  type RecordedEvent,
  type Snapshot,
  type StoredEventRecord,
  type Subscription,
} from '@lease-fence/coordinator-core';
import { logIdFileOf, lostLogError, readRecordedLogId, recordLogId } from './log-identity.js';
import { decodeEventRowText, positionOfRowText } from './event-row-text.js';
import { startQuickCheck, type BackgroundQuickCheck } from './quick-check.js';
import { checkIntegrity, checkPositions, migrate, notContiguous } from './schema.js';
import { appendRows, saveSnapshotRow } from './append-rows.js';
import { prepareStatements, type EventRow } from './statements.js';
import { toEventLogError } from './to-event-log-error.js';
import { startWriterThread, type WriterThread } from './writer-thread.js';

/** Options of {@link openSqliteEventLog}. */
export interface SqliteEventLogOptions {
  /** Path of the database file; created with its schema when absent. */
  readonly file: string;
  /**
   * `'full'`: `synchronous=FULL`, every append is fsynced before it resolves (survives power
   * loss). `'normal'`: `synchronous=NORMAL`, appends survive a process crash (kill -9) but the
   * last ones may be lost on power loss.
   * @defaultValue 'full'
   */
  readonly durability?: 'full' | 'normal';
  /**
   * How often a waiting subscription looks for events appended by another process on the same
   * file, in milliseconds. Appends through this handle wake subscriptions at once.
   * @defaultValue 50
   */
  readonly pollIntervalMillis?: number;
  /** How long a write waits for another connection's lock before failing, in milliseconds. @defaultValue 5000 */
  readonly busyTimeoutMillis?: number;
  /** Wall clock for `recordedAtMillis` (epoch milliseconds, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
  /**
   * Which thread runs the write transactions (INSERTs, COMMIT and its fsync). `'inline'`: the
   * caller's, on the opening connection (each append holds the event loop until it is durable).
   * `'thread'`: a writer thread with its own connection (`writer-thread.ts`); appends apply in
   * call order, so the handle declares {@link EventLog.appendsInCallOrder} and a durable
   * coordinator pipelines its appends. Both run the same append rule and resolve an append only
   * once it is committed with the chosen `durability`; readers see committed rows only.
   * @defaultValue 'inline'
   */
  readonly writer?: 'inline' | 'thread';
}

/** The SQLite EventLog handle. */
export interface SqliteEventLog extends EventLog {
  readonly name: 'sqlite';
  /** The database file. */
  readonly file: string;
  /** The log's id (`meta.log_id`), which the marker `<file>.id` beside it records (see `log-identity.ts`). */
  readonly logId: string;
  /** The journal mode and synchronous level of this handle's connection, as SQLite reports them (diagnostics). */
  settings(): {
    readonly journalMode: string;
    readonly synchronous: 'off' | 'normal' | 'full' | 'extra';
    /** The thread that writes ({@link SqliteEventLogOptions.writer}). */
    readonly writer: 'inline' | 'thread';
  };
  /** {@link EventLog.readPages}, which this adapter always provides (pages of up to 512 events, one query each). */
  readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]>;
}

const PAGE_SIZE = 512;
const SNAPSHOTS_KEPT = 3;
/**
 * Files up to this size (bytes) get `quick_check` at open, on the opening connection: below it a
 * worker's start-up (tens of milliseconds) costs more than the check. Larger files get it on a
 * worker, overlapped with recovery (see `quick-check.ts`).
 */
const INLINE_QUICK_CHECK_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Opens (creating if absent) a SQLite event log file, migrates its schema, and checks it.
 *
 * The log's identity is checked first: the marker `<file>.id` beside the file records the id of
 * the log this directory holds (written when the log is created, or adopted from a log that
 * predates log ids). With a marker, a missing, empty (0 bytes, or no tables) or different log is
 * refused, and nothing is created or written: a lost log must not issue fences again from 1.
 * Delete the marker to start a new log on purpose. A standby opening the same file reads the
 * marker and only ever records the id the file holds.
 *
 * @throws `EventLogLostError` (`log-identity.ts`, an {@link EventLogCorruptError}) when the marker `<file>.id`
 *   records a log and the file is missing, empty, without a log id or holds another log (the
 *   message names the marker and the two ways out).
 * @throws {@link EventLogCorruptError} when the marker does not hold a log id.
 * @throws {@link EventLogCorruptError} when the file is not a SQLite database, fails
 *   `quick_check`, is a foreign database, has a schema from a newer release, or has a gap in the
 *   positions its latest snapshot covers. A gap after those is refused by the first read that
 *   reaches it (with the missing position), which recovery always is. For a file over 16 MiB
 *   `quick_check` runs on a worker thread while the caller reads (recovery replays): open does
 *   not wait for it, every append and snapshot does, and its refusal is thrown by them and by
 *   every read after it (see `quick-check.ts`).
 * @throws {@link EventLogUnavailableError} when the file cannot be opened (permissions, missing directory, locked).
 * @throws `RangeError` for a bad option (naming it and the value).
 * @example
 * ```ts
 * const log = await openSqliteEventLog({ file: 'data/coordinator.db', durability: 'full' });
 * ```
 */
export async function openSqliteEventLog(options: SqliteEventLogOptions): Promise<SqliteEventLog> {
  const durability = options.durability ?? 'full';
  const pollIntervalMillis = options.pollIntervalMillis ?? 50;
  const busyTimeoutMillis = options.busyTimeoutMillis ?? 5000;
  const writer = options.writer ?? 'inline';
  if (typeof options.file !== 'string' || options.file === '') {
    throw new TypeError(`openSqliteEventLog: file must be a non-empty path, got ${JSON.stringify(options.file)}`);
  }
  if (durability !== 'full' && durability !== 'normal') {
    throw new RangeError(
      `openSqliteEventLog: durability must be 'full' or 'normal', got ${JSON.stringify(durability)}`,
    );
  }
  if (writer !== 'inline' && writer !== 'thread') {
    throw new RangeError(`openSqliteEventLog: writer must be 'inline' or 'thread', got ${JSON.stringify(writer)}`);
  }
  for (const [field, value] of [
    ['pollIntervalMillis', pollIntervalMillis],
    ['busyTimeoutMillis', busyTimeoutMillis],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(
        `openSqliteEventLog: ${field} must be a positive integer (milliseconds), got ${String(value)}`,
      );
    }
  }
  const wallClock = options.wallClock ?? Date.now;

  let recordedLogId: string | undefined;
  try {
    recordedLogId = readRecordedLogId(options.file);
  } catch (error) {
    throw toMarkerError(error, options.file);
  }
  if (recordedLogId !== undefined) {
    // Before better-sqlite3 opens the file: it would create a missing one, and WAL mode writes a
    // header into an empty one.
    const sizeBytes = fileSizeBytes(options.file);
    if (sizeBytes === undefined || sizeBytes === 0) {
      throw lostLogError(options.file, recordedLogId, sizeBytes === undefined ? 'missing' : 'empty');
    }
  }

  let db: Database.Database;
  let quickCheck: BackgroundQuickCheck | undefined;
  let logId: string;
  try {
    db = new Database(options.file, { timeout: busyTimeoutMillis });
  } catch (error) {
    // better-sqlite3 reports a missing directory as a plain TypeError: the file cannot be opened.
    const translated = toEventLogError(error, `open ${options.file}`);
    throw translated === error
      ? new EventLogUnavailableError('sqlite', {
          message: `cannot open ${options.file}: ${(error as Error).message}`,
          cause: error,
        })
      : translated;
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    logId = migrate(db, recordedLogId, options.file);
    if (recordedLogId === undefined) {
      try {
        recordLogId(options.file, logId);
      } catch (error) {
        throw new EventLogUnavailableError('sqlite', {
          message: `cannot record the log id in ${logIdFileOf(options.file)}: ${(error as Error).message}`,
          cause: error,
        });
      }
    }
    const sizeBytes =
      (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    if (sizeBytes <= INLINE_QUICK_CHECK_MAX_BYTES) {
      checkIntegrity(db);
    } else {
      checkPositions(db);
      quickCheck = startQuickCheck(
        options.file,
        busyTimeoutMillis,
        () => db.prepare('PRAGMA quick_check').pluck().all() as string[],
      );
    }
  } catch (error) {
    db.close();
    throw toEventLogError(error, `open ${options.file}`);
  }
  const statements = prepareStatements(db);
  const startWriter = (): Promise<WriterThread> =>
    startWriterThread({
      file: options.file,
      busyTimeoutMillis,
      synchronous: durability === 'full' ? 'FULL' : 'NORMAL',
    });
  let writerThread: WriterThread | undefined;
  if (writer === 'thread') {
    try {
      writerThread = await startWriter();
    } catch (error) {
      await quickCheck?.stop();
      db.close();
      throw toEventLogError(error, `open ${options.file}`);
    }
  }

  const subscriptions = new Set<Subscription>();
  const waiters = new Set<() => void>();
  let knownVersion = statements.version.get() ?? 0;
  let pollTimer: NodeJS.Timeout | undefined;
  let closed = false;

  /** Set when the background `quick_check` refused the file: every later operation throws it. */
  let integrityFailure: Error | undefined;
  /**
   * Settles once the file passed `quick_check` (at once when open ran it); rejects with the
   * refusal. Awaited before every write, so nothing is written to a file that failed it.
   */
  const integrityChecked: Promise<void> =
    quickCheck === undefined
      ? Promise.resolve()
      : quickCheck.result.then((failure) => {
          if (failure === undefined) return;
          integrityFailure = failure;
          throw failure;
        });
  // Nobody may be writing yet: the refusal is kept in integrityFailure and thrown from there.
  integrityChecked.catch(() => undefined);

  const ensureOpen = (operation: string): void => {
    if (closed) throw new EventLogClosedError('sqlite', operation);
    if (integrityFailure !== undefined) throw integrityFailure;
  };
  const run = <T>(operation: string, body: () => T): T => {
    try {
      return body();
    } catch (error) {
      throw toEventLogError(error, operation);
    }
  };
  const wakeWaiters = (): void => {
    const woken = [...waiters];
    waiters.clear();
    for (const wake of woken) wake();
    if (waiters.size === 0 && pollTimer !== undefined) {
      clearInterval(pollTimer);
      pollTimer = undefined;
    }
  };
  /**
   * Rows `from..to` (at most `limit`) read by `statement`, checked contiguous: they come in
   * position order, all at or after `from`, so row `i` must be at `from + i`. At a gap the rows
   * before it are returned, and the next read (which starts at the missing position) throws
   * naming it, so a reader gets every event before a gap and then the error, as for a record that
   * does not decode. Every read goes through here (read, readPages, subscriptions): a gap the
   * open check did not count (after the latest snapshot, see `checkPositions`) is never read
   * past, nor a file the background `quick_check` refused.
   * @param positionOf - the position of a row as `statement` returns it.
   * @throws {@link EventLogCorruptError} (path `position`) when the first row is not at `from`.
   */
  const readContiguous = <Row>(
    statement: Database.Statement<[from: number, to: number, limit: number], Row>,
    positionOf: (row: Row) => number,
    from: number,
    to: number,
    limit: number,
  ): readonly Row[] => {
    if (integrityFailure !== undefined) throw integrityFailure;
    const rows = run('read', () => statement.all(from, Math.min(to, Number.MAX_SAFE_INTEGER), limit));
    for (let i = 0; i < rows.length; i += 1) {
      const position = positionOf(rows[i]!);
      if (position !== from + i) {
        if (i > 0) return rows.slice(0, i);
        throw notContiguous(from, `a read from position ${from} found position ${position} first`);
      }
    }
    return rows;
  };
  /** {@link readContiguous} of whole rows (their columns), for subscriptions and a row read again. */
  const readRows = (from: number, to: number, limit: number): readonly EventRow[] =>
    readContiguous(statements.readEvents, rowPosition, from, to, limit);
  /**
   * Decodes a row's text (`event-row-text.ts`); when it does not decode, reads that row again as
   * columns and decodes those, so the refusal is the record's own (position, field, message).
   */
  const decodeText = (text: string): RecordedEvent => {
    try {
      return decodeEventRowText(text);
    } catch {
      const position = positionOfRowText(text);
      const row = readRows(position, position, 1)[0];
      if (row === undefined) throw notContiguous(position, `position ${position} was read, then not found again`);
      return decodeRow(row);
    }
  };
  /** The paged reads' source: each row one text decoded straight into its event, no array or record object in between. */
  const pagedSource = (operation: string): PagedRecordSource<string> => ({
    readPage: (from, to, limit) => readContiguous(statements.readEventTexts, positionOfRowText, from, to, limit),
    decode: decodeText,
    ensureOpen: () => ensureOpen(operation),
    pageSize: PAGE_SIZE,
  });

  const appendTransaction = db.transaction(
    (encoded: ReturnType<typeof encodeEvents>, expectedVersion: number, recordedAt: number): number => {
      const result = appendRows(statements, encoded, expectedVersion, recordedAt);
      if (result.conflict)
        throw new ExpectedVersionConflictError({ expectedVersion, actualVersion: result.actualVersion });
      return result.toPosition;
    },
  );
  /**
   * The writer thread for the next write. One that stopped on its own is replaced: its writes in
   * flight were refused (the coordinator stopped and re-opens from the log), and the re-open's
   * writes go to a new thread. Writes called while the new one starts wait for it, in call order.
   */
  let restartingWriter: Promise<WriterThread> | undefined;
  /**
   * Posts `write` to the writer thread: synchronously while the thread runs, so writes are posted
   * in call order with no await in between (the coordinator pipelines on that order); after the
   * replacement thread started when the current one stopped.
   * @throws (rejects) the event-log error of `operation` for whatever the write or the restart threw.
   */
  const onWriter = async <T>(operation: string, write: (thread: WriterThread) => Promise<T>): Promise<T> => {
    try {
      const thread = writerThread!;
      if (thread.stoppedBy === undefined && restartingWriter === undefined) return await write(thread);
      restartingWriter ??= startWriter().then(
        (started) => {
          writerThread = started;
          restartingWriter = undefined;
          return started;
        },
        (error: unknown) => {
          restartingWriter = undefined;
          throw error;
        },
      );
      return await write(await restartingWriter);
    } catch (error) {
      throw toEventLogError(error, operation);
    }
  };
  /** Appends on the writer thread: resolves the new version once the worker committed it. */
  const appendOnThread = async (encoded: ReturnType<typeof encodeEvents>, expectedVersion: number): Promise<number> => {
    const result = await onWriter('append', (thread) => thread.append(encoded, expectedVersion, wallClock()));
    if (result.conflict)
      throw new ExpectedVersionConflictError({ expectedVersion, actualVersion: result.actualVersion });
    return result.toPosition;
  };

  const log: SqliteEventLog = {
    name: 'sqlite',
    file: options.file,
    logId,
    // The writer thread handles appends one at a time in the order they were posted.
    ...(writerThread === undefined ? {} : { appendsInCallOrder: true }),

    settings() {
      ensureOpen('settings');
      const level = db.pragma('synchronous', { simple: true }) as number;
      return {
        journalMode: String(db.pragma('journal_mode', { simple: true })),
        synchronous: (['off', 'normal', 'full', 'extra'] as const)[level] ?? 'off',
        writer,
      };
    },

    async append(events: readonly CoordinatorEvent[], appendOptions: AppendOptions): Promise<AppendResult> {
      ensureOpen('append');
      checkAppendOptions('SqliteEventLog.append', appendOptions);
      const encoded = encodeEvents('SqliteEventLog.append', events);
      // Every append awaits the same promise (or none, when open ran the check), so they go on in call order.
      if (quickCheck !== undefined) {
        await integrityChecked;
        ensureOpen('append');
      }
      const toPosition =
        writerThread === undefined
          ? run('append', () => appendTransaction.immediate(encoded, appendOptions.expectedVersion, wallClock()))
          : await appendOnThread(encoded, appendOptions.expectedVersion);
      // Replies come in call order: the version only grows.
      knownVersion = toPosition;
      wakeWaiters();
      return { fromPosition: appendOptions.expectedVersion + 1, toPosition };
    },

    read(range: ReadRange): AsyncIterable<RecordedEvent> {
      return readInPages('SqliteEventLog.read', range, pagedSource('read'));
    },

    readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]> {
      return readRecordPages('SqliteEventLog.readPages', range, pagedSource('readPages'));
    },

    async version() {
      ensureOpen('version');
      knownVersion = run('version', () => statements.version.get() ?? 0);
      return knownVersion;
    },

    subscribe({ after }) {
      ensureOpen('subscribe');
      checkSubscribeAfter('SqliteEventLog.subscribe', after);
      const subscription = createCatchUpSubscription(
        {
          readPage: async (from, limit) => {
            if (closed) return [];
            return readRows(from, Number.MAX_SAFE_INTEGER, limit).map(toStoredRecord);
          },
          waitForEventsAfter: (position, signal) =>
            new Promise<void>((resolve) => {
              if (knownVersion > position || signal.aborted || closed) return resolve();
              const wake = (): void => {
                waiters.delete(wake);
                signal.removeEventListener('abort', wake);
                resolve();
              };
              waiters.add(wake);
              signal.addEventListener('abort', wake, { once: true });
              // Another process may append to the same file: wake every waiter on a timer, and
              // let the next read decide whether anything is new.
              pollTimer ??= setInterval(wakeWaiters, pollIntervalMillis).unref();
            }),
        },
        { after, pageSize: PAGE_SIZE, onEnd: () => subscriptions.delete(subscription) },
      );
      subscriptions.add(subscription);
      return subscription;
    },

    async latestSnapshot(): Promise<Snapshot | undefined> {
      ensureOpen('latestSnapshot');
      const row = run('latestSnapshot', () => statements.latestSnapshot.get());
      return row === undefined
        ? undefined
        : decodeSnapshot({ position: row.position, schemaVersion: row.schema_version, state: row.state });
    },

    async saveSnapshot(snapshot: Snapshot) {
      ensureOpen('saveSnapshot');
      const version = run('saveSnapshot', () => statements.version.get() ?? 0);
      const state = checkSnapshot('SqliteEventLog.saveSnapshot', snapshot, version);
      await integrityChecked;
      ensureOpen('saveSnapshot');
      if (writerThread !== undefined) {
        // On the writer's connection, after the appends posted before it: two writing connections would wait on each other's lock.
        await onWriter('saveSnapshot', (thread) =>
          thread.saveSnapshot({
            position: snapshot.position,
            schemaVersion: snapshot.schemaVersion,
            state,
            savedAt: wallClock(),
            kept: SNAPSHOTS_KEPT,
          }),
        );
        return;
      }
      run('saveSnapshot', () =>
        db
          .transaction(() =>
            saveSnapshotRow(statements, snapshot.position, snapshot.schemaVersion, state, wallClock(), SNAPSHOTS_KEPT),
          )
          .immediate(),
      );
    },

    async close() {
      if (closed) return;
      closed = true;
      await quickCheck?.stop();
      await Promise.all([...subscriptions].map((s) => s.close()));
      wakeWaiters();
      await restartingWriter?.catch(() => undefined);
      await writerThread?.close(); // after the writes in flight
      db.close();
    },
  };
  return log;
}

/** The position of a row read as columns. */
const rowPosition = (row: EventRow): number => row[0];

/** Decodes one row ({@link decodeFields}); indexes, not destructuring: no iterator per row on a replay's hot path. */
const decodeRow = (row: EventRow): RecordedEvent => decodeFields(row[0], row[1], row[2], row[3], row[4]);

/** A row as the catch-up subscription takes it. */
const toStoredRecord = (row: EventRow): StoredEventRecord => ({
  position: row[0],
  recordedAtMillis: row[4],
  type: row[1],
  version: row[2],
  data: row[3],
});

/** The size of `file` in bytes, or `undefined` when it does not exist. */
function fileSizeBytes(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new EventLogUnavailableError('sqlite', {
      message: `cannot stat ${file}: ${(error as Error).message}`,
      cause: error,
    });
  }
}

/** A marker that cannot be read is an unavailable log (permissions), not a lost one; a bad marker stays corrupt. */
function toMarkerError(error: unknown, file: string): EventLogCorruptError | EventLogUnavailableError {
  if (error instanceof EventLogCorruptError) return error;
  return new EventLogUnavailableError('sqlite', {
    message: `cannot read the log id marker ${logIdFileOf(file)}: ${(error as Error).message}`,
    cause: error,
  });
}
