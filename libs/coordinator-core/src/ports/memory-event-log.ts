/**
 * The in-memory EventLog: the reference semantics of the port, and its only in-memory
 * implementation. Applications get it as `createMemoryEventLog` from `@lease-fence/coordinator-core`;
 * coordinator-core's own specs use it through the test double in `../testing/test-event-log.ts`.
 * It lives here, beside the port, because coordinator-core cannot depend on an adapter package.
 *
 * It stores records encoded exactly as a durable adapter would (type, version, JSON text) and
 * decodes them through the same codec on read, so a test on it exercises the same validation.
 * Nothing survives the process. Two handles may share one {@link MemoryEventLogStorage} to play
 * two writers (a standby coordinator) or to reopen after close.
 *
 * Test double: `failNextAppend` injects a store failure into the next append.
 *
 * @see docs/design.md § "The event-sourced coordinator"
 */
import { decodeRecord, decodeSnapshot, encodeEvents, type StoredEventRecord, type StoredSnapshot } from '../codec.js';
import { AppendFailureBarrier } from './append-failure-barrier.js';
import { createCatchUpSubscription } from './catch-up-subscription.js';
import { checkAppendOptions, checkSnapshot, checkSubscribeAfter } from './event-log-arguments.js';
import { EventLogClosedError, ExpectedVersionConflictError } from './event-log-errors.js';
import { readInPages, readRecordPages } from './paged-read.js';
import type {
  AppendOptions,
  AppendResult,
  CoordinatorEvent,
  EventLog,
  ReadRange,
  RecordedEvent,
  Snapshot,
  Subscription,
} from './event-log.js';

/**
 * Storage shared by the handles created on it: the records, the snapshots, and the waiters of
 * catch-up subscriptions. Create with {@link createMemoryEventLogStorage}.
 */
export interface MemoryEventLogStorage {
  /** Number of events stored (the log's version). */
  readonly version: number;
}

/**
 * What a {@link MemoryEventLogStorage} holds: records and snapshots stored as a durable adapter
 * stores them (JSON text), in position order.
 * @internal for the test double in `../testing`, which copies or rewrites records to stage a
 *   restart or a corrupt log. Applications see {@link MemoryEventLogStorage} only.
 */
export interface MemoryEventLogContents extends MemoryEventLogStorage {
  /** Stored events; `records[i].position === i + 1`. */
  readonly records: StoredEventRecord[];
  /** Stored snapshots, in the order they were saved. */
  readonly snapshots: StoredSnapshot[];
}

interface Storage extends MemoryEventLogContents {
  readonly waiters: Set<() => void>;
}

/**
 * Creates empty storage and returns it with its contents visible.
 * @internal for the test double in `../testing`; applications use {@link createMemoryEventLogStorage}.
 */
export function createMemoryEventLogContents(): MemoryEventLogContents {
  const records: StoredEventRecord[] = [];
  const storage: Storage = {
    records,
    snapshots: [],
    waiters: new Set(),
    get version() {
      return records.length;
    },
  };
  return storage;
}

/** Creates empty storage to share between {@link createMemoryEventLog} handles. */
export function createMemoryEventLogStorage(): MemoryEventLogStorage {
  return createMemoryEventLogContents();
}

/** Options of {@link createMemoryEventLog}. */
export interface MemoryEventLogOptions {
  /** Storage to use; share it between two handles for a second writer or a reopen. @defaultValue fresh storage */
  readonly storage?: MemoryEventLogStorage;
  /** Wall clock for `recordedAtMillis` (epoch milliseconds, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
}

/** What {@link MemoryEventLog.failNextAppend} does to the store. */
export interface InjectedAppendFailure {
  /**
   * Whether the events land before the append rejects: `true` models an append whose outcome is
   * unknown to the caller (a timeout after the write), `false` one that failed before writing.
   * @defaultValue false
   */
  readonly persist?: boolean;
}

/** The in-memory EventLog with its fault hook. */
export interface MemoryEventLog extends EventLog {
  readonly name: 'memory';
  /** The storage behind this handle (to open a second handle on it). */
  readonly storage: MemoryEventLogStorage;
  /**
   * Test double: the next `append` on this handle rejects with `error` (after storing its events
   * when `options.persist` is true). The expected-version check still runs first.
   */
  failNextAppend(error: unknown, options?: InjectedAppendFailure): void;
  /** {@link EventLog.readPages}, which this adapter always provides (pages of up to 512 events). */
  readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]>;
}

const PAGE_SIZE = 512;

/**
 * Creates an in-memory EventLog handle on `options.storage` (fresh storage by default). It never
 * throws; its methods behave as {@link EventLog} documents, and `recordedAtMillis` comes from
 * `options.wallClock` (epoch milliseconds, display only).
 * @example
 * ```ts
 * const log = createMemoryEventLog();
 * const standby = createMemoryEventLog({ storage: log.storage });
 * ```
 */
