/**
 * The EventLog port over KurrentDB / EventStoreDB with `@kurrent/kurrentdb-client`: one stream
 * per coordinator namespace, appends conditional on the expected revision (a conflict is the
 * port's {@link ExpectedVersionConflictError}: another coordinator appended first), forward reads
 * from a revision, the server's catch-up subscription for `subscribe({ after })`, and snapshots in
 * a companion stream capped by `$maxCount` metadata.
 *
 * Durability is the server's: an append resolves once the server (the cluster's quorum) has
 * written it. A lost connection is {@link EventLogUnavailableError} (`retryable`): the outcome of
 * an append in flight is unknown, and the coordinator re-reads from its last known revision.
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer) and § Scale
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  NO_STREAM,
  type KurrentDBClient,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import {
  checkAppendOptions,
  checkReadRange,
  checkSnapshot,
  checkSubscribeAfter,
  decodeRecord,
  encodeEvents,
  EventLogClosedError,
  EventLogCorruptError,
  groupIntoPages,
  type AppendOptions,
  type AppendResult,
  type CoordinatorEvent,
  type EventLog,
  type ReadRange,
  type RecordedEvent,
  type Snapshot,
  type Subscription,
} from '@lease-fence/coordinator-core';
import { createEventStoreDbSubscription } from './eventstoredb-subscription.js';
import { withOperationTimeout } from './operation-timeout.js';
import {
  fromAppendResult,
  fromRevision,
  fromSnapshotEvent,
  isStreamNotFound,
  isWrongExpectedRevision,
  LOG_NAME,
  toEventData,
  toExpectedRevision,
  toMaxCount,
  toReadRevision,
  toSnapshotEvent,
  toStoredRecord,
  toStreamNames,
  toSubscriptionRevision,
  translateAppendError,
  translateError,
  type NamespaceStreams,
} from './to-eventstoredb.js';

/** Options of {@link createEventStoreDbEventLog}. */
export interface EventStoreDbEventLogOptions {
  /** The coordinator namespace: its events live in stream `leaseFence-<namespace>`. A protocol id (1–200 printable ASCII characters). */
  readonly namespace: string;
  /**
   * How many snapshots the snapshot stream keeps (its `$maxCount` metadata, set on the first
   * save of each handle). Only the newest is ever read. Positive integer.
   * @defaultValue 3
   */
  readonly snapshotsKept?: number;
  /** Wall clock for `recordedAtMillis` (epoch milliseconds, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
  /**
   * Longest wait for the server's answer to one call (an append, one step of a read, a snapshot
   * save), in milliseconds; then the call fails with `EventLogUnavailableError` and its outcome is
   * unknown. Covers a server that accepts connections but stops answering. Positive integer.
   * @defaultValue 10_000 (the client's own default deadline)
   */
  readonly operationTimeoutMillis?: number;
  /** Dispose `client` when the log is closed (set by {@link connectEventStoreDbEventLog}, which owns its client). @defaultValue false */
  readonly closeClient?: boolean;
}

/** The EventStoreDB EventLog handle. */
export interface EventStoreDbEventLog extends EventLog {
  readonly name: 'eventstoredb';
  /** The streams this handle reads and writes (diagnostics, operator tooling). */
  readonly streams: NamespaceStreams;
  /**
   * {@link EventLog.readPages}, which this adapter always provides: the streamed read grouped
   * into pages of up to 512 events, so a replay folds each page without a promise per event.
   */
  readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]>;
}

/** Longest delay a Node.js timer accepts (2^31 - 1 ms). */
const MAX_TIMER_MILLIS = 2 ** 31 - 1;

/** Most events per page of {@link EventStoreDbEventLog.readPages}. */
const READ_PAGE_SIZE = 512;

/** How often a snapshot save re-reads the snapshot stream after losing a race with another writer. */
const SNAPSHOT_SAVE_ATTEMPTS = 5;

