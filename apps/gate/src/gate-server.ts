/**
 * The sidecar's HTTP side: one node:http server whose requests take one of two paths.
 * - The data path (every request but the gate's own): answered by the gate itself when refused,
 *   else forwarded by `forwarder.ts` (undici, bodies streamed both ways). A write is admitted only
 *   once its signed token was verified and the gate's raised floor is durable.
 * - The gate's own paths (`GATE_PATH_PREFIX/healthz|readyz|metrics`): a Fastify app, which
 *   also answers what Node's parser refused (`clientErrorHandler`) and stops the server.
 *
 * Why the data path is not a Fastify route: the forwarding used to be a catch-all route calling
 * `@fastify/reply-from`, and `npm run bench:gate` showed that path spending several times the
 * CPU per request of a bare node:http + undici proxy (see `forwarder.ts`). Requests for the
 * data path now reach plain handlers on Node's own request and response objects; Fastify sees
 * only paths under `GATE_PATH_PREFIX`, and hands back those it has no route for (a request for
 * `GATE_PATH_PREFIX/other` is the upstream's, as before).
 *
 * The check itself is the client library's: `FenceTokenVerifier.verify` then `commitDurably`
 * (floor or refusal durable in the `FileFloorStore` before the answer). This file maps their
 * outcomes to HTTP answers and nothing else.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  commitDurably,
  InvalidFenceTokenError,
  SigningKeysUnavailableError,
  type FenceTokenVerifier,
  type FileFloorStore,
} from '@lease-fence/client';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { DoubleGrantError, StaleFenceError, type FenceGate, type FenceToken } from 'lease-fence';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { createForwarder, FENCE_TOKEN_HEADER, type BeforeBodyEnd } from './forwarder.js';
import type { GateMetrics } from './metrics.js';

export { FENCE_TOKEN_HEADER };

/**
 * The sidecar's own paths: `healthz`, `readyz` and `metrics` under this prefix are answered by
 * the gate and never forwarded. `/.well-known/` is the registered namespace for site-wide
 * metadata (RFC 8615), so an ordinary service has nothing of its own there.
 */
export const GATE_PATH_PREFIX = '/.well-known/lease-fence-gate';

/** Why a request was answered by the gate itself: the `reason` of its JSON body, and a metrics label. */
export type GateRefusalReason =
  | 'stale-fence'
  | 'double-grant'
  | 'invalid-token'
  | 'keys-unavailable'
  | 'coordinator-floor-unavailable'
  | 'floor-store-unavailable'
  | 'upstream-unreachable'
  | 'upstream-timeout'
  | 'bad-request'
  | 'closing';

/** How long a connection refused for a malformed request may keep sending before it is cut (milliseconds). */
const CLIENT_ERROR_DRAIN_MILLIS = 5_000;

/**
 * Answers a request Node's HTTP parser refused (headers over Node's 16 KiB limit: 431; anything
 * else malformed: 400) in the gate's JSON shape. Unlike Fastify's default, which destroys the
 * socket at once, the rest of what the client sends is read and dropped for a while
 * ({@link answerOnSocket}).
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge
    ? '431 Request Header Fields Too Large'
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? '408 Request Timeout'
      : '400 Bad Request';
  answerOnSocket(
    socket,
    status,
    tooLarge
      ? 'the request headers exceed 16 KiB (Lease-Fence-Token is about 400 bytes)'
      : `malformed HTTP request (${error.code ?? 'parse error'})`,
  );
}

/**
 * Writes the gate's `bad-request` answer straight on `socket` and closes it, reading and dropping
 * what the client still sends for a while: closing a socket with unread input makes the kernel
 * send a reset, and the client loses the answer.
 */
function answerOnSocket(socket: Duplex, status: string, message: string): void {
  const body = JSON.stringify({ ok: false, reason: 'bad-request', message });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.resume();
  setTimeout(() => socket.destroy(), CLIENT_ERROR_DRAIN_MILLIS).unref();
}

/**
 * Answers a `CONNECT` (a tunnel request, which the gate never opens): without a `connect`
 * listener Node destroys the connection without a word.
 */
function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  answerOnSocket(socket, '400 Bad Request', 'CONNECT (a tunnel) is not proxied by the gate; send requests with a path');
}

