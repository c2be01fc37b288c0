/**
 * Serves the dashboard's production build at `/`: its static files, and `index.html` for any
 * other GET that is not an API path (the SPA's client-side routes). API paths are passed on
 * untouched, without a file-system lookup, so the request path stays lean.
 */
import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

/** Path prefixes that belong to the API, never to the dashboard. */
const API_PREFIXES = ['/v1/', '/docs', '/healthz', '/readyz', '/metrics'];

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** A Connect-style middleware. */
export type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

const isApiPath = (path: string): boolean => path === '/v1' || API_PREFIXES.some((prefix) => path.startsWith(prefix));

const fileStats = async (path: string): Promise<Stats | undefined> => {
  try {
    const stats = await stat(path);
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Creates the middleware.
 * @param root - Absolute path of the dashboard build (holds `index.html`).
 */
export function createDashboardMiddleware(root: string): Middleware {
  const rootWithSep = root.endsWith(sep) ? root : `${root}${sep}`;
  const send = (response: ServerResponse, method: string, path: string, stats: Stats, immutable: boolean): void => {
    response.statusCode = 200;
    response.setHeader('content-type', CONTENT_TYPES[extname(path)] ?? 'application/octet-stream');
    response.setHeader('content-length', stats.size);
    response.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (method === 'HEAD') {
      response.end();
      return;
    }
    createReadStream(path).on('error', () => response.destroy()).pipe(response);
  };
  return (request, response, next) => {
    const method = request.method ?? 'GET';
    const rawPath = (request.url ?? '/').split('?', 1)[0] ?? '/';
    if ((method !== 'GET' && method !== 'HEAD') || isApiPath(rawPath)) {
      next();
      return;
    }
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      next();
      return;
    }
    const file = normalize(join(root, path));
    const inside = file.startsWith(rootWithSep);
    void (async () => {
      const stats = inside ? await fileStats(file) : undefined;
      if (stats !== undefined) {
        send(response, method, file, stats, path.startsWith('/assets/'));
        return;
      }
      if (extname(path) !== '' && path !== '/') {
        next(); // a missing asset is a 404, not the SPA shell
        return;
      }
      const index = join(root, 'index.html');
      const indexStats = await fileStats(index);
      if (indexStats === undefined) next();
      else send(response, method, index, indexStats, false);
    })();
  };
}
