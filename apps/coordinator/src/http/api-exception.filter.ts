/**
 * The one place that decides HTTP statuses for everything that is not a 200/202 success:
 * outcome reasons → 409 / 410, bad input → 400 / 413, auth → 401 / 403,
 * an unavailable coordinator or event log (or one closed by shutdown) → 503 with `retryable: true` and a reason,
 * anything else → 500, logged as a bug. Replies follow the protocol's `ErrorReply`
 * (denials reply with the outcome itself).
 * Errors are typed where they are thrown; this filter is the one place that maps them to statuses.
 */
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import {
  CoordinatorNotServingError,
  CoordinatorUnavailableError,
  EventLogClosedError,
  EventLogCorruptError,
  EventLogUnavailableError,
} from '@lease-fence/coordinator-core';
import type { DenialReason, ErrorReply } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuthFailureLog } from '../auth/auth-failure-log.js';
import { ForbiddenError, UnauthenticatedError } from '../auth/auth.errors.js';
import { DeniedOutcome, type WireDenial } from './denied-outcome.js';
import { InvalidRequestError, toInputIssues } from './invalid-request.error.js';
import { InvalidContentEncodingError } from './json-body-parser.js';
import { requestIdOf, type WithRequestId } from './request-id.js';

/** A reply the filter decided: status, body, and extra headers. */
export interface DecidedReply {
  readonly status: number;
  readonly body: ErrorReply | WireDenial;
  readonly headers?: Readonly<Record<string, string>>;
  /** True when the exception is a bug: the filter logs it at error level with its stack. */
  readonly isBug?: boolean;
}

/**
 * Status of each denial reason. `expired` is 410 Gone: that generation can never come back.
 * `seq-conflict` (a gate's rejection seq already recorded with other content) is 409.
 * `fence-unavailable` (fence-first: no gate admitted the new fence in time; it was burned) is 503, retryable.
 * Keyed by every {@link DenialReason}: a new reason does not compile until it has a status here.
 */
const DENIAL_STATUS: Readonly<Record<DenialReason, number>> = {
  held: 409,
  'already-held': 409,
  'lock-delay': 409,
  'not-holder': 409,
  expired: 410,
  'seq-conflict': 409,
  'fence-unavailable': 503,
};

/** Lower-kebab name of an HTTP status, for the `error` field of framework-raised 4xx replies. */
const ERROR_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  426: 'upgrade-required',
  431: 'headers-too-large',
};

/** Options of {@link decideReply}. */
export interface DecideReplyOptions {
  /** The configured body limit, named in 413 messages (bytes). */
  readonly maxBodyBytes: number;
}

/**
 * Maps any thrown value to the reply the client gets. Pure: no logging, no I/O.
 * @param exception - Whatever a controller, guard or the body parser threw.
 */
export function decideReply(exception: unknown, options: DecideReplyOptions): DecidedReply {
  if (exception instanceof DeniedOutcome) {
    return { status: DENIAL_STATUS[exception.denial.reason], body: exception.denial };
  }
  if (exception instanceof InvalidRequestError) {
    return { status: 400, body: { error: exception.code, message: exception.message, issues: [...exception.issues] } };
  }
  if (exception instanceof z.ZodError) {
    const issues = toInputIssues(exception.issues, 'body');
    return {
      status: 400,
      body: { error: 'invalid-request', message: issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues },
    };
  }
  if (exception instanceof UnauthenticatedError) {
    return {
      status: 401,
      body: { error: exception.code, message: exception.message },
      headers: { 'www-authenticate': 'Bearer' },
    };
  }
  if (exception instanceof ForbiddenError) {
    return { status: 403, body: { error: exception.code, message: exception.message } };
  }
  if (exception instanceof CoordinatorUnavailableError || exception instanceof CoordinatorNotServingError) {
    return {
      status: 503,
      body: { error: exception.code, message: exception.message, retryable: true, reason: exception.reason },
      headers: { 'retry-after': '1' },
    };
  }
  if (exception instanceof EventLogUnavailableError) {
    return {
      status: 503,
      body: { error: exception.code, message: exception.message, retryable: true, reason: 'event-log-unavailable' },
      headers: { 'retry-after': '1' },
    };
  }
  if (exception instanceof EventLogClosedError) {
    return {
      status: 503,
      body: { error: exception.code, message: 'the coordinator is shutting down', retryable: true, reason: 'closed' },
      headers: { 'retry-after': '1' },
    };
  }
  if (exception instanceof EventLogCorruptError) {
    return { status: 500, body: corruptLogReply(exception), isBug: true };
  }
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    return fromFrameworkException(exception, options);
  }
  return { status: 500, body: { error: 'internal', message: 'internal error; it was logged' }, isBug: true };
}

