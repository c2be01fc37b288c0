/**
 * The SDK's HTTP transport: one JSON request to the coordinator, authenticated with a bearer
 * token, bounded by a per-attempt timeout, retried with backoff and jitter when — and only when —
 * the failure may be transient (network error, timeout, lost reply, 503). Replies are parsed with
 * the protocol's schemas, chosen by status; an unexpected status or shape is a typed error.
 *
 * Requests use Node's global `fetch` (undici), whose default dispatcher keeps connections alive
 * between requests, so renewals reuse one socket; a gate's client never reuses a connection idle
 * for more than 500 ms (`recent-connection-fetch.ts`).
 *
 * @see docs/design.md § Layout (libs/client: HTTP transport with timeouts and idempotent retries)
 */
import {
  CoordinatorHttpError,
  CoordinatorReplyError,
  CoordinatorUnavailableError,
  CoordinatorUnreachableError,
} from './errors.js';
import { linkSignals } from './linked-signal.js';
import { backoffDelayMillis, createRetryPolicy, type RetryOptions, type RetryPolicy } from './retry-policy.js';
import { systemTimers, type Timers } from './timers.js';

/**
 * The part of a zod schema the transport uses (structural, so the SDK needs no zod import):
 * `safeParse` of the protocol's reply schemas.
 */
export interface ReplySchema<T> {
  safeParse(data: unknown):
    | { readonly success: true; readonly data: T }
    | {
        readonly success: false;
        readonly error: {
          readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
        };
      };
}

/** Which schema parses the reply of each expected status; any other status is an error. */
export type ReplySchemas<T> = Readonly<Record<number, ReplySchema<T>>>;

/** A retry about to happen: passed to {@link CoordinatorHttpOptions.onRetry} before the backoff. */
export interface RetryEvent {
  /** What is being retried, e.g. `acquire deploy-slot-a`. */
  readonly operation: string;
  /** The attempt that just failed (1 = the first). */
  readonly attempt: number;
  /** The backoff before the next attempt, in milliseconds. */
  readonly delayMillis: number;
  /** Why the attempt failed: a network error, a timeout (`TimeoutError`), or a 503 {@link CoordinatorHttpError}. */
  readonly error: unknown;
}

/** Connection settings shared by the agent client and the gate client. */
export interface CoordinatorHttpOptions {
  /** The coordinator's base URL, e.g. `http://127.0.0.1:3000` (a path prefix is kept). */
  readonly baseUrl: string | URL;
  /** The bearer token (an agent's for leases, a gate's for rejections). */
  readonly token: string;
  /**
   * Time allowed for one attempt, request sent to reply body read, in milliseconds. Integer, 1 ≤ timeoutMillis.
   * A timeout counts as a lost reply and is retried.
   * @defaultValue 5000
   */
  readonly timeoutMillis?: number;
  /** Backoff and attempts for transient failures. @defaultValue see {@link RetryOptions} */
  readonly retry?: RetryOptions;
  /** Called before each retry (for logs and metrics). Exceptions it throws are ignored. */
  readonly onRetry?: (event: RetryEvent) => void;
  /** How the backoff waits. @defaultValue {@link systemTimers} */
  readonly timers?: Timers;
}

/** A reply whose status was expected, parsed with that status's schema. */
export interface ParsedReply<T> {
  /** The HTTP status received (one of the expected ones). */
  readonly status: number;
  /** The body, parsed by that status's schema. */
  readonly value: T;
}

/**
 * Sends JSON requests to one coordinator with one token. Shared by {@link LeaseFenceClient} and
 * {@link FenceGateClient}; exported for callers of endpoints the SDK does not wrap.
 */
export class CoordinatorHttp {
  readonly #baseUrl: string;
  readonly #authorization: string;
  readonly #timeoutMillis: number;
  readonly #retry: RetryPolicy;
  readonly #timers: Timers;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #fetch: (url: string, init: RequestInit) => Promise<Response>;

  /**
   * @param api - Name of the owning API, used in argument errors.
   * @param fetchImplementation - What sends each attempt: Node's global `fetch` (pooled keep-alive
   *   connections) unless given, e.g. `recentConnectionFetch` for a gate's reports.
   * @throws TypeError when `baseUrl` is not an http(s) URL or `token` is empty.
   * @throws RangeError when `timeoutMillis` or a `retry` field is out of range (the message names it).
   */
  constructor(
    api: string,
    options: CoordinatorHttpOptions,
    fetchImplementation: (url: string, init: RequestInit) => Promise<Response> = (url, init) => fetch(url, init),
  ) {
    const { url, timeoutMillis } = checkConnectionOptions(api, options);
    this.#baseUrl = url.href.replace(/\/+$/, '');
    this.#authorization = `Bearer ${options.token}`;
    this.#timeoutMillis = timeoutMillis;
    this.#retry = createRetryPolicy(api, options.retry);
    this.#timers = options.timers ?? systemTimers;
    this.#onRetry = options.onRetry;
    this.#fetch = fetchImplementation;
  }