/**
 * Creates the EventLog of one coordinator namespace on an existing client. The client connects
 * lazily: nothing is sent until the first call, and an unreachable server surfaces as
 * {@link EventLogUnavailableError} from that call.
 *
 * @param client - A `KurrentDBClient`; it is shared, not owned, unless `options.closeClient`.
 * @throws `TypeError` naming `namespace` when it is not a protocol id.
 * @throws `RangeError` naming `snapshotsKept` or `operationTimeoutMillis` when it is out of range.
 * @example
 * ```ts
 * const client = KurrentDBClient.connectionString('kurrentdb://localhost:2113?tls=false');
 * const log = createEventStoreDbEventLog(client, { namespace: 'default' });
 * ```
 */
export function createEventStoreDbEventLog(
  client: KurrentDBClient,
  options: EventStoreDbEventLogOptions,
): EventStoreDbEventLog {
  const streams = toStreamNames(options.namespace);
  const snapshotsKept = options.snapshotsKept ?? 3;
  if (!Number.isSafeInteger(snapshotsKept) || snapshotsKept < 1) {
    throw new RangeError(
      `createEventStoreDbEventLog: snapshotsKept must be a positive integer (snapshots), got ${String(options.snapshotsKept)}`,
    );
  }
  const timeoutMillis = options.operationTimeoutMillis ?? 10_000;
  if (!Number.isSafeInteger(timeoutMillis) || timeoutMillis < 1 || timeoutMillis > MAX_TIMER_MILLIS) {
    throw new RangeError(
      `createEventStoreDbEventLog: operationTimeoutMillis must be an integer in [1, ${MAX_TIMER_MILLIS}] (milliseconds), got ${String(options.operationTimeoutMillis)}`,
    );
  }
  const bounded = <T>(work: Promise<T>, operation: string): Promise<T> =>
    withOperationTimeout(work, timeoutMillis, operation);
  const wallClock = options.wallClock ?? Date.now;
  const subscriptions = new Set<Subscription>();
  let snapshotStreamCapped = false;
  let closed = false;

  const ensureOpen = (operation: string): void => {
    if (closed) throw new EventLogClosedError(LOG_NAME, operation);
  };

  /** The last event of `stream`, or `undefined` when the stream has none. */
  const readLast = async (stream: string, operation: string): Promise<ResolvedEvent | undefined> => {
    try {
      const iterator = client
        .readStream(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 1 })
        [Symbol.asyncIterator]();
      try {
        const first = await bounded(iterator.next(), operation);
        return first.done === true ? undefined : first.value;
      } finally {
        iterator.return?.(undefined).catch(() => {
          /* the read failed already: nothing to release */
        });
      }
    } catch (error) {
      if (isStreamNotFound(error)) return undefined;
      throw translateError(error, operation);
    }
  };

  const version = async (): Promise<number> => {
    ensureOpen('version');
    const last = await readLast(streams.events, 'version');
    if (last === undefined) return 0;
    if (last.event === undefined)
      throw new EventLogCorruptError({
        issues: [{ path: '', message: 'the last entry of the log stream is a link to a deleted event' }],
      });
    return fromRevision(last.event.revision);
  };

  /**
   * The events of `range`, decoded one at a time as the client hands them over (it streams the
   * read; there is no page to take at once). Single use, like the client's read.
   */
  const readForward = (range: ReadRange, operation: 'read' | 'readPages'): AsyncIterable<RecordedEvent> =>
    (async function* readEvents() {
      ensureOpen(operation);
      const { from, to, limit } = checkReadRange(`EventStoreDbEventLog.${operation}`, range);
      const count = Math.min(limit, to - from + 1);
      if (count <= 0) return;
      let expected = from;
      const events = client.readStream(streams.events, {
        fromRevision: toReadRevision(from),
        direction: FORWARDS,
        maxCount: toMaxCount(count),
      });
      const iterator = events[Symbol.asyncIterator]();
      try {
        for (;;) {
          let step: IteratorResult<ResolvedEvent>;
          try {
            step = await bounded(iterator.next(), operation);
          } catch (error) {
            if (isStreamNotFound(error)) return;
            throw translateError(error, operation);
          }
          if (step.done === true) return;
          const recorded = decodeRecord(toStoredRecord(step.value, expected));
          expected += 1;
          yield recorded;
        }
      } finally {
        // The consumer left early, the read failed or timed out: release the client's read.
        iterator.return?.(undefined).catch(() => {
          /* the read failed already: nothing to release */
        });
      }
    })();

  const capSnapshotStream = async (): Promise<void> => {
    if (snapshotStreamCapped) return;
    try {
      await bounded(client.setStreamMetadata(streams.snapshots, { maxCount: snapshotsKept }), 'saveSnapshot');
    } catch (error) {
      throw translateError(error, 'saveSnapshot');
    }
    snapshotStreamCapped = true;
  };

  return {
    name: LOG_NAME,
    streams,

    async append(events: readonly CoordinatorEvent[], appendOptions: AppendOptions): Promise<AppendResult> {
      ensureOpen('append');
      checkAppendOptions('EventStoreDbEventLog.append', appendOptions);
      const encoded = encodeEvents('EventStoreDbEventLog.append', events);
      const wallMillis = wallClock();
      const { expectedVersion } = appendOptions;
      let result;
      try {
        result = await bounded(
          client.appendToStream(
            streams.events,
            encoded.map((e) => toEventData(e, wallMillis)),
            {
              streamState: toExpectedRevision(expectedVersion),
            },
          ),
          'append',
        );
      } catch (error) {
        throw translateAppendError(error, expectedVersion);
      }
      return fromAppendResult(result, expectedVersion);
    },

    read: (range: ReadRange): AsyncIterable<RecordedEvent> => readForward(range, 'read'),

    readPages: (range: ReadRange): AsyncIterable<readonly RecordedEvent[]> =>
      groupIntoPages(readForward(range, 'readPages'), READ_PAGE_SIZE),

    version,

    subscribe({ after }: { readonly after: number }): Subscription {
      ensureOpen('subscribe');
      checkSubscribeAfter('EventStoreDbEventLog.subscribe', after);
      const source = client.subscribeToStream(streams.events, { fromRevision: toSubscriptionRevision(after) });
      const subscription = createEventStoreDbSubscription(source, {
        after,
        onEnd: () => subscriptions.delete(subscription),
      });
      subscriptions.add(subscription);
      return subscription;
    },

    async latestSnapshot(): Promise<Snapshot | undefined> {
      ensureOpen('latestSnapshot');
      const last = await readLast(streams.snapshots, 'latestSnapshot');
      return last === undefined ? undefined : fromSnapshotEvent(last);
    },

    async saveSnapshot(snapshot: Snapshot): Promise<void> {
      ensureOpen('saveSnapshot');
      const stateJson = checkSnapshot('EventStoreDbEventLog.saveSnapshot', snapshot, await version());
      await capSnapshotStream();
      // The stream's last snapshot is always the one with the highest position: a save that is
      // behind the stored one is a no-op, and concurrent saves are ordered by expected revision.
      for (let attempt = 1; ; attempt += 1) {
        const last = await readLast(streams.snapshots, 'saveSnapshot');
        const lastPosition = last === undefined ? undefined : positionOfStoredSnapshot(last);
        if (lastPosition !== undefined && lastPosition > snapshot.position) return;
        try {
          await bounded(
            client.appendToStream(streams.snapshots, toSnapshotEvent(snapshot, stateJson), {
              streamState: last?.event === undefined ? NO_STREAM : last.event.revision,
            }),
            'saveSnapshot',
          );
          return;
        } catch (error) {
          if (isWrongExpectedRevision(error) && attempt < SNAPSHOT_SAVE_ATTEMPTS) continue;
          throw translateError(error, 'saveSnapshot');
        }
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      if (options.closeClient === true) await client.dispose();
    },
  };
}

/** The position of a stored snapshot, or `undefined` when it cannot be decoded (it is then overwritten). */
function positionOfStoredSnapshot(resolved: ResolvedEvent): number | undefined {
  try {
    return fromSnapshotEvent(resolved).position;
  } catch {
    return undefined;
  }
}
