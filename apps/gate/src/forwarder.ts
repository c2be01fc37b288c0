/**
 * The gate's forwarding: a request the gate let through goes to the upstream over an undici
 * `Pool` of keep-alive connections, its body streamed from the client's request, and the
 * upstream's reply is written straight into the client's response (`pool.stream`, which honours
 * the response's backpressure), minus the hop-by-hop headers a proxy must not pass on.
 *
 * Why this is written here and not left to `@fastify/reply-from` (what the gate used before):
 * `npm run bench:gate` measures a bare node:http + undici proxy
 * (`test/bench/support/reference-proxy.ts`) in the same rounds as the gate, and the gate on
 * reply-from spent 470 µs of CPU per open read where that bare proxy spent 90 µs, and reached
 * 0.16× its requests/s (one run, load 18 on 2 cores): reply-from copies the headers, builds a
 * URL, wraps the reply in a stream and hands it to Fastify's reply, and Fastify's request/reply
 * objects, hooks and serializers run for every request. This file is that bare proxy plus what
 * a proxy must do (hop-by-hop headers, `Lease-Fence-Token` removed, 502/504 answers) and
 * nothing else; the request and reply stay Node's own objects throughout.
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';

/** The header a writer sends its lease's signed token in (`lease.signedToken` of the agent SDK). Stripped before forwarding. */
export const FENCE_TOKEN_HEADER = 'lease-fence-token';

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): meaningful for one connection only, so a proxy removes
 * them (and every header the `Connection` header names) in both directions; undici sets the
 * upstream connection's own framing.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Request headers not passed on besides the hop-by-hop ones: the fence token (for the gate
 * alone), `host` (undici sends the upstream's) and `expect` (the gate has already answered
 * `100-continue` to the client, and undici refuses the header).
 */
const NOT_FORWARDED: ReadonlySet<string> = new Set([...HOP_BY_HOP, FENCE_TOKEN_HEADER, 'host', 'expect']);

/**
 * The header names a `Connection` header lists (lower case), which are hop-by-hop too; `undefined`
 * when it lists none but the connection options every client and server send (`keep-alive`,
 * `close`), so the common request allocates nothing here.
 */
function connectionNamed(connection: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return undefined;
  const named = new Set<string>();
  for (const value of Array.isArray(connection) ? connection : [connection])
    for (const name of value.split(',')) named.add(name.trim().toLowerCase());
  return named;
}

/** The request headers the upstream gets: a new object without {@link NOT_FORWARDED} and what `Connection` names. */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = connectionNamed(headers.connection);
  const forwarded: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (NOT_FORWARDED.has(name) || named?.has(name) === true) continue;
    forwarded[name] = headers[name];
  }
  return forwarded;
}

/** Removes the hop-by-hop headers (and what `Connection` names) from `headers`, undici's object made for this one reply, in place. */
export function removeHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = connectionNamed(headers.connection);
  if (named !== undefined) for (const name of named) delete headers[name];
  for (const name of HOP_BY_HOP) delete headers[name];
  return headers;
}

/**
 * Why forwarding failed: the upstream could not be reached or reset, or it was too slow; or the
 * client closed its connection before its request or the reply ended (`client-gone`: the
 * upstream request was cut, and there is nobody left to answer).
 */
export type ForwardFailure = 'upstream-unreachable' | 'upstream-timeout' | 'client-gone';

/** undici's error codes for a connect, headers or body timeout: answered 504 rather than 502. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** What {@link createForwarder} needs. */
export interface ForwarderOptions {
  /** The upstream's origin (`http://host:port`). */
  readonly upstream: URL;
  /** No reply headers, or a reply body stalled, this long → the request fails with `upstream-timeout` (milliseconds). */
  readonly upstreamTimeoutMillis: number;
  /** Called once per forwarded request when the upstream's reply was written to its end (duration in seconds). */
  readonly onForwarded: (seconds: number) => void;
  /**
   * Called when forwarding failed. `response.headersSent` tells whether the reply had begun
   * (then the caller can only cut the connection) or the caller still answers.
   */
  readonly onFailure: (
    failure: ForwardFailure,
    error: Error & { code?: string },
    request: IncomingMessage,
    response: ServerResponse,
  ) => void;
}

/**
 * Runs before the last byte of a forwarded request's body is passed to the upstream: resolves
 * (or returns `undefined`, without a turn of the event loop) to let it through, rejects to cut the
 * upstream request, which then never arrives whole; the rejection goes to `onFailure`.
 */
export type BeforeBodyEnd = () => Promise<void> | undefined;

