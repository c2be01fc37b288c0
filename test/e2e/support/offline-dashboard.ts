/**
 * The built dashboard served to a browser with no coordinator anywhere: playwright answers the
 * page's requests for `index.html` and `/assets/*` from `apps/dashboard/dist` on an origin where
 * nothing listens, refuses everything else, and records what the page asked for that a coordinator
 * would have answered (`/v1/*`, WebSockets). An imported investigation must need none of it.
 */
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { DASHBOARD_DIST } from './demo-stack.js';

/** An origin nothing listens on (`.invalid` never resolves); only the routes below answer it. */
export const OFFLINE_ORIGIN = 'http://dashboard.invalid';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** What the page tried to reach beyond the static files. */
export interface OfflineDashboard {
  /** URLs of refused requests (anything but the built files), in order. */
  readonly refused: readonly string[];
  /** URLs of WebSockets the page opened. */
  readonly webSockets: readonly string[];
}

/**
 * Serves the built dashboard at {@link OFFLINE_ORIGIN} in `context` (SPA fallback: any page path
 * gets `index.html`) and refuses every other request.
 */
export async function serveDashboardOffline(context: BrowserContext): Promise<OfflineDashboard> {
  const refused: string[] = [];
  const webSockets: string[] = [];
  context.on('page', (page) => page.on('websocket', (socket) => webSockets.push(socket.url())));
  for (const page of context.pages()) page.on('websocket', (socket) => webSockets.push(socket.url()));
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== OFFLINE_ORIGIN || url.pathname.startsWith('/v1/')) {
      refused.push(url.href);
      await route.abort('connectionrefused');
      return;
    }
    const file = url.pathname.startsWith('/assets/')
      ? normalize(join(DASHBOARD_DIST, url.pathname))
      : join(DASHBOARD_DIST, 'index.html');
    if (!file.startsWith(DASHBOARD_DIST)) {
      await route.fulfill({ status: 404 });
      return;
    }
    try {
      await route.fulfill({
        status: 200,
        body: await readFile(file),
        contentType: CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      });
    } catch {
      await route.fulfill({ status: 404 });
    }
  });
  return { refused, webSockets };
}
