/**
 * Typed errors of the agent SDK. Business denials (a lease held by someone else, an expired
 * renewal, a grant that arrived dead) are never thrown: they are results with `ok: false` and a
 * kebab-case `reason`. These errors mean the coordinator could not be reached, answered
 * something the protocol does not allow, or a lease can no longer be trusted.
 *
 * Every class extends the library's {@link LeaseFenceError}, so one `instanceof` check covers
 * the library and the SDK; switch on `code`, which never changes between versions.
 *
 * @see docs/design.md § Layout (libs/client)
 */
import { LeaseFenceError } from 'lease-fence';

/**
 * Thrown when the coordinator answered with a status the SDK does not retry and that is not a
 * business outcome: 400 (bad request), 401/403 (token missing, unknown or not allowed), 404, 500,
 * or a 4xx/5xx the protocol does not list. Nothing is retried after it.
 *
 * `body` is the parsed JSON reply when there was one (for the coordinator's own errors an
 * `ErrorReply`: `{ error, message, issues? }`), otherwise the raw text.
 */
export class CoordinatorHttpError extends LeaseFenceError {
  readonly code = 'coordinator-http';

  /**
   * @param status - The HTTP status received.
   * @param body - The reply body: parsed JSON when it was JSON, otherwise the text.
   * @param operation - What the SDK was doing, for the message (for example `acquire deploy-slot-a`).
   */
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly operation: string,
  ) {
    super(`${operation}: coordinator answered HTTP ${status}${describeBody(body)}`);
    this.name = 'CoordinatorHttpError';
  }
}

/**
 * Thrown when every attempt of a request failed without an answer from the coordinator: network
 * errors (connection refused or reset, DNS), per-attempt timeouts (`timeoutMillis`), lost
 * replies. The request may or may not have been processed; a later retry with the same request
 * is safe (acquire retries reuse the `requestId`). When the coordinator did answer, with 503, the
 * error is {@link CoordinatorUnavailableError} instead.
 *
 * `cause` is the last attempt's failure.
 */
export class CoordinatorUnreachableError extends LeaseFenceError {
  readonly code = 'coordinator-unreachable';
  /** Marks a transient condition: trying again later may succeed. */
  readonly retryable = true;

