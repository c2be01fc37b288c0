/**
 * The EventLog port: the coordinator's durable, ordered log, one per coordinator namespace.
 * Adapters (`event-log-sqlite`, `event-log-eventstoredb`, and the in-memory reference in
 * `./memory-event-log.ts`, exported as `createMemoryEventLog`) implement it and pass
 * {@link describeEventLogContract}; vendor types and errors never cross it.
 *
 * Positions are 1-based: the first event of a log is at position 1, and a log's *version* is the
 * number of events in it (0 = empty), which is also the position of its last event.
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer)
 */
import type { CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';

/** The event and record shapes of the log, from the one schema in `@lease-fence/protocol`. */
export type { CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';

/** Where an append landed: positions `fromPosition..toPosition` inclusive; `toPosition` is the new version. */
export interface AppendResult {
  /** Position of the first appended event (1-based). */
  readonly fromPosition: number;
  /** Position of the last appended event, equal to the log's version after the append. */
  readonly toPosition: number;
}

/** Options of {@link EventLog.append}. */
export interface AppendOptions {
  /**
   * The number of events the caller believes the log holds (0 = empty log). The append lands
   * only if the log has exactly this version; otherwise it rejects with
   * {@link ExpectedVersionConflictError} and appends nothing.
   */
  readonly expectedVersion: number;
}

/** A range of positions for {@link EventLog.read}. */
export interface ReadRange {
  /** First position to read, 1-based, inclusive. Integer ≥ 1. */
  readonly from: number;
  /** Last position to read, inclusive. Integer ≥ 0; omitted = to the end of the log as of the read. */
  readonly to?: number;
  /** Most events to return. Positive integer; omitted = no limit. */
  readonly limit?: number;
}

/**
 * A saved fold of the log: the state after the first `position` events. A snapshot is an
 * optimisation only: the log stays complete, and a snapshot a reader does not understand
 * (other `schemaVersion`) is ignored in favour of a full replay.
 */
export interface Snapshot {
  /** Number of events the state covers (its log version). Integer, 0 ≤ position ≤ log version. */
  readonly position: number;
  /** The state as plain JSON (objects, arrays, strings, finite numbers, booleans, null). */
  readonly state: unknown;
  /** Version of the state's JSON shape, chosen by the writer. Positive integer. */
  readonly schemaVersion: number;
}

/**
 * A catch-up subscription: every event after the requested position, in order, exactly once
 * (catch-up from the log, then live). Iterate it once with `for await`; `close()` (or leaving the
 * loop) ends it. Closing the log ends it too. A corrupt event ends it with
 * {@link EventLogCorruptError}.
 */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  /** Ends the iteration; a pending `next()` resolves `done`. Idempotent. */
  close(): Promise<void>;
}

/**
 * The coordinator's durable, ordered log: one per coordinator namespace.
 *
 * Every method of a closed log rejects with {@link EventLogClosedError} (except `close`, which is
 * idempotent). Misuse (a position that is not a non-negative integer, an event that does not
 * match the protocol schema) rejects with `TypeError` / `RangeError` and changes nothing.
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer)
 */
export interface EventLog {
  /** Adapter name for logs and metrics: `'sqlite'`, `'memory'`, `'eventstoredb'`. */
  readonly name: string;
  /**
   * Appends `events` atomically after exactly `expectedVersion` events (0 = empty log): all of
   * them or none. Resolves only once the events are durable (as durable as the adapter's mode).
   * @throws {@link ExpectedVersionConflictError} the log's version differs: another writer appended first.
   * @throws {@link EventLogUnavailableError} the store failed (`retryable: true`); the outcome may be unknown.
   * @throws `TypeError` if `events` is empty or an event does not match the protocol schema (nothing appended).
   * @throws `RangeError` if `expectedVersion` is not a non-negative integer.
   */
  append(events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult>;
  /**
   * `true` when appends called before earlier ones resolved are applied in the order they were
   * called: each one's expected-version check sees the ones called before it, whatever order
   * their promises settle in. A writer may then issue append n+1 (expecting the version after n)
   * before append n resolves, and the durable coordinator pipelines its group commits. Such a
   * log also refuses, unwritten, every append called before the caller could see an earlier
   * append fail (`AppendFailureBarrier`, `./append-failure-barrier.ts`): otherwise append
   * n+1, decided on n, could land on another writer's events of the same length as n.
   * Unset (or `false`) when the adapter cannot promise it (the requests of a remote store can be
   * reordered on the way); the coordinator then awaits each append before deciding the next batch.
   */
  readonly appendsInCallOrder?: boolean;
  /**
   * Reads recorded events in log order, from position `from` (inclusive) up to `to` (inclusive)
   * or the end, at most `limit` of them. Events are decoded and validated on read.
   * @throws {@link EventLogCorruptError} naming the position of an event that cannot be decoded.
   */
  read(range: ReadRange): AsyncIterable<RecordedEvent>;
  /**
   * The same events as {@link EventLog.read} with the same `range`, handed over in pages: one
   * promise per page instead of one per event, so a reader that folds a whole log (recovery)
   * does not pay a promise and a microtask per event. Every page is non-empty and in log order;
   * the adapter chooses the page size. Events are decoded and validated on read, as by `read`:
   * when one cannot be decoded, the events before it are handed over first, then the iteration
   * throws, exactly where `read` would.
   *
   * Every adapter of this repository implements it and passes it in the contract suite. It is
   * optional so that a decorator forwarding the port's methods to another log, and a log written
   * before it existed, remain EventLogs; recovery then reads them through `read`.
   * @throws {@link EventLogCorruptError} naming the position of an event that cannot be decoded.
   * @throws `RangeError` for a malformed range, {@link EventLogClosedError} on a closed log (when iteration starts).
   */
  readPages?(range: ReadRange): AsyncIterable<readonly RecordedEvent[]>;
  /** The number of events in the log (the position of the last one; 0 when empty). */
  version(): Promise<number>;
  /**
   * Catch-up subscription: every event after position `after` (0 = from the start), in order,
   * exactly once, with no gap between the catch-up read and the live part; then live events
   * as they are appended (by this handle or another writer of the same storage).
   */
  subscribe(options: { readonly after: number }): Subscription;
  /** The snapshot with the highest position, or `undefined` when none was saved. */
  latestSnapshot(): Promise<Snapshot | undefined>;
  /**
   * Saves a snapshot beside the log; durable when it resolves.
   * @throws `RangeError` if `snapshot.position` is above the log's version or not a non-negative integer.
   * @throws `TypeError` if `snapshot.state` is not JSON-serialisable.
   */
  saveSnapshot(snapshot: Snapshot): Promise<void>;
  /** Ends subscriptions and releases the storage handle. Idempotent. */
  close(): Promise<void>;
}
