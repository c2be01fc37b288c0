/**
 * Every KurrentDB / EventStoreDB vendor detail of the adapter, in one file: stream names,
 * versions ⇄ revisions, the event and snapshot records as stored, connection strings, and the
 * vendor error → port error table. Nothing from `@kurrent/kurrentdb-client` crosses the port:
 * revisions (`bigint`), `ResolvedEvent`, `StreamNotFoundError` and `WrongExpectedVersionError`
 * are all translated here.
 *
 * The client renamed its append option once already (`expectedRevision` → `streamState`,
 * kurrent-io/KurrentDB-Client-NodeJS PR #403): one more reason to keep the mapping in one place.
 *
 * @see docs/design.md § "The event-sourced coordinator" (single writer)
 * @see docs/design.md § "Adapters"
 */
import {
  CancelledError,
  DeadlineExceededError,
  NO_STREAM,
  NotLeaderError,
  START,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
  jsonEvent,
  type AppendResult as KurrentAppendResult,
  type AppendStreamState,
  type EventData,
  type ReadRevision,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import {
  EventLogCorruptError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  type AppendResult,
  type EncodedEvent,
  type Snapshot,
  type StoredEventRecord,
} from '@lease-fence/coordinator-core';
import { IdSchema } from '@lease-fence/protocol';

/** The adapter's name, as the port's `EventLog.name` and in error messages. */
export const LOG_NAME = 'eventstoredb';

/** ESDB event type of a snapshot record in the companion snapshot stream. */
export const SNAPSHOT_EVENT_TYPE = 'CoordinatorSnapshot';

/** The two streams of one coordinator namespace. */
export interface NamespaceStreams {
  /** The event log: `leaseFence-<namespace>` (ESDB category `leaseFence`). */
  readonly events: string;
  /** The companion snapshot stream, capped by `$maxCount`: `leaseFenceSnapshot-<namespace>`. */
  readonly snapshots: string;
}

/**
 * The stream names of a coordinator namespace: one event stream per namespace, plus its
 * snapshot stream. The prefix keeps the names out of the server's `$` system streams.
 * @throws `TypeError` naming `namespace` when it is not a protocol id (1–200 printable ASCII characters).
 */
export function toStreamNames(namespace: string): NamespaceStreams {
  const parsed = IdSchema.safeParse(namespace);
  if (!parsed.success) {
    throw new TypeError(
      `EventStoreDbEventLog: namespace ${parsed.error.issues[0]?.message ?? 'is invalid'}, got ${JSON.stringify(namespace)}`,
    );
  }
  return { events: `leaseFence-${namespace}`, snapshots: `leaseFenceSnapshot-${namespace}` };
}

/**
 * Our version counts events (0 = empty log); a KurrentDB revision indexes the last event
 * (the first event is revision 0n). Expected version 0 is "the stream does not exist yet".
 */
export const toExpectedRevision = (expectedVersion: number): AppendStreamState =>
  expectedVersion === 0 ? NO_STREAM : BigInt(expectedVersion - 1);

/** The port position (1-based) of the event at `revision` (0-based); also the log version after it. */
export const fromRevision = (revision: bigint): number => Number(revision) + 1;

/** The revision to start a forwards read at, for the 1-based position `from` (inclusive). */
export const toReadRevision = (from: number): bigint => BigInt(from - 1);

/**
 * The revision to start a catch-up subscription at for "every event after position `after`".
 * A stream subscription's start revision is exclusive, and revision `after - 1` is position `after`.
 */
export const toSubscriptionRevision = (after: number): ReadRevision => (after === 0 ? START : BigInt(after - 1));

/** A read's `maxCount`: the client wants a safe integer, the port allows "no limit". */
export const toMaxCount = (count: number): number => (Number.isFinite(count) ? count : Number.MAX_SAFE_INTEGER);

/**
 * The custom metadata stored with each event. The event's schema version is ours, not the
 * server's; `recordedAtMillis` is the appender's wall time because the server's own `created`
 * stamp reaches readers with different precision (whole seconds through the client's Rust read
 * bridge, milliseconds through its gRPC subscriptions), and the port promises one value.
 */
interface EventMetadata {
  readonly schemaVersion: number;
  readonly recordedAtMillis: number;
}

/**
 * An encoded event (see `encodeEvents` in coordinator-core) as a KurrentDB JSON event.
 * @param wallMillis - Wall clock of the append (epoch milliseconds, display only).
 */
export function toEventData(encoded: EncodedEvent, wallMillis: number): EventData {
  const metadata: EventMetadata = { schemaVersion: encoded.version, recordedAtMillis: wallMillis };
  return jsonEvent({
    type: encoded.type,
    data: JSON.parse(encoded.data) as Record<string, unknown>,
    metadata: { ...metadata },
  });
}

/**
 * A resolved event of the log stream as the record the codec decodes. Problems the codec cannot
 * see become {@link EventLogCorruptError} here: a gap (the event at `expectedPosition` must come
 * next; a missing one means the stream was truncated by `$maxCount`, `$tb` or a scavenge, and
 * acknowledged events are lost), a link to a deleted event, metadata not written by this adapter.
 * @throws {@link EventLogCorruptError} naming the position.
 */
export function toStoredRecord(resolved: ResolvedEvent, expectedPosition: number): StoredEventRecord {
  const recorded = resolved.event;
  if (recorded === undefined) {
    throw new EventLogCorruptError({
      position: expectedPosition,
      issues: [{ path: '', message: 'a link to a deleted event in the log stream' }],
    });
  }
  const position = fromRevision(recorded.revision);
  if (position !== expectedPosition) {
    throw new EventLogCorruptError({
      position: expectedPosition,
      issues: [
        {
          path: '',
          message: `expected position ${expectedPosition} but the stream holds ${position} next: it was truncated ($maxCount, $tb or a scavenge) and acknowledged events are missing`,
        },
      ],
    });
  }
  const metadata: unknown = recorded.metadata;
  if (!isEventMetadata(metadata)) {
    throw new EventLogCorruptError({
      position,
      issues: [
        {
          path: 'metadata',
          message: `must be JSON { schemaVersion, recordedAtMillis } written by this adapter, got ${show(metadata)}`,
        },
      ],
    });
  }
  return {
    position,
    recordedAtMillis: metadata.recordedAtMillis,
    type: recorded.type,
    version: metadata.schemaVersion,
    data: recorded.data,
  };
}

/** A snapshot as the JSON event stored in the snapshot stream (the state stays readable in the server's UI). */
export function toSnapshotEvent(snapshot: Snapshot, stateJson: string): EventData {
  return jsonEvent({
    type: SNAPSHOT_EVENT_TYPE,
    data: {
      position: snapshot.position,
      schemaVersion: snapshot.schemaVersion,
      state: JSON.parse(stateJson) as unknown,
    },
  });
}

/**
 * A stored snapshot event back as a port {@link Snapshot}. The client has already parsed the
 * JSON, so the state is a fresh copy.
 * @throws {@link EventLogCorruptError} when the event is not a snapshot written by this adapter.
 */
export function fromSnapshotEvent(resolved: ResolvedEvent): Snapshot {
  const recorded = resolved.event;
  const data: unknown = recorded?.data;
  const issues: { path: string; message: string }[] = [];
  if (recorded === undefined || recorded.type !== SNAPSHOT_EVENT_TYPE) {
    issues.push({ path: 'type', message: `must be ${SNAPSHOT_EVENT_TYPE}, got ${show(recorded?.type)}` });
  } else if (typeof data !== 'object' || data === null || !('state' in data)) {
    issues.push({ path: 'snapshot', message: `must be JSON { position, schemaVersion, state }, got ${show(data)}` });
  } else {
    const { position, schemaVersion } = data as { position?: unknown; schemaVersion?: unknown };
    if (!isNonNegativeInteger(position))
      issues.push({ path: 'snapshot.position', message: `must be a non-negative integer, got ${show(position)}` });
    if (!isNonNegativeInteger(schemaVersion) || schemaVersion < 1)
      issues.push({
        path: 'snapshot.schemaVersion',
        message: `must be a positive integer, got ${show(schemaVersion)}`,
      });
    if (issues.length === 0)
      return {
        position: position as number,
        schemaVersion: schemaVersion as number,
        state: (data as { state: unknown }).state,
      };
  }
  throw new EventLogCorruptError({ issues: issues.map((i) => ({ ...i, message: `snapshot stream: ${i.message}` })) });
}

/**
 * The connection string the Kurrent client is given. `esdb://` and `esdb+discover://` (the
 * EventStoreDB client's schemes) are accepted and rewritten to `kurrentdb://` /
 * `kurrentdb+discover://`, which the client parses identically without a deprecation warning.
 * @throws `TypeError` naming `connectionString` when it is not a string with a scheme.
 */
export function toKurrentConnectionString(connectionString: string): string {
  if (typeof connectionString !== 'string' || !/^[a-z+]+:\/\//i.test(connectionString)) {
    throw new TypeError(
      `connectEventStoreDbEventLog: connectionString must look like kurrentdb://host:2113?tls=false, got ${show(connectionString)}`,
    );
  }
  return connectionString.replace(
    /^esdb(\+discover)?:\/\//i,
    (_match, discover: string | undefined) => `kurrentdb${discover ?? ''}://`,
  );
}

/** gRPC status codes (https://github.com/grpc/grpc/blob/master/doc/statuscodes.md) that mean "the server could not be reached or answered in time". */
const GRPC_CONNECTION_CODES: ReadonlySet<number> = new Set([
  1, // CANCELLED (by the server or the transport)
  4, // DEADLINE_EXCEEDED
  14, // UNAVAILABLE
]);

/**
 * Transport failures that the client's Rust read bridge (client 1.3.1, tonic 0.13) does not map
 * and surfaces as an `UnknownError` whose message names the gRPC status: a read cut by a dropped
 * connection arrives as "Unmapped gRPC error: code: The operation was cancelled".
 */
const BRIDGE_TRANSPORT_FAILURE =
  /^Unmapped gRPC (?:connection error|error: code: (?:The operation was cancelled|Deadline expired|The service is currently unavailable))/;

/**
 * Whether a client error means the server is unreachable or did not answer in time (transient).
 * Covers the client's typed errors (also what its Rust read bridge throws), the bridge's unmapped
 * transport failures, and raw grpc-js `ServiceError`s, which the client's batch-append path can
 * let through untranslated.
 */
export function isConnectionError(error: unknown): boolean {
  if (
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof CancelledError ||
    error instanceof NotLeaderError ||
    error instanceof TimeoutError
  )
    return true;
  if (error instanceof UnknownError && BRIDGE_TRANSPORT_FAILURE.test(error.message)) return true;
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'number' && GRPC_CONNECTION_CODES.has(code) && 'metadata' in (error as object);
}

/** Whether a read failed only because the stream has no event yet (an empty log, not an error). */
export const isStreamNotFound = (error: unknown): boolean => error instanceof StreamNotFoundError;

/**
 * The port's result of an append at `expectedVersion` that the server accepted.
 * @throws {@link ExpectedVersionConflictError} when the client was configured not to throw on a
 *   wrong expected revision (`throwOnAppendFailure=false` in the connection string) and reports it as data.
 */
export function fromAppendResult(result: KurrentAppendResult, expectedVersion: number): AppendResult {
  // In that mode the client's batch-append path reports a meaningless revision, so the actual version stays unknown.
  if (!result.success) throw new ExpectedVersionConflictError({ expectedVersion });
  return { fromPosition: expectedVersion + 1, toPosition: fromRevision(result.nextExpectedRevision) };
}

/** Whether an append was refused because the stream was not at the expected revision. */
export const isWrongExpectedRevision = (error: unknown): boolean => error instanceof WrongExpectedVersionError;

/**
 * Translates an error of an append at `expectedVersion` into the port's error.
 * @returns {@link ExpectedVersionConflictError} with the actual version, {@link EventLogUnavailableError},
 *   or `error` itself (a programming error passes through unchanged).
 */
export function translateAppendError(error: unknown, expectedVersion: number): unknown {
  if (error instanceof WrongExpectedVersionError) {
    const actual = error.actualState;
    return new ExpectedVersionConflictError({
      expectedVersion,
      actualVersion: typeof actual === 'bigint' ? fromRevision(actual) : actual === NO_STREAM ? 0 : undefined,
      cause: error,
    });
  }
  return translateError(error, 'append');
}

/**
 * Translates any other client error of `operation` into the port's error.
 * @returns {@link EventLogUnavailableError} for connection loss and timeouts, else `error` unchanged.
 */
export function translateError(error: unknown, operation: string): unknown {
  if (isConnectionError(error)) {
    return new EventLogUnavailableError(LOG_NAME, {
      message: `${operation}: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
  return error;
}

function isEventMetadata(value: unknown): value is EventMetadata {
  if (typeof value !== 'object' || value === null) return false;
  const { schemaVersion, recordedAtMillis } = value as Partial<Record<keyof EventMetadata, unknown>>;
  return typeof schemaVersion === 'number' && typeof recordedAtMillis === 'number';
}

const isNonNegativeInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const show = (value: unknown): string => {
  if (value instanceof Uint8Array) return `${value.length} bytes that are not JSON`;
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};
