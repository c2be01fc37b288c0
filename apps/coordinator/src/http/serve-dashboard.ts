/**
 * Serves the dashboard's production build at `/`: its static files, and `index.html` for any
 * other GET that is not an API path (the SPA's client-side routes). API paths, and paths that
 * only look like one (`/v2/leases`, `/base/v1/leases`, `/health`, `/livez`, `/metrics/x`), are passed on untouched,
 * without a file-system lookup: a route that does not exist answers 404 JSON, so a mistyped probe
 * or client fails instead of getting the dashboard's HTML with 200.
 */
import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

/**
 * Paths that belong to the API (or look like they do), never to the dashboard: any API version
 * segment (`/v1`, `/v2/…`), also below a prefix (`/lease-fence/v1/leases`: a client whose base URL
 * has a path nothing strips; the dashboard routes by query string, not by path), and `/health*`,
 * `/livez*`, `/readyz*`, `/metrics*`, `/docs*`.
 */
const API_PATH = /^\/(?:health|livez|readyz|metrics|docs)|(?:^|\/)v[0-9]+(?:\/|$)/;

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

/**
 * A Connect-style middleware. The middleware layer may trim `request.url` to the part below its
 * mount point; `originalUrl`, when set, is the URL as received.
 */
export type Middleware = (
  request: IncomingMessage & { readonly originalUrl?: string },
  response: ServerResponse,
  next: () => void,
) => void;

const isApiPath = (path: string): boolean => API_PATH.test(path);

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
    createReadStream(path)
      .on('error', () => response.destroy())
      .pipe(response);
  };
  return (request, response, next) => {
    const method = request.method ?? 'GET';
    const rawPath = (request.originalUrl ?? request.url ?? '/').split('?', 1)[0] ?? '/';
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
