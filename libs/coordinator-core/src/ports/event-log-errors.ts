/**
 * Typed errors of the {@link EventLog} port. Adapters translate every vendor error into one of
 * these (or let a programming error through unchanged), so the coordinator and the service map
 * them in one place: conflict → superseded, unavailable → 503 / unhealthy, corrupt → refuse to start.
 *
 * @see docs/design.md § "The event-sourced coordinator" (single writer)
 */

/** Base of every error the EventLog port throws on purpose. `code` is stable; `retryable` marks transient failures. */
export abstract class EventLogError extends Error {
  /** Stable machine-readable code, kebab-case. */
  abstract readonly code: string;
  /** True when the same call may succeed later. */
  readonly retryable: boolean = false;
}

/**
 * An append's `expectedVersion` did not match the log: another writer appended first. Nothing
 * was appended. For a coordinator this means it has been superseded and must stop granting.
 */
export class ExpectedVersionConflictError extends EventLogError {
  readonly code = 'expected-version-conflict';
  /** The version the caller expected (number of events). */
  readonly expectedVersion: number;
  /** The log's version when the append was refused, when the adapter knows it. */
  readonly actualVersion: number | undefined;

  constructor(options: {
    readonly expectedVersion: number;
    readonly actualVersion?: number;
    readonly cause?: unknown;
  }) {
    super(
      `append expected the log at version ${options.expectedVersion} but it is at ` +
        `${options.actualVersion ?? 'an unknown version'}: another writer appended first; nothing was appended`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ExpectedVersionConflictError';
    this.expectedVersion = options.expectedVersion;
    this.actualVersion = options.actualVersion;
  }
}

/**
 * The store failed (I/O error, disk full, busy, connection lost). Transient: `retryable` is true.
 * For an append the outcome may be unknown (the events may or may not have landed), so a
 * coordinator treats it as unknown: it acknowledges nothing and burns the fences it minted.
 */
export class EventLogUnavailableError extends EventLogError {
  readonly code = 'event-log-unavailable';
  override readonly retryable = true;
  /** Adapter name (`'sqlite'`, `'memory'`, `'eventstoredb'`). */
  readonly logName: string;

  constructor(logName: string, options: { readonly message?: string; readonly cause?: unknown } = {}) {
    super(
      `${logName} event log unavailable: ${options.message ?? describeCause(options.cause)}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'EventLogUnavailableError';
    this.logName = logName;
  }
}

/** One problem found in a stored record or file: a dotted `path` inside the record and a message. */
export interface EventLogCorruptIssue {
  /** Dotted path inside the record (`data.fence`), or `''` for the whole record or file. */
  readonly path: string;
  readonly message: string;
}

/**
 * Stored data cannot be trusted: an event that does not decode (unknown type or version, schema
 * mismatch, invalid JSON), a gap in positions, an event that contradicts the state it is folded
 * into, or a damaged file. Recovery stops on it; nothing is skipped.
 */
export class EventLogCorruptError extends EventLogError {
  readonly code = 'event-log-corrupt';
  /** Position of the offending event, or `undefined` when the problem is not tied to one event (file damage). */
  readonly position: number | undefined;
  readonly issues: readonly EventLogCorruptIssue[];

  constructor(options: {
    readonly position?: number;
    readonly issues: readonly EventLogCorruptIssue[];
    readonly cause?: unknown;
  }) {
    const where = options.position === undefined ? 'event log' : `event at position ${options.position}`;
    const what = options.issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ');
    super(`${where} is corrupt: ${what}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EventLogCorruptError';
    this.position = options.position;
    this.issues = options.issues;
  }
}

/** A method was called on a log handle after `close()`. Not retryable on this handle. */
export class EventLogClosedError extends EventLogError {
  readonly code = 'event-log-closed';
  readonly logName: string;

  constructor(logName: string, operation: string) {
    super(`${logName} event log: ${operation} was called after close()`);
    this.name = 'EventLogClosedError';
    this.logName = logName;
  }
}

const describeCause = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause));
