/**
 * 405 for a known route called with the wrong method, with an `Allow` header listing the methods
 * it has, instead of the 404 Nest would answer. A middleware (`http/http.module.ts`), so it runs
 * before the body is read, built from the route table the docs are generated from (`docs/api-routes.ts`), so the
 * methods it allows cannot drift from the routes documented.
 */
import { MethodNotAllowedException } from '@nestjs/common';

/** A route as the table lists it: lower-case method, OpenAPI-style path (`/v1/leases/{resource}/acquire`). */
export interface KnownRoute {
  readonly method: string;
  readonly path: string;
}

/** The parts of the (Node) request the middleware reads. */
export interface MethodRequest {
  readonly method?: string | undefined;
  /** The URL as received (set by the middleware layer, which may trim `url`). */
  readonly originalUrl?: string;
  /** The URL, with its query string. */
  readonly url?: string | undefined;
}

/** The part of the (Node) response the middleware writes. */
export interface AllowHeaderTarget {
  setHeader(name: string, value: string): unknown;
}

/** One path of the table with every method it answers (`HEAD` wherever `GET` is). */
interface PathMethods {
  readonly path: string;
  readonly pattern: RegExp;
  readonly allow: readonly string[];
}

/**
 * The methods `routes` answer on each path: a `{param}` matches one path segment, a trailing `/`
 * is ignored and case does not matter (as in Express's routing).
 */
function methodsByPath(routes: readonly KnownRoute[]): readonly PathMethods[] {
  const byPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method.toUpperCase() === 'GET') methods.add('HEAD');
    byPath.set(route.path, methods);
  }
  return [...byPath].map(([path, methods]) => ({
    path,
    pattern: new RegExp(
      `^${path
        .split(/\{\w+\}/)
        .map(escapeRegExp)
        .join('[^/]+')}/?$`,
      'i',
    ),
    allow: [...methods],
  }));
}

/**
 * Creates the middleware: a request whose path is a known route but whose method is not one of
 * its methods goes to the exception filter as a 405 (`error: 'method-not-allowed'`, the message
 * naming the allowed methods), with `Allow` set. Anything else passes through untouched.
 *
 * @param routes - Every route the service answers.
 */
export function createMethodNotAllowedMiddleware(
  routes: readonly KnownRoute[],
): (request: MethodRequest, response: AllowHeaderTarget, next: (error?: unknown) => void) => void {
  const table = methodsByPath(routes);
  return (request, response, next) => {
    const url = request.originalUrl ?? request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const method = request.method ?? 'GET';
    const known = table.find((entry) => entry.pattern.test(path));
    if (known === undefined || known.allow.includes(method)) {
      next();
      return;
    }
    const allow = known.allow.join(', ');
    response.setHeader('allow', allow);
    next(new MethodNotAllowedException(`${method} is not allowed on ${known.path}; use ${allow}`));
  };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
