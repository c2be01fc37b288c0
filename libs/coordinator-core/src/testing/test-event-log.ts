/**
 * Test double: an in-memory {@link EventLog} whose appends a test can hold, fail, and count, to
 * observe the coordinator shell's group commit and persist-before-ack. It passes the EventLog
 * contract (see `test-event-log.spec.ts`), so what the shell sees is the port's semantics. It is
 * not the memory adapter: applications use `@lease-fence/event-log-memory`.
 */
import type { CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';
import { decodeRecord, decodeSnapshot, encodeEvents, type StoredEventRecord, type StoredSnapshot } from '../codec.js';
import { checkAppendOptions, checkReadRange, checkSnapshot, checkSubscribeAfter } from '../ports/event-log-arguments.js';
import { createCatchUpSubscription } from '../ports/catch-up-subscription.js';
import { EventLogClosedError, ExpectedVersionConflictError } from '../ports/event-log-errors.js';
import type { AppendResult, EventLog, Snapshot, Subscription } from '../ports/event-log.js';

/** Storage shared by test logs opened on it (a second writer, a reopen). */
export interface TestEventLogStorage {
  readonly records: StoredEventRecord[];
  readonly snapshots: StoredSnapshot[];
  readonly waiters: Set<() => void>;
}

/** The test double's controls, beside the EventLog port. */
export interface TestEventLog extends EventLog {
  readonly storage: TestEventLogStorage;
  /** Appends called on this handle so far (landed or not). */
  readonly appendCalls: number;
  /** Events per landed append on this handle, in order. */
  readonly appendSizes: readonly number[];
  /**
   * Holds every append from now on: each waits (before its version check) until `release()`.
   * Returns the release function; the number of waiting appends is `heldAppends`.
   */
  holdAppends(): () => void;
  /** Appends currently waiting on {@link TestEventLog.holdAppends}. */
  readonly heldAppends: number;
  /** Resolves once at least `count` appends are waiting on {@link TestEventLog.holdAppends}. */
  whenAppendsHeld(count: number): Promise<void>;
  /** The next append rejects with `error`, after storing its events when `persist` is true (an unknown outcome). */
  failNextAppend(error: unknown, options?: { readonly persist?: boolean }): void;
}

/** Creates empty storage to share between test logs. */
export const createTestEventLogStorage = (): TestEventLogStorage => ({ records: [], snapshots: [], waiters: new Set() });

/** Opens a test log on `storage` (fresh storage by default). */
export function createTestEventLog(storage: TestEventLogStorage = createTestEventLogStorage()): TestEventLog {
  let closed = false;
  let calls = 0;
  const sizes: number[] = [];
  let held: Promise<void> | undefined;
  let waiting = 0;
  const heldWaiters: { count: number; resolve: () => void }[] = [];
  let injected: { error: unknown; persist: boolean } | undefined;
  const subscriptions = new Set<Subscription>();
  const ensureOpen = (operation: string): void => {
    if (closed) throw new EventLogClosedError('test', operation);
  };
  const notify = (): void => {
    const woken = [...storage.waiters];
    storage.waiters.clear();
    woken.forEach((wake) => wake());
  };

  const log: TestEventLog = {
    name: 'test',
    storage,
    get appendCalls() {
      return calls;
    },
    get appendSizes() {
      return sizes;
    },
    get heldAppends() {
      return waiting;
    },
    whenAppendsHeld(count) {
      if (waiting >= count) return Promise.resolve();
      return new Promise((resolve) => heldWaiters.push({ count, resolve }));
    },
    holdAppends() {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    failNextAppend(error, options = {}) {
      injected = { error, persist: options.persist ?? false };
    },
    async append(events: readonly CoordinatorEvent[], options): Promise<AppendResult> {
      ensureOpen('append');
      calls += 1;
      checkAppendOptions('TestEventLog.append', options);
      const encoded = encodeEvents('TestEventLog.append', events);
      if (held !== undefined) {
        waiting += 1;
        for (const waiter of heldWaiters.filter((w) => waiting >= w.count)) {
          heldWaiters.splice(heldWaiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        await held;
        waiting -= 1;
      }
      const actualVersion = storage.records.length;
      if (actualVersion !== options.expectedVersion) throw new ExpectedVersionConflictError({ expectedVersion: options.expectedVersion, actualVersion });
      const failure = injected;
      injected = undefined;
      if (failure !== undefined && !failure.persist) throw failure.error;
      for (const event of encoded) storage.records.push({ position: storage.records.length + 1, recordedAtMillis: 0, ...event });
      notify();
      if (failure !== undefined) throw failure.error;
      sizes.push(encoded.length);
      return { fromPosition: actualVersion + 1, toPosition: storage.records.length };
    },
    read(range) {
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<RecordedEvent> {
          ensureOpen('read');
          const { from, to, limit } = checkReadRange('TestEventLog.read', range);
          const end = Math.min(to, storage.records.length, from - 1 + Math.min(limit, Number.MAX_SAFE_INTEGER));
          for (let position = from; position <= end; position += 1) yield decodeRecord(storage.records[position - 1]!);
        },
      };
    },
    async version() {
      ensureOpen('version');
      return storage.records.length;
    },
    subscribe({ after }) {
      ensureOpen('subscribe');
      checkSubscribeAfter('TestEventLog.subscribe', after);
      const subscription = createCatchUpSubscription(
        {
          readPage: async (from, limit) => storage.records.slice(from - 1, from - 1 + limit),
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
        { after, onEnd: () => subscriptions.delete(subscription) },
      );
      subscriptions.add(subscription);
      return subscription;
    },
    async latestSnapshot(): Promise<Snapshot | undefined> {
      ensureOpen('latestSnapshot');
      const latest = [...storage.snapshots].sort((a, b) => a.position - b.position).at(-1);
      return latest === undefined ? undefined : decodeSnapshot(latest);
    },
    async saveSnapshot(snapshot) {
      ensureOpen('saveSnapshot');
      const state = checkSnapshot('TestEventLog.saveSnapshot', snapshot, storage.records.length);
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
