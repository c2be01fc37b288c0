/**
 * HTTP requests that ride only on a connection that answered moments ago: a connection idle for
 * {@link CONNECTION_REUSE_WINDOW_MILLIS} is closed, so the next request opens its own, while
 * requests sent back to back (a burst of refusal reports) share one. Through undici's `Agent`
 * (`keepAliveTimeout` and `keepAliveMaxTimeout`; undici is the `fetch` of Node itself).
 *
 * Why not Node's global `fetch`: it keeps idle connections for seconds. A connection that a
 * partition or a frozen peer left open but silent (no FIN, no RST) still looks idle and reusable,
 * so the next request is written into it and waits its whole timeout, however healthy the
 * coordinator behind the same URL is by then (a standby that took over behind a load balancer, a
 * healed network). A connection idle longer than the window is never reused, so a request after a
 * pause reaches whatever answers at the URL now, or fails at once; a connection that goes silent
 * within the window costs what a new connection to a silent peer would (one timeout), and the
 * request that timed out destroys it.
 *
 * Why not a new connection per request (this module's first form): a gate refusing a stale writer
 * in a loop reports each refusal in a request of its own, one after the other, and a handshake each
 * then cost the coordinator more CPU per report (about 1.3–1.8× in one measurement, loopback, no
 * TLS) and left a TIME_WAIT socket per report on the gate's host, about 400 a second: a minute of
 * that is near the ~28 000 ephemeral ports Linux gives one destination.
 */
import type { fetch as UndiciFetch } from 'undici';

/**
 * How long a connection may sit idle, its last reply received, and still carry the next request
 * (milliseconds). Far below any takeover or partition a caller recovers from, far above the gap
 * between two reports of one burst. Below 1 s, so undici times it with a native timer.
 */
export const CONNECTION_REUSE_WINDOW_MILLIS = 500;

type FetchOnRecentConnections = (url: string, init: RequestInit) => Promise<Response>;

/**
 * undici, loaded on the first such request (a gate's, never an agent's: the CLI and agents do not
 * pay for loading it), with its one agent, which closes a connection idle for the reuse window.
 */
let loaded: Promise<FetchOnRecentConnections> | undefined;
const load = (): Promise<FetchOnRecentConnections> =>
  (loaded ??= import('undici').then(({ Agent, fetch }) => {
    const briefKeepAlive = new Agent({
      keepAliveTimeout: CONNECTION_REUSE_WINDOW_MILLIS,
      // the server's `Keep-Alive: timeout=…` hint never lengthens it
      keepAliveMaxTimeout: CONNECTION_REUSE_WINDOW_MILLIS,
    });
    return (url, init) =>
      fetch(url, {
        ...(init as Parameters<typeof UndiciFetch>[1]),
        dispatcher: briefKeepAlive,
      }) as Promise<unknown> as Promise<Response>;
  }));

/**
 * `fetch` (same arguments, same `Response`) on a connection that answered within
 * {@link CONNECTION_REUSE_WINDOW_MILLIS}, or a new one. Used for the coordinator's `GET /v1/keys`
 * ({@link FenceTokenVerifier}) and a gate's reports ({@link FenceGateClient}).
 */
export const recentConnectionFetch: FetchOnRecentConnections = async (url, init) => (await load())(url, init);