  /** The base URL requests go to, without a trailing slash. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /**
   * POSTs `body` as JSON to `path` and parses the reply with the schema registered for its status.
   * Network errors, timeouts and 503 are retried with backoff; the same `body` is sent each time.
   *
   * @param operation - Names the request in errors and retry events (e.g. `renew deploy-slot-a`).
   * @param path - Path below the base URL, starting with `/`, already URL-encoded.
   * @param replies - Expected statuses and their schemas.
   * @param signal - Aborts the request and the backoff; the promise rejects with `signal.reason`.
   * @throws {@link CoordinatorUnavailableError} every attempt failed transiently, the last one with a 503 (`reason` says why).
   * @throws {@link CoordinatorUnreachableError} every attempt failed transiently, the last one without an answer (network error, timeout).
   * @throws {@link CoordinatorHttpError} a status not in `replies` (other than 503), not retried.
   * @throws {@link CoordinatorReplyError} an expected status whose body does not match its schema.
   */
  async post<T>(
    operation: string,
    path: string,
    body: unknown,
    replies: ReplySchemas<T>,
    signal?: AbortSignal,
  ): Promise<ParsedReply<T>> {
    return this.#send(operation, path, JSON.stringify(body), replies, signal);
  }

  /**
   * GETs `path` (a read: leases, events, rejections, whoami) and parses the reply with the schema
   * registered for its status. Retried like {@link CoordinatorHttp.post}: a read changes nothing.
   *
   * @param operation - Names the request in errors and retry events (e.g. `list leases`).
   * @param path - Path below the base URL with its query, starting with `/`, already URL-encoded.
   * @param replies - Expected statuses and their schemas.
   * @param signal - Aborts the request and the backoff; the promise rejects with `signal.reason`.
   * @throws what {@link CoordinatorHttp.post} throws, for the same reasons.
   */
  async get<T>(
    operation: string,
    path: string,
    replies: ReplySchemas<T>,
    signal?: AbortSignal,
  ): Promise<ParsedReply<T>> {
    return this.#send(operation, path, undefined, replies, signal);
  }

  /** One request (`payload` absent = GET), retried with backoff while the failure may be transient. */
  async #send<T>(
    operation: string,
    path: string,
    payload: string | undefined,
    replies: ReplySchemas<T>,
    signal: AbortSignal | undefined,
  ): Promise<ParsedReply<T>> {
    return sendWithRetries(
      this.#retrying,
      operation,
      async () => {
        const { status, text } = await this.#attempt(path, payload, signal);
        return { status, body: parseBody(text) };
      },
      replies,
      signal,
    );
  }

  /** How this transport retries (shared with the agent link transport, `coordinator-websocket.ts`). */
  get #retrying(): Retrying {
    return { policy: this.#retry, timers: this.#timers, onRetry: this.#onRetry };
  }

  async #attempt(
    path: string,
    payload: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; text: string }> {
    const linked = linkSignals(signal, AbortSignal.timeout(this.#timeoutMillis));
    try {
      const response = await this.#fetch(`${this.#baseUrl}${path}`, {
        ...(payload === undefined
          ? { method: 'GET', headers: { authorization: this.#authorization, accept: 'application/json' } }
          : {
              method: 'POST',
              headers: {
                authorization: this.#authorization,
                'content-type': 'application/json',
                accept: 'application/json',
              },
              body: payload,
            }),
        signal: linked.signal,
      });
      return { status: response.status, text: await response.text() };
    } finally {
      linked.dispose();
    }
  }
}

/** How a transport retries: its policy, its timers and its retry observer. @internal */
export interface Retrying {
  readonly policy: RetryPolicy;
  readonly timers: Timers;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
}

/**
 * The one retry loop of the SDK's transports (HTTP and the agent link): runs `attempt` until it
 * answers with a status other than 503, retrying transport failures (network errors, timeouts,
 * a dropped connection) and 503 with backoff and jitter, at most `policy.maxAttempts` times.
 * Every attempt sends the same request (same requestId), so the coordinator applies it at most once.
 * @param attempt - One exchange: resolves with the status and the parsed body, rejects on a transport failure.
 * @throws what {@link CoordinatorHttp.post} throws, for the same reasons. @internal
 */
export async function sendWithRetries<T>(
  retrying: Retrying,
  operation: string,
  attempt: () => Promise<{ readonly status: number; readonly body: unknown }>,
  replies: ReplySchemas<T>,
  signal: AbortSignal | undefined,
): Promise<ParsedReply<T>> {
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    signal?.throwIfAborted();
    let failure: unknown;
    try {
      const { status, body } = await attempt();
      if (status === 503) {
        failure = new CoordinatorHttpError(status, body, operation);
      } else {
        return parseReply(operation, status, body, replies);
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!isTransportFailure(error)) throw error;
      failure = error;
    }
    if (attemptNumber >= retrying.policy.maxAttempts) {
      throw failure instanceof CoordinatorHttpError
        ? new CoordinatorUnavailableError(operation, attemptNumber, failure)
        : new CoordinatorUnreachableError(operation, attemptNumber, failure);
    }
    const delayMillis = backoffDelayMillis(retrying.policy, attemptNumber);
    try {
      retrying.onRetry?.({ operation, attempt: attemptNumber, delayMillis, error: failure });
    } catch {
      // observers never change the request's fate
    }
    await retrying.timers.sleep(delayMillis, signal);
  }
}

