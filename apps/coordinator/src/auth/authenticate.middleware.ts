/**
 * Authentication before anything reads the request body: an Express middleware mounted on `/v1`
 * ahead of the JSON body parser. A missing or unknown bearer token is refused with 401 before
 * the body is parsed, so a caller without a token cannot probe the input validation (a malformed
 * or oversize body gets 401, not 400 or 413). Roles are still checked by the route guards.
 * `/v1/keys` (the public signing keys) is the one `/v1` route open without a token.
 */
import type { AuthenticatedRequest } from './role.guards.js';
import type { TokenRegistry } from './token-registry.js';

/** Paths under `/v1` (relative to the mount) served without a token: the public signing keys (a JWKS). */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/keys', '/keys/']);

/** An Express middleware: `next()` to go on, `next(error)` to hand an error to Nest's error handler (and so to the exception filter). */
export type Middleware = (request: AuthenticatedRequest & { readonly path?: string }, response: unknown, next: (error?: unknown) => void) => void;

/**
 * Creates the middleware: it resolves the `Authorization: Bearer <token>` header and leaves the
 * principal on the request for the role guard; a refusal goes to the exception filter as
 * `UnauthenticatedError` (401 with `WWW-Authenticate: Bearer`, logged by the auth failure log).
 *
 * @param tokens - The tokens file's registry.
 */
export function createAuthenticationMiddleware(tokens: TokenRegistry): Middleware {
  return (request, _response, next) => {
    if (request.path !== undefined && PUBLIC_PATHS.has(request.path)) {
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
