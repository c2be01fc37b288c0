/**
 * The lease fast path: `POST /v1/leases/:resource/{acquire,renew,release}` from an authenticated
 * agent, answered by a plain `node:http` request listener in front of Express, because the
 * Nest + Express pipeline (router, guards, parameter decorators, response controller) cost about
 * a third of the service's CPU per request under load (BENCHMARKS.md § "The service path").
 *
 * It holds no rule of its own. It reuses the token registry and {@link authorize} (auth), the
 * shared JSON body parser, the {@link LeasesController} methods themselves (protocol schemas,
 * TTL bounds, the coordinator calls, outcome → reply), and the exception filter's
 * `decideAndLog` (status codes, bug and auth-failure logging). Every request it does not take
 * goes to Express untouched, so the other routes, and every refused credential (401 / 403, with
 * its log line), are answered where they always were: a request is taken only when its method
 * is `POST`, its URL is exactly one of the three routes (no query string, no percent-encoding,
 * no trailing slash) and its bearer token is an agent's. Replies are byte-for-byte what Express
 * sends for the same outcome (status, `content-type: application/json; charset=utf-8`, body).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { authorize } from '../auth/authorize.js';
import type { AgentPrincipal } from '../auth/principal.js';
import type { TokenRegistry } from '../auth/token-registry.js';
import type { DecidedReply, RequestLike } from '../http/api-exception.filter.js';
import type { JsonBodyParser } from '../http/json-body-parser.js';
import type { LeasesController } from './leases.controller.js';

/** The three routes, in the only spelling the fast path takes; group 1 is `:resource`, group 2 the operation. */
const LEASE_ROUTE = /^\/v1\/leases\/([^/?%#]+)\/(acquire|renew|release)$/;

/** What the fast path is built from; every part is the one the Express path uses. */
export interface LeaseFastPathOptions {
  /** The tokens file's registry. */
  readonly tokens: TokenRegistry;
  /** The Nest controller instance whose methods answer the routes. */
  readonly leases: Pick<LeasesController, 'acquire' | 'renew' | 'release'>;
  /** The JSON body parser the Express routes use. */
  readonly jsonBody: JsonBodyParser;
  /** The HTTP adapter's mapping of body-parser errors to Nest exceptions (`ExpressAdapter.mapException`). */
  readonly mapException: (error: unknown) => unknown;
  /** The exception filter's decision and logging (`ApiExceptionFilter.decideAndLog`). */
  readonly decideAndLog: (exception: unknown, request: RequestLike) => DecidedReply;
  /** True once shutdown began: requests then go to Express, which closes their connections. */
  readonly isStopping: () => boolean;
}

/**
 * Wraps `fallback` (the Express application) with the fast path.
 * @returns a `node:http` request listener to use in place of `fallback`.
 */
export function createLeaseFastPath(options: LeaseFastPathOptions, fallback: RequestListener): RequestListener {
  const { tokens, leases, jsonBody, mapException, decideAndLog, isStopping } = options;

  const agentOf = (request: IncomingMessage, resource: string): AgentPrincipal | undefined => {
    try {
      const principal = tokens.byAuthorization(request.headers.authorization);
      authorize(principal, 'agent', resource);
      return principal.role === 'agent' ? principal : undefined;
    } catch {
      return undefined; // refused: Express answers it (401 / 403) and logs it, as for every route
    }
  };

  const answerError = (request: IncomingMessage, response: ServerResponse, exception: unknown): void => {
    const decided = decideAndLog(exception, request);
    writeJson(response, decided.status, decided.body, decided.headers);
  };

  return (request, response) => {
    const route = request.method === 'POST' && !isStopping() ? LEASE_ROUTE.exec(request.url ?? '') : null;
    const agent = route === null ? undefined : agentOf(request, route[1]!);
    if (route === null || agent === undefined) {
      fallback(request, response);
      return;
    }
    const resource = route[1]!;
    const operation = route[2] as 'acquire' | 'renew' | 'release';
    jsonBody(request, response, (parseError) => {
      if (parseError !== undefined) {
        answerError(request, response, mapException(parseError));
        return;
      }
      leases[operation](resource, (request as IncomingMessage & { body?: unknown }).body, agent).then(
        (reply) => writeJson(response, 200, reply),
        (error: unknown) => answerError(request, response, error),
      );
    });
  };
}

/** Sends `body` as Express's `res.json` does (status, JSON content type with charset, length). */
function writeJson(response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