export function createMemoryEventLog(options: MemoryEventLogOptions = {}): MemoryEventLog {
  const storage = (options.storage ?? createMemoryEventLogStorage()) as Storage;
  const wallClock = options.wallClock ?? Date.now;
  const subscriptions = new Set<Subscription>();
  let closed = false;
  let injected: { error: unknown; persist: boolean } | undefined;
  /** Refuses the appends called before a failed one was seen (the rule of `appendsInCallOrder`). */
  const barrier = new AppendFailureBarrier('memory');

  const ensureOpen = (operation: string): void => {
    if (closed) throw new EventLogClosedError('memory', operation);
  };

  const notify = (): void => {
    const waiters = [...storage.waiters];
    storage.waiters.clear();
    for (const wake of waiters) wake();
  };

  const readRecords = (from: number, to: number, limit: number): StoredEventRecord[] =>
    storage.records.slice(from - 1, Math.min(to, storage.records.length, from - 1 + limit));

  const log: MemoryEventLog = {
    name: 'memory',
    storage,
    // An append is applied synchronously in the call (before its promise exists).
    appendsInCallOrder: true,

    failNextAppend(error, failure = {}) {
      injected = { error, persist: failure.persist ?? false };
    },

    async append(events: readonly CoordinatorEvent[], appendOptions: AppendOptions): Promise<AppendResult> {
      ensureOpen('append');
      checkAppendOptions('MemoryEventLog.append', appendOptions);
      const encoded = encodeEvents('MemoryEventLog.append', events);
      const epoch = barrier.enter();
      const refused = barrier.refusal(epoch);
      if (refused !== undefined) throw refused;
      const actualVersion = storage.records.length;
      if (actualVersion !== appendOptions.expectedVersion) {
        barrier.failed(epoch);
        throw new ExpectedVersionConflictError({ expectedVersion: appendOptions.expectedVersion, actualVersion });
      }
      const failure = injected;
      injected = undefined;
      if (failure !== undefined) barrier.failed(epoch);
      if (failure !== undefined && !failure.persist) throw failure.error;
      const recordedAtMillis = wallClock();
      for (const event of encoded)
        storage.records.push({ position: storage.records.length + 1, recordedAtMillis, ...event });
      notify();
      if (failure !== undefined) throw failure.error;
      return { fromPosition: actualVersion + 1, toPosition: storage.records.length };
    },

    read(range: ReadRange): AsyncIterable<RecordedEvent> {
      return readInPages('MemoryEventLog.read', range, {
        readPage: readRecords,
        decode: decodeRecord,
        ensureOpen: () => ensureOpen('read'),
        pageSize: PAGE_SIZE,
      });
    },

    readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]> {
      return readRecordPages('MemoryEventLog.readPages', range, {
        readPage: readRecords,
        decode: decodeRecord,
        ensureOpen: () => ensureOpen('readPages'),
        pageSize: PAGE_SIZE,
      });
    },

    async version() {
      ensureOpen('version');
      return storage.records.length;
    },

    subscribe({ after }) {
      ensureOpen('subscribe');
      checkSubscribeAfter('MemoryEventLog.subscribe', after);
      const subscription = createCatchUpSubscription(
        {
          readPage: async (from, limit) => readRecords(from, Number.POSITIVE_INFINITY, limit),
          waitForEventsAfter: (position, signal) =>
            new Promise<void>((resolve) => {
              if (storage.records.length > position || signal.aborted) return resolve();
              const wake = (): void => {
                storage.waiters.delete(wake);
                signal.removeEventListener('abort', wake);
                resolve();
              };
              storage.waiters.add(wake);
              signal.addEventListener('abort', wake, { once: true });
            }),
        },
        { after, pageSize: PAGE_SIZE, onEnd: () => subscriptions.delete(subscription) },
      );
      subscriptions.add(subscription);
      return subscription;
    },

    async latestSnapshot(): Promise<Snapshot | undefined> {
      ensureOpen('latestSnapshot');
      const latest = storage.snapshots.reduce<StoredSnapshot | undefined>(
        (best, candidate) => (best === undefined || candidate.position >= best.position ? candidate : best),
        undefined,
      );
      return latest === undefined ? undefined : decodeSnapshot(latest);
    },

    async saveSnapshot(snapshot: Snapshot) {
      ensureOpen('saveSnapshot');
      const state = checkSnapshot('MemoryEventLog.saveSnapshot', snapshot, storage.records.length);
      storage.snapshots.push({ position: snapshot.position, schemaVersion: snapshot.schemaVersion, state });
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.close()));
    },
  };
  return log;
}
