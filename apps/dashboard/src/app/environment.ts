/**
 * Everything the app touches outside itself, passed in so tests and server rendering can run it
 * without a browser: the page's origin and URL, storage, fetch, WebSocket, clocks, downloads.
 */
import type { FetchLike } from '../stream/http-client.js';
import type { SocketLike, TimerLike } from '../stream/stream-client.js';
import type { StorageLike } from '../stream/viewer-token.js';

/** The app's view of the browser. */
export interface DashboardEnvironment {
  /** Origin of the coordinator that serves the dashboard, e.g. `http://127.0.0.1:3000`. */
  readonly origin: string;
  /** `location.search` at start. */
  readonly initialSearch: string;
  /** `sessionStorage`. */
  readonly storage: StorageLike;
  readonly fetch: FetchLike;
  /** `(url) => new WebSocket(url)`. */
  readonly connect: (url: string) => SocketLike;
  readonly timers: TimerLike;
  /** This browser's wall clock, epoch milliseconds. */
  readonly now: () => number;
  /**
   * Runs a store notification soon. The browser batches into an animation frame at most ~6 times a
   * second: the lanes canvas redraws every frame on its own, so React panels need not.
   */
  readonly schedule: (callback: () => void) => void;
  /** Writes the query string: `push` makes a new history entry (back/forward), `replace` does not. */
  readonly setSearch: (search: string, mode: 'push' | 'replace') => void;
  /** Calls back with `location.search` on back/forward; returns the unsubscribe function. */
  readonly onPopState: (listener: (search: string) => void) => () => void;
  /** Saves a file. */
  readonly download: (filename: string, text: string, mimeType: string) => void;
  /** Where `__leaseFence` (the debug hook for browser tests) is installed; undefined for none. */
  readonly debugTarget: Record<string, unknown> | undefined;
}

/** The real browser. */
export function browserEnvironment(): DashboardEnvironment {
  return {
    origin: window.location.origin,
    initialSearch: window.location.search,
    storage: window.sessionStorage,
    fetch: (url, init) => window.fetch(url, init),
    // The client's handlers accept any event object, so the browser socket fits SocketLike.
    connect: (url) => new WebSocket(url) as unknown as SocketLike,
    timers: {
      setTimeout: (cb, ms) => window.setTimeout(cb, ms),
      clearTimeout: (h) => window.clearTimeout(h as number),
    },
    now: () => Date.now(),
    schedule: (cb) => void window.setTimeout(() => window.requestAnimationFrame(() => cb()), 150),
    setSearch: (search, mode) => {
      const url = `${window.location.pathname}${search}${window.location.hash}`;
      if (mode === 'push') window.history.pushState(null, '', url);
      else window.history.replaceState(null, '', url);
    },
    onPopState: (listener) => {
      const handler = (): void => listener(window.location.search);
      window.addEventListener('popstate', handler);
      return () => window.removeEventListener('popstate', handler);
    },
    download: (filename, text, mimeType) => {
      const url = URL.createObjectURL(new Blob([text], { type: mimeType }));
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1_000);
    },
    debugTarget: window as unknown as Record<string, unknown>,
  };
}