/** A running forwarder. */
export interface Forwarder {
  /**
   * Sends `request` to the upstream and streams its reply into `response` (never throws; failures
   * go to `onFailure`). With `beforeBodyEnd`, a request with a body is held back at its end until
   * it settles (see {@link BeforeBodyEnd}).
   */
  forward(request: IncomingMessage, response: ServerResponse, beforeBodyEnd?: BeforeBodyEnd): void;
  /** Closes every upstream connection at once (a request still in flight fails). */
  destroy(): Promise<void>;
}

/** What each forwarded request carries through undici (its `opaque`), so the factory and callback are shared, not closures per request. */
interface InFlight {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly startedAtMillis: number;
}

/**
 * The upstream connections: 128 at most (one per request in flight; beyond that requests queue
 * in undici), no pipelining, since a write must never be sent behind one whose reply is still
 * outstanding on the same connection (a reset would leave both in doubt).
 */
const MAX_UPSTREAM_CONNECTIONS = 128;

/**
 * Whether a client's request stream ended with the error of its client leaving (Node's `aborted`
 * when the connection closed mid-body) rather than one undici gave it when the upstream failed
 * (its own `UND_ERR_*` errors, or a socket's system error, which names its `syscall`).
 */
const isClientAbort = (error: Error | null | undefined): boolean =>
  error != null && !('syscall' in error) && (error as { code?: string }).code?.startsWith('UND_ERR_') !== true;

/** Creates the forwarder for `options.upstream`. */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const pool = new Pool(options.upstream.origin, {
    connections: MAX_UPSTREAM_CONNECTIONS,
    pipelining: 1,
    headersTimeout: options.upstreamTimeoutMillis,
    bodyTimeout: options.upstreamTimeoutMillis,
  });

  const writeReplyHead = ({ statusCode, headers, opaque }: Dispatcher.StreamFactoryData<InFlight>): ServerResponse => {
    const { request, response } = opaque;
    removeHopByHop(headers);
    // The upstream answered before the request's body was all read: the client connection
    // cannot carry another request after this one.
    if (!request.complete) headers.connection = 'close';
    response.writeHead(statusCode, headers as OutgoingHttpHeaders);
    return response;
  };

  const finished = (reported: Error | null, { opaque }: { opaque: InFlight }): void => {
    if (reported === null) {
      options.onForwarded((performance.now() - opaque.startedAtMillis) / 1000);
      return;
    }
    const { request, response } = opaque;
    // Once the reply has begun, undici fails by destroying the response with its error, and then
    // reports the response's premature close: the cause is the response's own error, and a
    // response closed without one was closed by the client.
    const error = response.headersSent ? (response.errored ?? reported) : reported;
    const clientGone = response.headersSent ? response.errored === null : isClientAbort(request.errored);
    const code = (error as { code?: string }).code;
    const failure: ForwardFailure = clientGone
      ? 'client-gone'
      : code !== undefined && TIMEOUT_CODES.has(code)
        ? 'upstream-timeout'
        : 'upstream-unreachable';
    options.onFailure(failure, error, request, response);
  };

  return {
    forward(request, response, beforeBodyEnd) {
      const { headers } = request;
      // A body is announced by its framing headers; a request without them has none (RFC 9112 §6.3).
      const hasBody = headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
      pool.stream<InFlight>(
        {
          path: request.url ?? '/',
          method: request.method as Dispatcher.HttpMethod,
          headers: forwardedRequestHeaders(headers),
          body: !hasBody ? null : beforeBodyEnd === undefined ? request : heldAtEnd(request, beforeBodyEnd),
          opaque: { request, response, startedAtMillis: performance.now() },
        },
        writeReplyHead,
        finished,
      );
    },
    destroy: () => pool.destroy(),
  };
}

/**
 * `request`'s body, passed through chunk by chunk, its last chunk and its end held until
 * `beforeBodyEnd` settles: a rejection errors the stream, and undici then aborts the upstream request before its last byte.
 * A client that aborts (its request errors or closes unfinished) errors it too, so the upstream
 * request is cut either way. `pipe` and two listeners rather than `stream.pipeline`, which costs
 * more per request than the gate's whole check.
 */
function heldAtEnd(request: IncomingMessage, beforeBodyEnd: BeforeBodyEnd): Transform {
  // Each chunk is passed on when the next one arrives, the last one only after the check: with a
  // Content-Length the upstream holds the whole request as soon as its last byte arrives, so
  // holding back the end of the stream alone would not be enough.
  let held: Buffer | undefined;
  const body = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done: TransformCallback) {
      const settled = beforeBodyEnd();
      if (settled === undefined) done(null, held);
      else settled.then(() => done(null, held), done);
    },
  });
  request.once('error', (error) => body.destroy(error));
  request.once('close', () => {
    if (!request.complete) body.destroy(new Error('the client aborted the request'));
  });
  return request.pipe(body);
}
