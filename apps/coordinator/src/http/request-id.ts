/**
 * Request ids: every HTTP request gets one, the caller's `x-request-id` when it is a plausible id,
 * a fresh UUID otherwise. It is echoed on the reply (`x-request-id`) and put on every log line the
 * request causes (the request log, an authentication failure, a bug answered 500), so a caller's
 * report and the coordinator's log can be matched.
 *
 * Fastify's own `genReqId` option mints the id (no pino-http: Fastify already gives each request
 * an id, and `nestjs-pino` needs Node 22); this module decides which id is accepted.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header a caller may send its id in, and the reply carries it back in. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Longest accepted caller id (characters); a longer one is replaced, not cut. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** A caller's id is kept when it is 1–{@link MAX_REQUEST_ID_LENGTH} characters of letters, digits and `-_.:/+=@`. */
const ACCEPTED_REQUEST_ID = new RegExp(`^[A-Za-z0-9\\-_.:/+=@]{1,${MAX_REQUEST_ID_LENGTH}}$`);

/** A request that was given an id by {@link assignRequestId}. */
export interface WithRequestId {
  requestId?: string;
}

/**
 * The id of a request whose `x-request-id` header is `header`: the header itself when it is one
 * acceptable id (length and characters above), else a fresh random UUID. Never throws: a bad
 * header is replaced, not refused, so it cannot fail a request.
 */
export function requestIdFor(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && ACCEPTED_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * Fastify's `genReqId`: decides the id of `request` ({@link requestIdFor}) and leaves it on the
 * Node request too, where middleware, the exception filter and the WebSocket upgrade read it
 * ({@link requestIdOf}).
 */
export function assignRequestId(request: IncomingMessage & WithRequestId): string {
  const id = requestIdFor(request.headers[REQUEST_ID_HEADER]);
  request.requestId = id;
  return id;
}

/**
 * The id {@link assignRequestId} gave a request, from the Node request or Fastify's wrapper of it
 * (`raw`); `undefined` for a request the HTTP pipeline did not see (a WebSocket upgrade).
 */
export function requestIdOf(
  request: (WithRequestId & { readonly raw?: WithRequestId }) | undefined,
): string | undefined {
  return request?.requestId ?? request?.raw?.requestId;
}
