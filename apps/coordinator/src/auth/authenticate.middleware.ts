/**
 * Authentication before anything reads the request body: a middleware of every route
 * (`http/http.module.ts`) that takes the `/v1` paths, run before the JSON body parser. A missing or unknown bearer token is refused with 401 before
 * the body is parsed, so a caller without a token cannot probe the input validation (a malformed
 * or oversize body gets 401, not 400 or 413). Roles are still checked by the route guards.
 * `/v1/keys` (the public signing keys) is the one `/v1` route open without a token.
 */
import type { AuthenticatedRequest } from './role.guards.js';
import type { TokenRegistry } from './token-registry.js';

/** The API's paths, which need a token: `/v1` and below (matched as the router does, whatever the case). */
const API_PATH = /^\/v1(?:\/|$)/i;
/** Paths under `/v1` served without a token: the public signing keys (a JWKS). */
const PUBLIC_PATH = /^\/v1\/keys\/?$/i;

/** The parts of the (Node) request the middleware reads and writes. */
export type AuthenticationRequest = AuthenticatedRequest & {
  readonly originalUrl?: string;
  readonly url?: string | undefined;
};

/** A middleware: `next()` to go on, `next(error)` to hand an error to the exception filter. */
export type Middleware = (request: AuthenticationRequest, response: unknown, next: (error?: unknown) => void) => void;

/**
 * Creates the middleware: it resolves the `Authorization: Bearer <token>` header and leaves the
 * principal on the request for the role guard; a refusal goes to the exception filter as
 * `UnauthenticatedError` (401 with `WWW-Authenticate: Bearer`, logged by the auth failure log).
 *
 * @param tokens - The tokens file's registry.
 */
export function createAuthenticationMiddleware(tokens: TokenRegistry): Middleware {
  return (request, _response, next) => {
    const url = request.originalUrl ?? request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (!API_PATH.test(path) || PUBLIC_PATH.test(path)) {
      next();
      return;
    }
    let principal;
    try {
      principal = tokens.byAuthorization(request.headers.authorization);
    } catch (error) {
      next(error); // UnauthenticatedError
      return;
    }
    request.principal = principal;
    next();
  };
}