/**
 * The reply body for a damaged record read after start-up (one older than the snapshot recovery
 * started from): not the caller's fault and not retryable, so it says where the damage is instead
 * of "internal error". The one wording of it: `GET /v1/events` answers it (500) and the stream's
 * `closing` frame carries it (stream/closing-frame.ts).
 * @param exception - The log's typed error; its message names the position and the field.
 */
export function corruptLogReply(exception: EventLogCorruptError): ErrorReply {
  return { error: exception.code, message: exception.message, retryable: false };
}

/** 4xx raised by Nest or the body parser: malformed JSON, bad percent-encoding, oversize body, unknown route. */
const fromFrameworkException = (exception: HttpException, options: DecideReplyOptions): DecidedReply => {
  const status = exception.getStatus();
  const cause = exception.cause;
  const error = ERROR_OF_STATUS[status] ?? `http-${status}`;
  if (status === 400 && cause instanceof SyntaxError) {
    const parsed = jsonKindOf(cause);
    if (parsed !== undefined) {
      // Valid JSON, but not an object or array: the strict body parser refuses it as a syntax error.
      const message = `must be a JSON object, got ${parsed}`;
      return { status, body: { error, message: `body: ${message}`, issues: [{ path: 'body', message }] } };
    }
    const message = `malformed JSON: ${cause.message}`;
    return { status, body: { error, message: `body: ${message}`, issues: [{ path: 'body', message }] } };
  }
  if (status === 400 && (cause instanceof URIError || codeOf(cause) === 'FST_ERR_BAD_URL')) {
    const message = 'malformed percent-encoding in the path';
    return { status, body: { error, message: `path: ${message}`, issues: [{ path: 'path', message }] } };
  }
  if (status === 400 && cause instanceof InvalidContentEncodingError) {
    const message = `the body is not valid ${cause.encoding} (${cause.detail})`;
    return {
      status,
      body: { error, message: `content-encoding: ${message}`, issues: [{ path: 'content-encoding', message }] },
    };
  }
  if (status === 413) {
    const message = `must be at most ${options.maxBodyBytes} bytes`;
    return { status, body: { error, message: `body: ${message}`, issues: [{ path: 'body', message }] } };
  }
  if (status === 415 && typeOf(cause) === 'encoding.unsupported') {
    const message = `${String((cause as { encoding?: unknown }).encoding)} is not supported; send the body uncompressed (identity), or as gzip, deflate or br`;
    return {
      status,
      body: { error, message: `content-encoding: ${message}`, issues: [{ path: 'content-encoding', message }] },
    };
  }
  if (status === 415) {
    // body-parser's unsupported charset, or a Content-Type header the router cannot parse.
    const message =
      codeOf(cause) === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'is not a valid media type; send application/json'
        : exception.message;
    return {
      status,
      body: { error, message: `content-type: ${message}`, issues: [{ path: 'content-type', message }] },
    };
  }
  if (status === 426) {
    // RFC 9110 § 15.5.22: a 426 names the protocol to upgrade to.
    return {
      status,
      body: { error, message: exception.message },
      headers: { upgrade: 'websocket', connection: 'Upgrade' },
    };
  }
  if (status === 400) {
    // Every 400 has the documented shape: issues naming what was wrong (here, the request's body).
    return {
      status,
      body: { error, message: `body: ${exception.message}`, issues: [{ path: 'body', message: exception.message }] },
    };
  }
  return { status, body: { error, message: exception.message } };
};