/** The floor store failed while a write's body was ending: the write is cut, as when the floor cannot be saved before it. */
class FloorAtBodyEndError extends Error {
  constructor(cause: unknown) {
    super(`the floor could not be saved at the end of the body: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = 'FloorAtBodyEndError';
  }
}

/** What {@link createGateServer} needs: the parts `main.ts` wires from the configuration. */
export interface GateServerOptions {
  /**
   * The guarded resource's gate, restored from `store` and reconciled with the coordinator
   * (`reconcileGateState`, main.ts): resolves once it is. Until then every write (a method not in
   * `openMethods`) is answered 503 `coordinator-floor-unavailable`, never forwarded.
   */
  readonly gate: Promise<FenceGate>;
  /** Where the gate's floor and refusal outbox are durable. */
  readonly store: FileFloorStore;
  /** Verifies signed tokens for `gate.resource`. */
  readonly verifier: FenceTokenVerifier;
  /** The upstream's origin. */
  readonly upstream: URL;
  /** Methods forwarded without a token (upper case). */
  readonly openMethods: ReadonlySet<string>;
  /** No reply headers or a stalled reply body from the upstream this long → 504 (milliseconds). */
  readonly upstreamTimeoutMillis: number;
  /** Whether `/readyz` answers 200 (the keys were fetched once); also needs `gate` resolved. */
  readonly isReady: () => boolean;
  readonly metrics: GateMetrics;
  readonly logger: Logger;
  /**
   * Called with the token of each admitted write once its floor is durable, before it is
   * forwarded; must not block (main.ts passes `reportAdmits(…).admitted`, which reports a new
   * fence to the coordinator in the background). @defaultValue nothing
   */
  readonly onAdmitted?: (token: FenceToken) => void;
}

/** The body of every answer the gate gives itself (not the upstream's). */
type GateAnswer =
  | {
      ok: false;
      reason: 'stale-fence' | 'double-grant';
      resource: string;
      seq: number;
      rejected: { holderId: string; fence: number };
      current: { holderId: string; fence: number };
    }
  | { ok: false; reason: GateRefusalReason; message: string };

/** How long an idle client connection is kept open (milliseconds): Fastify's default, which the gate had before it made its own server. */
const KEEP_ALIVE_TIMEOUT_MILLIS = 72_000;

/**
 * How much longer than the upstream timeout a client connection may stay silent in the middle of
 * an exchange (sending no byte of its body, reading no byte of the reply) before it is cut
 * (milliseconds). Past the upstream timeout, so that a client waiting for a slow upstream gets
 * its 504 first.
 */
const CLIENT_SILENCE_MARGIN_MILLIS = 5_000;

/** The response headers of every answer the gate gives itself. */
const ANSWER_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;
const RETRY_ANSWER_HEADERS = { ...ANSWER_HEADERS, 'retry-after': '1' } as const;

/**
 * Builds the sidecar's server (a Fastify instance over its own node:http server; not listening
 * yet: `listen` and `close` are Fastify's). Requests:
 * - `GATE_PATH_PREFIX/healthz|readyz|metrics` (GET, HEAD): the gate's own, never forwarded;
 * - a method in `openMethods`: forwarded as is (minus `Lease-Fence-Token`);
 * - any other method before `gate` resolved (the floor not yet reconciled with the coordinator):
 *   503 `coordinator-floor-unavailable`;
 * - any other method: `Lease-Fence-Token` verified (401 `invalid-token`, 503 `keys-unavailable`),
 *   admitted by `commitDurably` (409 `stale-fence` / `double-grant` once the refusal is durable;
 *   503 `floor-store-unavailable` when the floor cannot be saved), then forwarded; the last byte
 *   of its body only while the floor is still its fence and holder: once the floor moved, the
 *   upstream request is cut and the write refused (409) like a stale one;
 * - upstream unreachable or reset → 502 `upstream-unreachable`, too slow → 504 `upstream-timeout`;
 * - once the server is closing, 503 `closing` with `Connection: close`.
 * A request refused before it is forwarded has its body never read and nothing of it reaches the
 * upstream; one refused at its body's end never reaches it whole.
 */
export async function createGateServer(options: GateServerOptions): Promise<FastifyInstance> {
  const { store, verifier, metrics, logger, openMethods, onAdmitted } = options;
  let closing = false;
  /**
   * Requests sent with `Expect: 100-continue` whose `100 Continue` the gate holds back until they
   * are let through, each with the keep-alive Node chose for its connection. Until then the
   * connection is to close after the answer: a refused request is answered before its body was
   * sent, and the client may send it nonetheless or not at all (RFC 9110 §10.1.1).
   */
  const awaitingContinue = new WeakMap<ServerResponse, boolean>();
  /** The gate once reconciled with the coordinator; `undefined` before (writes get 503). */
  let gate: FenceGate | undefined;
  void options.gate.then((reconciled) => {
    gate = reconciled;
  });

  /** Answers `response` with the gate's own JSON body (a refusal, counted by reason). */
  const answer = (response: ServerResponse, status: number, body: GateAnswer, retryAfter = false): void => {
    metrics.refused.inc({ reason: body.reason });
    response.writeHead(status, retryAfter ? RETRY_ANSWER_HEADERS : ANSWER_HEADERS);
    response.end(JSON.stringify(body));
  };

  const forwarder = createForwarder({
    upstream: options.upstream,
    upstreamTimeoutMillis: options.upstreamTimeoutMillis,
    onForwarded: (seconds) => metrics.forwardedSeconds.observe(seconds),
    onFailure: (failure, error, request, response) => {
      // The floor moved while the body was streaming (`stillAdmitted`): the upstream request was
      // cut before its end, and the refusal is already durable in the outbox.
      const cutAtBodyEnd = error instanceof StaleFenceError || error instanceof DoubleGrantError;
      if (cutAtBodyEnd || error instanceof FloorAtBodyEndError) {
        if (response.headersSent || response.destroyed) response.destroy();
        else if (cutAtBodyEnd) answerRefusal(response, error as StaleFenceError | DoubleGrantError);
        else answerFloorUnavailable(response, (error as FloorAtBodyEndError).cause);
        return;
      }
      if (failure === 'client-gone') {
        // Not the upstream's failure: nobody is left to answer, and the upstream request was cut.
        logger.debug({ err: error, url: request.url }, 'the client closed its connection before the exchange ended');
        response.destroy();
        return;
      }
      const timedOut = failure === 'upstream-timeout';
      logger.warn({ err: error, url: request.url }, timedOut ? 'upstream timed out' : 'upstream unreachable');
      // The reply had begun (or the client left): all that is left is to cut the connection.
      if (response.headersSent || response.destroyed) {
        response.destroy();
        return;
      }
      if (timedOut) {
        answer(response, 504, {
          ok: false,
          reason: 'upstream-timeout',
          message: `the upstream sent no reply within ${options.upstreamTimeoutMillis} ms`,
        });
      } else {
        answer(response, 502, {
          ok: false,
          reason: 'upstream-unreachable',
          message: `the upstream failed: ${error.code ?? 'error'} (${error.message})`,
        });
      }
    },
  });

  /** Verifies the write's token and makes its floor durable, then forwards it; or answers the refusal. */
  const admit = async (
    gate: FenceGate,
    signedToken: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> => {
    let token: FenceToken;
    try {
      token = await verifier.verify(signedToken, gate.resource);
      // The floor (or the refusal) is durable once this resolves (or rejects); nothing else runs under it.
      await commitDurably(gate, store, token, async () => undefined);
    } catch (error) {
      if (error instanceof InvalidFenceTokenError)
        return answer(response, 401, { ok: false, reason: 'invalid-token', message: error.message });
      if (error instanceof SigningKeysUnavailableError)
        return answer(response, 503, { ok: false, reason: 'keys-unavailable', message: error.message }, true);
      if (error instanceof StaleFenceError || error instanceof DoubleGrantError) return answerRefusal(response, error);
      return answerFloorUnavailable(response, error);
    }
    metrics.admitted.inc();
    onAdmitted?.(token);
    forward(request, response, () => stillAdmitted(gate, token));
  };

  /**
   * Checked before the last byte of an admitted write's body goes upstream: a write admitted
   * before a handover must not land whole after it. While the floor is still the token's own
   * fence and holder, nothing is awaited. Once it moved (a newer fence admitted here, or raised by
   * a fence-first `admit` over the gate link), the token goes through `commitDurably` again, which
   * makes the refusal durable and rejects with it; the forwarder then cuts the upstream request.
   * A failed save rejects with {@link FloorAtBodyEndError}: the write is not let through either.
   */
  const stillAdmitted = (gate: FenceGate, token: FenceToken): Promise<void> | undefined => {
    const floor = gate.floor;
    if (floor?.fence === token.fence && floor.holderId === token.holderId) return undefined;
    return commitDurably(gate, store, token, async () => undefined).catch((error: unknown) => {
      throw error instanceof StaleFenceError || error instanceof DoubleGrantError
        ? error
        : new FloorAtBodyEndError(error);
    });
  };

  /** Forwards a request the gate lets through, sending the `100 Continue` its client waits for first (see {@link awaitingContinue}). */
  const forward = (request: IncomingMessage, response: ServerResponse, beforeBodyEnd?: BeforeBodyEnd): void => {
    const keepAlive = awaitingContinue.get(response);
    if (keepAlive !== undefined) {
      awaitingContinue.delete(response);
      response.shouldKeepAlive = keepAlive;
      response.writeContinue();
    }
    forwarder.forward(request, response, beforeBodyEnd);
  };

  /** Answers 409 with the gate's refusal (already durable in the outbox). */
  const answerRefusal = (response: ServerResponse, error: StaleFenceError | DoubleGrantError): void => {
    const { seq, resource, rejected, current } = error.rejection;
    answer(response, 409, {
      ok: false,
      reason: error instanceof StaleFenceError ? 'stale-fence' : 'double-grant',
      resource,
      seq,
      rejected,
      current,
    });
  };

  /** Answers 503 `floor-store-unavailable` (retryable): the floor or a refusal could not be saved. */
  const answerFloorUnavailable = (response: ServerResponse, error: unknown): void => {
    logger.error({ err: error }, 'cannot save the floor: the write is refused');
    answer(
      response,
      503,
      {
        ok: false,
        reason: 'floor-store-unavailable',
        message: `the gate cannot make its floor durable: ${(error as Error).message}`,
      },
      true,
    );
  };

  /** The data path: every request that is not the gate's own. */
  const serveData = (request: IncomingMessage, response: ServerResponse): void => {
    if (closing) {
      response.shouldKeepAlive = false;
      return answer(response, 503, { ok: false, reason: 'closing', message: 'the gate is shutting down' }, true);
    }
    if (request.url?.startsWith('/') !== true) {
      return answer(response, 400, {
        ok: false,
        reason: 'bad-request',
        message: `the request target must be a path (origin-form), not ${JSON.stringify(request.url)}`,
      });
    }
    const { headers } = request;
    if (headers.upgrade !== undefined) {
      return answer(response, 400, {
        ok: false,
        reason: 'bad-request',
        message: 'protocol upgrades (WebSocket) are not proxied by the gate',
      });
    }
    if (openMethods.has(request.method ?? '')) return forward(request, response);
    const signedToken = headers[FENCE_TOKEN_HEADER];
    if (typeof signedToken !== 'string') {
      return answer(response, 401, {
        ok: false,
        reason: 'invalid-token',
        message: `a ${request.method} needs its lease's signed token in the Lease-Fence-Token header`,
      });
    }
    if (gate === undefined) {
      return answer(
        response,
        503,
        {
          ok: false,
          reason: 'coordinator-floor-unavailable',
          message:
            "the gate has not yet read the coordinator's latest fence and refusal seq for this resource (it reconciles its floor with them at start)",
        },
        true,
      );
    }
    admit(gate, signedToken, request, response).catch((error: unknown) => {
      logger.error({ err: error, url: request.url }, 'request failed in the gate');
      if (response.headersSent) response.destroy();
      else answer(response, 400, { ok: false, reason: 'bad-request', message: (error as Error).message });
    });
  };

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify gives every request a pino child bound to its request id, which only a
    // per-request log line would use, and the gate writes none.
    childLoggerFactory: (parent) => parent,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true },
    clientErrorHandler: answerClientError,
    // The gate's own server: the data path never enters Fastify (see the file's comment).
    serverFactory: (fastifyHandler): Server => {
      const server = createServer((request, response) =>
        request.url?.startsWith(GATE_PATH_PREFIX) === true
          ? fastifyHandler(request, response)
          : serveData(request, response),
      );
      // `Expect: 100-continue`: Node would answer `100 Continue` before the request is seen; the
      // gate sends it only once the request is let through (`forward`), so that the client of a
      // refused write never sends its body.
      server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
        if (request.url?.startsWith(GATE_PATH_PREFIX) === true) {
          response.writeContinue();
          fastifyHandler(request, response);
          return;
        }
        awaitingContinue.set(response, response.shouldKeepAlive);
        response.shouldKeepAlive = false;
        serveData(request, response);
      });
      server.on('connect', answerConnect);
      // The keep-alive and request timeouts Fastify gives a server it makes itself (its defaults,
      // which the gate had); and a bound on a client silent mid-exchange: a writer whose body
      // stalls holds one of the forwarder's upstream connections until its connection ends, so
      // 128 of them left every other request waiting without a bound (with an upstream that has
      // no request timeout of its own). Node destroys a socket silent this long, which aborts its
      // request: the upstream request is cut, never whole, and its connection freed.
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MILLIS;
      server.requestTimeout = 0;
      server.setTimeout(options.upstreamTimeoutMillis + CLIENT_SILENCE_MARGIN_MILLIS);
      return server;
    },
  });
  // A body sent to a path under the prefix that Fastify hands back to the data path is streamed
  // to the upstream untouched: the "parser" hands Fastify the raw request stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onClose', async () => forwarder.destroy());

  app.get(`${GATE_PATH_PREFIX}/healthz`, async () => ({ ok: true }));
  app.get(`${GATE_PATH_PREFIX}/readyz`, async (_request, reply) =>
    options.isReady() && gate !== undefined
      ? { ok: true, resource: gate.resource, floor: gate.floor ?? null }
      : reply.code(503).send({
          ok: false,
          reason: 'not-ready',
          message:
            "the coordinator's keys were never fetched, or the floor is not yet reconciled with the coordinator's latest fence",
        }),
  );
  app.get(`${GATE_PATH_PREFIX}/metrics`, async (_request, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  // Anything else under the prefix (another path, another method) is the upstream's, as any other path.
  app.setNotFoundHandler((request, reply) => {
    reply.hijack();
    serveData(request.raw, reply.raw);
  });

  return app;
}
