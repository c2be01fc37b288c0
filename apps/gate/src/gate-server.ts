/**
 * The sidecar's HTTP side: a Fastify server that proxies every request to the upstream with
 * `@fastify/reply-from` (undici underneath, bodies streamed both ways), and admits a write only
 * once its signed token was verified and the gate's raised floor is durable.
 *
 * Why `@fastify/reply-from` and not `@fastify/http-proxy`: http-proxy is reply-from plus a
 * prefix router and WebSocket proxying; the gate needs a handler that runs its check before
 * forwarding (reply-from's `reply.from()` call is exactly that point), and refuses upgrades.
 * Why not undici's `ProxyAgent`: that is a forward-proxy client (CONNECT), not a server.
 *
 * The check itself is the client library's: `FenceTokenVerifier.verify` then `commitDurably`
 * (floor or refusal durable in the `FileFloorStore` before the answer). This file maps their
 * outcomes to HTTP answers and nothing else.
 */
import replyFrom from '@fastify/reply-from';
import {
  commitDurably,
  InvalidFenceTokenError,
  SigningKeysUnavailableError,
  type FenceTokenVerifier,
  type FileFloorStore,
} from '@lease-fence/client';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { DoubleGrantError, StaleFenceError, type FenceGate } from 'lease-fence';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { GateMetrics } from './metrics.js';

/** The header a writer sends its lease's signed token in (`lease.signedToken` of the agent SDK). Stripped before forwarding. */
export const FENCE_TOKEN_HEADER = 'lease-fence-token';

/**
 * The sidecar's own paths: `healthz`, `readyz` and `metrics` under this prefix are answered by
 * the gate and never forwarded. `/.well-known/` is the registered namespace for site-wide
 * metadata (RFC 8615), so an ordinary service has nothing of its own there.
 */
export const GATE_PATH_PREFIX = '/.well-known/lease-fence-gate';

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): meaningful for one connection only, so a proxy removes
 * them (and every header the `Connection` header names) in both directions. reply-from removes
 * the request's `Connection` and the headers it names, and undici sets its own framing; the rest
 * of the list is ours to remove.
 */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
] as const;

/**
 * Removes the hop-by-hop headers from `headers` in place and returns it. Only for objects made
 * for this one request: reply-from hands `rewriteRequestHeaders` its own copy of the request's
 * headers and `rewriteHeaders` the headers undici parsed for this reply, so copying them again
 * would only add an allocation per request.
 */
const removeHopByHop = <H extends Record<string, unknown>>(headers: H): H => {
  const connection = headers.connection;
  if (typeof connection === 'string')
    for (const name of connection.split(',')) delete headers[name.trim().toLowerCase() as keyof H];
  for (const name of HOP_BY_HOP) delete headers[name];
  return headers;
};

/** Why a request was answered by the gate itself: the `reason` of its JSON body, and a metrics label. */
export type GateRefusalReason =
  | 'stale-fence'
  | 'double-grant'
  | 'invalid-token'
  | 'keys-unavailable'
  | 'floor-store-unavailable'
  | 'upstream-unreachable'
  | 'upstream-timeout'
  | 'bad-request';

/** How long a connection refused for a malformed request may keep sending before it is cut (milliseconds). */
const CLIENT_ERROR_DRAIN_MILLIS = 5_000;