/** The `type` body-parser gives its errors (`encoding.unsupported`, `charset.unsupported`, …), if `error` has one. */
const typeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string'
    ? (error as { type: string }).type
    : undefined;

/** The `code` of a Fastify error (`FST_ERR_…`), if `error` is one. */
const codeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined;

/**
 * What the body was when the parser refused valid JSON that is not an object or array (`null`,
 * a number, a string, a boolean): body-parser keeps the raw text as `body` on its error.
 * `undefined` when the text is not JSON at all.
 */
const jsonKindOf = (error: SyntaxError): string | undefined => {
  const raw = (error as SyntaxError & { body?: unknown }).body;
  if (typeof raw !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return value === null ? 'null' : `a ${typeof value}`;
  } catch {
    return undefined;
  }
};

/** The HTTP adapter's calls the filter replies with (Fastify's reply or, in middleware, Node's response). */
export type ReplyAdapter = Pick<HttpAdapterHost['httpAdapter'], 'isHeadersSent' | 'setHeader' | 'reply'>;

/** The parts of the request (Fastify's or Node's) the filter logs for a bug or an auth failure. */
export interface RequestLike extends WithRequestId {
  /** Fastify's request wraps Node's, which carries the request id. */
  readonly raw?: WithRequestId;
  readonly method?: string;
  readonly url?: string;
  /** The URL as received, before a mounted middleware trimmed `url`. */
  readonly originalUrl?: string;
  readonly socket?: { readonly remoteAddress?: string | undefined };
}

/**
 * Global exception filter (the `APP_FILTER` of `http/http.module.ts`): catches everything thrown
 * on the HTTP path, in middleware, guards, the body parser, the router and the controllers alike,
 * and replies with {@link decideReply}'s decision. 500s are logged at error level as bugs (method,
 * URL, stack, request id); 401 and 403 go to the {@link AuthFailureLog} (warn, rate-limited, never
 * the token); nothing else is logged here.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  /**
   * @param logger - Where bugs are logged.
   * @param options - See {@link DecideReplyOptions}.
   * @param authFailures - Where 401 and 403 replies are logged; not logged when absent.
   * @param adapter - The HTTP adapter the reply is sent through.
   */
  constructor(
    private readonly logger: Logger,
    private readonly options: DecideReplyOptions,
    private readonly authFailures: AuthFailureLog | undefined,
    private readonly adapter: ReplyAdapter,
  ) {}

  /** Replies to the client; a reply already under way is left alone (the bug is still logged). */
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const decided = this.decideAndLog(exception, http.getRequest<RequestLike>());
    const response: unknown = http.getResponse();
    if (this.adapter.isHeadersSent(response)) return;
    for (const [name, value] of Object.entries(decided.headers ?? {})) this.adapter.setHeader(response, name, value);
    this.adapter.reply(response, decided.body, decided.status);
  }

  /**
   * {@link decideReply}'s decision for `exception`, after logging what it calls for (a bug at
   * error level, a 401 / 403 to the auth failure log), each line with the request's id.
   * @param request - The request, for the log lines.
   */
  decideAndLog(exception: unknown, request: RequestLike): DecidedReply {
    const decided = decideReply(exception, this.options);
    const requestId = requestIdOf(request);
    if (decided.isBug) {
      this.logger.error(
        { err: exception, method: request.method, url: request.originalUrl ?? request.url, requestId },
        'bug: unhandled exception answered 500',
      );
    } else if (
      this.authFailures !== undefined &&
      (exception instanceof UnauthenticatedError || exception instanceof ForbiddenError)
    ) {
      this.authFailures.record({
        method: request.method ?? '?',
        url: request.originalUrl ?? request.url ?? '',
        status: exception instanceof UnauthenticatedError ? 401 : 403,
        reason: exception.message,
        remoteAddress: request.socket?.remoteAddress,
        requestId,
      });
    }
    return decided;
  }
}
