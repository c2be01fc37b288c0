/**
 * The lifecycle the long-lived link gateways share, the agent link
 * (`agent-link/agent-link.gateway.ts`) and the gate link (`gate-link/gate-link.gateway.ts`):
 * pings from bootstrap on ({@link PingKeepalive}, an unresponsive peer is terminated), and at
 * shutdown the pings stopped and every link closed (going away) within a grace.
 */
import type { WebSocket } from 'ws';
import { CLOSE_GOING_AWAY } from '../stream/stream-connection.js';
import { PingKeepalive } from '../stream/ping-keepalive.js';

/** How long a peer has to complete the close handshake at shutdown before its link is terminated, unless told otherwise (milliseconds). */
export const LINK_CLOSE_GRACE_MILLIS = 5_000;

/** Options of {@link LinkLifecycle}. */
export interface LinkLifecycleOptions {
  /** How often each link is pinged; a link that missed the previous pong is terminated (milliseconds). */
  readonly pingIntervalMillis: number;
  /** How long a peer has to complete the close handshake at shutdown before it is terminated (milliseconds; default {@link LINK_CLOSE_GRACE_MILLIS}). */
  readonly closeGraceMillis?: number;
}

/** Pings a gateway's links and closes them at shutdown; one per link gateway. */
export class LinkLifecycle {
  readonly #keepalive: PingKeepalive;
  readonly #closeGraceMillis: number;

  /** @throws RangeError naming `pingIntervalMillis` when it is not an integer in [1, 2^31 - 1] ({@link PingKeepalive}). */
  constructor(options: LinkLifecycleOptions) {
    this.#keepalive = new PingKeepalive({ pingIntervalMillis: options.pingIntervalMillis });
    this.#closeGraceMillis = options.closeGraceMillis ?? LINK_CLOSE_GRACE_MILLIS;
  }

  /** Starts the pings (the gateway's `onApplicationBootstrap`). */
  start(): void {
    this.#keepalive.start();
  }

  /**
   * Pings `client` until it closes; `onUnresponsive` is called when it is terminated for a missed
   * pong. While `readingPaused` says true the link is not judged (see {@link PingKeepalive.watch}).
   * @returns the function to call when the link closes.
   */
  watch(client: WebSocket, onUnresponsive: () => void, readingPaused?: () => boolean): () => void {
    return this.#keepalive.watch(client, onUnresponsive, readingPaused);
  }

  /**
   * Stops the pings and closes every one of `clients` (going away), resolving once all are
   * closed: a peer that has not completed the handshake after the grace is terminated (the
   * gateway's `beforeApplicationShutdown`; new upgrades are refused by `websocket-upgrades.ts`).
   */
  async shutdown(clients: Iterable<WebSocket>): Promise<void> {
    this.#keepalive.stop();
    await Promise.all([...clients].map((client) => closeWithin(client, this.#closeGraceMillis)));
  }
}

/** Closes `client` (going away) and resolves once it is closed; terminated if the peer has not completed the handshake after `graceMillis`. */
function closeWithin(client: WebSocket, graceMillis: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => client.terminate(), graceMillis);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    client.close(CLOSE_GOING_AWAY, 'shutting down');
  });
}