/** Failures of the exchange itself (as opposed to a reply): fetch's TypeError, timeouts, aborts, socket errors. */
const isTransportFailure = (error: unknown): boolean =>
  error instanceof TypeError ||
  (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) ||
  (typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    /^(E[A-Z]+|UND_ERR)/.test(error.code));

/**
 * The checks every transport makes of its connection options: `baseUrl`, `token`, `timeoutMillis`.
 * @throws TypeError / RangeError naming `api` and the field. @internal
 */
export const checkConnectionOptions = (
  api: string,
  options: CoordinatorHttpOptions,
): { readonly url: URL; readonly timeoutMillis: number } => {
  const url = parseBaseUrl(api, options.baseUrl);
  if (typeof options.token !== 'string' || options.token.length === 0) {
    throw new TypeError(
      `${api}: token must be a non-empty string, got ${options.token === '' ? 'an empty string' : typeof options.token}`,
    );
  }
  const timeoutMillis = options.timeoutMillis ?? 5000;
  if (!Number.isSafeInteger(timeoutMillis) || timeoutMillis < 1) {
    throw new RangeError(
      `${api}: timeoutMillis must be a positive integer (milliseconds), got ${String(timeoutMillis)}`,
    );
  }
  return { url, timeoutMillis };
};

/** `baseUrl` as an absolute http(s) URL. @throws TypeError naming `api` otherwise. @internal */
export const parseBaseUrl = (api: string, baseUrl: string | URL): URL => {
  let url: URL;
  try {
    url = new URL(String(baseUrl));
  } catch (cause) {
    throw new TypeError(`${api}: baseUrl must be an absolute http(s) URL, got ${JSON.stringify(String(baseUrl))}`, {
      cause,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${api}: baseUrl must use http: or https:, got ${JSON.stringify(url.protocol)}`);
  }
  const problem = coordinatorUrlProblem(url);
  if (problem !== undefined) throw new TypeError(`${api}: baseUrl ${problem}`);
  return url;
};

/**
 * What makes an http(s) URL unusable as the coordinator's base URL, in words that follow the
 * setting's name, or `undefined`: credentials (fetch refuses them, and they would be printed in
 * errors), a query or a fragment (each route's path is appended to the base URL, so it would land
 * inside them). A path is fine: a coordinator behind a reverse proxy may live under one. The one
 * copy of the rule: the SDK, the command line and the gate check their setting with it.
 */
export const coordinatorUrlProblem = (url: URL): string | undefined => {
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)';
  if (url.search !== '' || url.hash !== '' || url.href.endsWith('?') || url.href.endsWith('#'))
    return 'must have no query (?…) or fragment (#…): each route is appended to it';
  return undefined;
};

const parseBody = (text: string): unknown => {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

const parseReply = <T>(operation: string, status: number, body: unknown, replies: ReplySchemas<T>): ParsedReply<T> => {
  const schema = replies[status];
  if (schema === undefined) throw new CoordinatorHttpError(status, body, operation);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`)
      .join('; ');
    throw new CoordinatorReplyError(status, body, operation, problem);
  }
  return { status, value: parsed.data };
};
