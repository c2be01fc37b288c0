/**
 * HTTP requests that never ride on a pooled keep-alive connection: each one opens its own
 * connection and closes it after the reply, through undici's `Agent` with `pipelining: 0` (its
 * documented way to turn keep-alive off; undici is the `fetch` of Node itself).
 *
 * Why: Node's global `fetch` reuses idle connections. A connection that a partition or a frozen
 * peer left open but silent (no FIN, no RST) still looks idle and reusable, so the next request is
 * written into it and waits its whole timeout, however healthy the coordinator behind the same URL
 * is by then (a standby that took over behind a load balancer, a healed network). A fresh
 * connection reaches whatever answers at the URL now, or fails at once. The cost, a TCP (and TLS)
 * handshake per request, is paid only by rare or background requests: the resource side's key
 * fetches and reports, never an agent's lease operations.
 */
import type { fetch as UndiciFetch } from 'undici';

type FetchOnFreshConnections = (url: string, init: RequestInit) => Promise<Response>;

/**
 * undici, loaded on the first fresh-connection request (a gate's, never an agent's: the CLI and
 * agents do not pay for loading it), with its one agent of fresh-connection requests: keep-alive
 * off, so it never holds an idle connection.
 */
let loaded: Promise<FetchOnFreshConnections> | undefined;
const load = (): Promise<FetchOnFreshConnections> =>
  (loaded ??= import('undici').then(({ Agent, fetch }) => {
    const noKeepAlive = new Agent({ pipelining: 0 });
    return (url, init) =>
      fetch(url, {
        ...(init as Parameters<typeof UndiciFetch>[1]),
        dispatcher: noKeepAlive,
      }) as Promise<unknown> as Promise<Response>;
  }));

/**
 * `fetch` (same arguments, same `Response`) on a new connection that is closed after the reply.
 * Used for the coordinator's `GET /v1/keys` ({@link FenceTokenVerifier}) and a gate's reports
 * ({@link FenceGateClient}).
 */
export const freshConnectionFetch: FetchOnFreshConnections = async (url, init) => (await load())(url, init);