/**
 * Answers a request Node's HTTP parser refused (headers over Node's 16 KiB limit: 431; anything
 * else malformed: 400) in the gate's JSON shape. Unlike Fastify's default, which destroys the
 * socket at once, the rest of what the client sends is read and dropped for a while: closing a
 * socket with unread input makes the kernel send a reset, and the client loses the answer.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge
    ? '431 Request Header Fields Too Large'
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? '408 Request Timeout'
      : '400 Bad Request';
  const body = JSON.stringify({
    ok: false,
    reason: 'bad-request',
    message: tooLarge
      ? 'the request headers exceed 16 KiB (Lease-Fence-Token is about 400 bytes)'
      : `malformed HTTP request (${error.code ?? 'parse error'})`,
  });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.resume();
  setTimeout(() => socket.destroy(), CLIENT_ERROR_DRAIN_MILLIS).unref();
}

/** What {@link createGateServer} needs: the parts `main.ts` wires from the configuration. */
export interface GateServerOptions {
  /** The guarded resource's gate, restored from `store`. */
  readonly gate: FenceGate;
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
  /** Whether `/readyz` answers 200 (the floor store is open and the keys were fetched once). */
  readonly isReady: () => boolean;
  readonly metrics: GateMetrics;
  readonly logger: Logger;
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

/**
 * Builds the sidecar's Fastify server (not listening yet). Requests:
 * - `GATE_PATH_PREFIX/healthz|readyz|metrics`: the gate's own, never forwarded;
 * - a method in `openMethods`: forwarded as is (minus `Lease-Fence-Token`);
 * - any other method: `Lease-Fence-Token` verified (401 `invalid-token`, 503 `keys-unavailable`),
 *   admitted by `commitDurably` (409 `stale-fence` / `double-grant` once the refusal is durable;
 *   503 `floor-store-unavailable` when the floor cannot be saved), then forwarded;
 * - upstream unreachable or reset → 502 `upstream-unreachable`, too slow → 504 `upstream-timeout`.
 * A refused request's body is never read and nothing of it reaches the upstream.
 */
export async function createGateServer(options: GateServerOptions): Promise<FastifyInstance> {
  const { gate, store, verifier, metrics, logger } = options;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify gives every request a pino child bound to its request id: an object and a bindings
    // string per request that only a per-request log line would use, and the gate writes none
    // (its warnings and errors name the URL). Every request logs through the one logger instead.
    childLoggerFactory: (parent) => parent,
    // A proxy forwards what it gets: no body parsing, no trailing-slash or case rewriting.
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 8192 },
    clientErrorHandler: answerClientError,
  });
  // Bodies are streamed to the upstream untouched: the "parser" hands Fastify the raw request stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  await app.register(replyFrom, {
    base: options.upstream.origin,
    disableRequestLogging: true,
    undici: {
      headersTimeout: options.upstreamTimeoutMillis,
      bodyTimeout: options.upstreamTimeoutMillis,
      connections: 128,
      pipelining: 1,
    },
  });

  const answer = (reply: FastifyReply, status: number, body: GateAnswer): FastifyReply => {
    metrics.refused.inc({ reason: body.reason });
    return reply.code(status).header('cache-control', 'no-store').send(body);
  };

  app.get(`${GATE_PATH_PREFIX}/healthz`, async () => ({ ok: true }));
  app.get(`${GATE_PATH_PREFIX}/readyz`, async (_request, reply) =>
    options.isReady()
      ? { ok: true, resource: gate.resource, floor: gate.floor ?? null }
      : reply.code(503).send({
          ok: false,
          reason: 'not-ready',
          message: "the floor store is opening or the coordinator's keys were never fetched",
        }),
  );
  app.get(`${GATE_PATH_PREFIX}/metrics`, async (_request, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  /**
   * How every request is forwarded: one object for the server's life, not four closures per
   * request (nothing in it depends on the request but what reply-from hands each callback).
   */
  const forwardOptions: Parameters<FastifyReply['from']>[1] = {
    rewriteRequestHeaders: (_request, headers) => {
      const forwarded = removeHopByHop(headers);
      delete forwarded[FENCE_TOKEN_HEADER];
      return forwarded;
    },
    rewriteHeaders: (headers) => removeHopByHop(headers),
    // A proxy in front of a write must not replay it: reply-from retries GETs on 503 by default.
    retryDelay: () => null,
    onError: (failed, { error }) => {
      const reply = failed as unknown as FastifyReply; // reply-from hands back the reply it was called on
      const { code, statusCode } = error as { code?: string; statusCode?: number };
      // reply-from's errors carry the status it would answer: 504 for every kind of timeout.
      const timedOut = statusCode === 504;
      logger.warn({ err: error, url: reply.request.url }, timedOut ? 'upstream timed out' : 'upstream unreachable');
      if (reply.sent) return;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      if (timedOut) {
        answer(reply, 504, {
          ok: false,
          reason: 'upstream-timeout',
          message: `the upstream sent no reply within ${options.upstreamTimeoutMillis} ms`,
        });
      } else {
        answer(reply, 502, {
          ok: false,
          reason: 'upstream-unreachable',
          message: `the upstream failed: ${cause?.code ?? code ?? 'error'}${cause?.message === undefined ? '' : ` (${cause.message})`}`,
        });
      }
    },
  };

  const forward = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const startedAt = process.hrtime.bigint();
    reply.raw.once('finish', () => metrics.forwardedSeconds.observe(Number(process.hrtime.bigint() - startedAt) / 1e9));
    return reply.from(request.url, forwardOptions);
  };

  app.all('/*', async (request, reply) => {
    if (!request.url.startsWith('/')) {
      return answer(reply, 400, {
        ok: false,
        reason: 'bad-request',
        message: 'the request target must be a path (origin-form), not an absolute URL',
      });
    }
    if (request.headers.upgrade !== undefined) {
      return answer(reply, 400, {
        ok: false,
        reason: 'bad-request',
        message: 'protocol upgrades (WebSocket) are not proxied by the gate',
      });
    }
    if (options.openMethods.has(request.method)) return forward(request, reply);
    const signedToken = request.headers[FENCE_TOKEN_HEADER];
    if (signedToken === undefined) {
      return answer(reply, 401, {
        ok: false,
        reason: 'invalid-token',
        message: `a ${request.method} needs its lease's signed token in the Lease-Fence-Token header`,
      });
    }
    try {
      const token = await verifier.verify(signedToken, gate.resource);
      // The floor (or the refusal) is durable once this resolves (or rejects); nothing else runs under it.
      await commitDurably(gate, store, token, async () => undefined);
    } catch (error) {
      if (error instanceof InvalidFenceTokenError)
        return answer(reply, 401, { ok: false, reason: 'invalid-token', message: error.message });
      if (error instanceof SigningKeysUnavailableError) {
        return answer(reply.header('retry-after', '1'), 503, {
          ok: false,
          reason: 'keys-unavailable',
          message: error.message,
        });
      }
      if (error instanceof StaleFenceError || error instanceof DoubleGrantError) {
        const { seq, resource, rejected, current } = error.rejection;
        return answer(reply, 409, {
          ok: false,
          reason: error instanceof StaleFenceError ? 'stale-fence' : 'double-grant',
          resource,
          seq,
          rejected,
          current,
        });
      }
      logger.error({ err: error }, 'cannot save the floor: the write is refused');
      return answer(reply.header('retry-after', '1'), 503, {
        ok: false,
        reason: 'floor-store-unavailable',
        message: `the gate cannot make its floor durable: ${(error as Error).message}`,
      });
    }
    metrics.admitted.inc();
    return forward(request, reply);
  });

  return app;
}