  /**
   * @param operation - What the SDK was doing, for the message.
   * @param attempts - How many attempts were made (1 + retries).
   * @param cause - The last attempt's failure.
   */
  constructor(
    readonly operation: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${operation}: coordinator unreachable after ${describeAttempts(attempts)}: ${describeCause(cause)}`, {
      cause,
    });
    this.name = 'CoordinatorUnreachableError';
  }
}

/**
 * Thrown when every attempt of a request was answered 503 by the coordinator (the last one at
 * least): it is reachable but cannot serve now, and says why in `reason` — `recovering` (replaying
 * its log after a start), `event-log-unavailable` (its log does not answer; it re-opens once it
 * does), `standby`, `unhealthy`, `superseded` (another coordinator owns the log) or `closed`
 * (shutting down). Nothing was processed by a 503; a later retry with the same request is safe.
 *
 * `cause` is the last attempt's {@link CoordinatorHttpError} (status 503, with the reply `body`).
 */
export class CoordinatorUnavailableError extends LeaseFenceError {
  readonly code = 'coordinator-unavailable';
  /** Marks a transient condition: trying again later may succeed (not for `superseded` until an operator acts). */
  readonly retryable = true;
  /** The HTTP status received: 503. */
  readonly status = 503;
  /** Why the coordinator cannot serve, as its reply says (`undefined` when the reply named none). */
  readonly reason: string | undefined;

  /**
   * @param operation - What the SDK was doing, for the message.
   * @param attempts - How many attempts were made (1 + retries).
   * @param cause - The last attempt's 503 {@link CoordinatorHttpError}.
   */
  constructor(
    readonly operation: string,
    readonly attempts: number,
    cause: CoordinatorHttpError,
  ) {
    const reason = reasonOf(cause.body);
    super(
      `${operation}: coordinator unavailable (HTTP 503${reason === undefined ? '' : `, reason ${reason}`}) after ${describeAttempts(attempts)}${describeBody(cause.body)}`,
      { cause },
    );
    this.name = 'CoordinatorUnavailableError';
    this.reason = reason;
  }
}

/**
 * Thrown when a reply does not match the protocol's schema for its status (for example a 200
 * without a grant). The SDK never guesses what such a reply means; nothing is retried.
 */
export class CoordinatorReplyError extends LeaseFenceError {
  readonly code = 'coordinator-reply';

  /**
   * @param status - The HTTP status received.
   * @param body - The reply body as received (parsed JSON, or text when it was not JSON).
   * @param operation - What the SDK was doing.
   * @param problem - What did not match, for the message (the schema's issues, joined).
   */
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly operation: string,
    readonly problem: string,
  ) {
    super(`${operation}: HTTP ${status} reply does not match the protocol: ${problem}`);
    this.name = 'CoordinatorReplyError';
  }
}

/**
 * Why a held lease can no longer be trusted:
 * - `'expired'` — a renewal was answered `expired`: that generation ended and is never resurrected.
 * - `'not-holder'` — a renewal was answered `not-holder`.
 * - `'deadline-passed'` — this client's send-anchored deadline passed before a renewal succeeded.
 * - `'dead-on-arrival'` — a renewal's grant arrived after the deadline it would have set.
 * - `'released'` — the holder released it.
 */
export type LeaseLostReason = 'expired' | 'not-holder' | 'deadline-passed' | 'dead-on-arrival' | 'released';

/**
 * The reason a {@link LeaseKeeper}'s `signal` (and the signal `withLease` passes to its callback)
 * is aborted with: the lease can no longer be trusted, so work done under it must stop. Writes
 * must still go through the resource's `FenceGate`: a stall between checking the signal and
 * writing is exactly what fencing exists for.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring, FenceGate)
 */
export class LeaseLostError extends LeaseFenceError {
  readonly code = 'lease-lost';

  /**
   * @param resource - The lease's resource.
   * @param holderId - The holder that lost it.
   * @param fence - The lease's fence.
   * @param reason - Why it can no longer be trusted.
   */
  constructor(
    readonly resource: string,
    readonly holderId: string,
    readonly fence: number,
    readonly reason: LeaseLostReason,
    options?: { cause?: unknown },
  ) {
    super(
      `${resource}: lease fence ${fence} of holder ${JSON.stringify(holderId)} can no longer be trusted (${reason})`,
      options,
    );
    this.name = 'LeaseLostError';
  }
}

/**
 * Thrown by a floor store's `load` when the stored state cannot be read back as a gate state
 * (not JSON, wrong shape, another resource). The store never guesses a floor: starting a gate
 * with a lower floor than it had would admit stale writes.
 *
 * @see docs/design.md § "The library's rules" (A resource restores its floor after its own restart)
 */
export class FloorStoreCorruptError extends LeaseFenceError {
  readonly code = 'floor-store-corrupt';

  /**
   * @param location - Where the state is kept (a file path, a table name).
   * @param problem - What is wrong with it.
   */
  constructor(
    readonly location: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`floor store ${location}: ${problem}; refusing to guess a floor`, options);
    this.name = 'FloorStoreCorruptError';
  }
}

const describeBody = (body: unknown): string => {
  if (body === undefined || body === '') return '';
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return `: ${body.message}`;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return `: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
};

const describeAttempts = (attempts: number): string => `${attempts} attempt${attempts === 1 ? '' : 's'}`;

/** The `reason` of a coordinator's error reply (`{ error, message, reason? }`), when it has one. */
const reasonOf = (body: unknown): string | undefined =>
  typeof body === 'object' && body !== null && 'reason' in body && typeof body.reason === 'string'
    ? body.reason
    : undefined;

/** What a failed attempt's error says, on one line: the error and the one it wraps. */
const describeCause = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? cause.cause : undefined;
  if (isPlainHttpAnswerToTls(cause) || (inner !== undefined && isPlainHttpAnswerToTls(inner))) {
    const head = inner === undefined ? 'TLS handshake failed' : cause.message;
    return `${head} (the server answered without TLS: is its URL http://, not https://?)`;
  }
  return `${cause.message}${inner === undefined ? '' : ` (${inner.message})`}`;
};

/**
 * OpenSSL's "wrong version number": a TLS client (an `https://` or `wss://` URL) got a reply that is
 * not TLS, most often plain HTTP. fetch gives it the code; ws's socket error only its message
 * (`write EPROTO …:ssl3_get_record:wrong version number:…`, several lines).
 */
const isPlainHttpAnswerToTls = (error: Error): boolean =>
  (error as NodeJS.ErrnoException).code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
  error.message.includes(':wrong version number:');
