/**
 * The keepalive of the SDK's WebSocket links to the coordinator (the gate link, the agent link).
 * A coordinator frozen (SIGSTOP, a paused VM) or cut off by a partition keeps the TCP socket open
 * without a word: a link that waits for the socket to close waits forever, and never reaches the
 * standby that took over. The rule, in one place: a silent connection is dropped, and its owner's
 * next attempt opens a new one. Silent means the peer said nothing (no pong, no ping, no frame)
 * since the previous ping, sent every `pingIntervalMillis` while the link is open; or, for an
 * operation that timed out, nothing since that operation was sent ({@link LinkKeepalive.dropIfSilentSince}).
 */
import type WebSocket from 'ws';
import { MAX_TIMER_MILLIS, unrefTimers, type Timers } from './timers.js';

/**
 * The default ping interval of the SDK's links to the coordinator, in milliseconds: a coordinator
 * that went silent is dropped within twice this.
 */
export const LINK_PING_MILLIS = 5000;

/**
 * `pingIntervalMillis` of a link's options, or {@link LINK_PING_MILLIS} when absent.
 * @throws RangeError naming `api` and `pingIntervalMillis` unless it is an integer in [1, 2^31 - 1].
 */
export const checkPingIntervalMillis = (api: string, pingIntervalMillis: number | undefined): number => {
  const millis = pingIntervalMillis ?? LINK_PING_MILLIS;
  if (!Number.isInteger(millis) || millis < 1 || millis > MAX_TIMER_MILLIS)
    throw new RangeError(
      `${api}: pingIntervalMillis must be an integer number of milliseconds in [1, ${MAX_TIMER_MILLIS}], got ${String(millis)}`,
    );
  return millis;
};

/** Options of {@link keepLinkAlive}. */
export interface LinkKeepaliveOptions {
  /** How often the peer is pinged, in milliseconds (checked by {@link checkPingIntervalMillis}). */
  readonly pingIntervalMillis: number;
  /** How the pings wait. @defaultValue {@link unrefTimers} (an idle link's pings keep no process alive) */
  readonly timers?: Timers | undefined;
}

/** The keepalive of one open connection; see {@link keepLinkAlive}. */
export interface LinkKeepalive {
  /** A mark of what the peer has said so far, for {@link LinkKeepalive.dropIfSilentSince}. */
  mark(): number;
  /**
   * Terminates the connection if its peer said nothing since `mark` was taken (an operation sent
   * then timed out on a silent connection), so the next attempt opens a new one.
   * @returns whether it terminated the connection.
   */
  dropIfSilentSince(mark: number): boolean;
  /** Stops the pings (also done when the socket closes). Idempotent. */
  stop(): void;
}

/**
 * Watches `socket`, which must be open: pings it every `pingIntervalMillis` and terminates it when
 * its peer said nothing since the previous ping (the socket's `'close'` follows, and its owner
 * reconnects as after any drop). Stops when the socket closes or {@link LinkKeepalive.stop} is called.
 */
export function keepLinkAlive(socket: WebSocket, options: LinkKeepaliveOptions): LinkKeepalive {
  const timers = options.timers ?? unrefTimers;
  /** How many times the peer was heard from (pong, ping or frame). */
  let heard = 0;
  const hear = (): void => void (heard += 1);
  const stopped = new AbortController();
  const stop = (): void => {
    if (stopped.signal.aborted) return;
    stopped.abort();
    socket.off('pong', hear).off('ping', hear).off('message', hear).off('close', stop);
  };
  socket.on('pong', hear).on('ping', hear).on('message', hear).once('close', stop);
  const dropIfSilentSince = (mark: number): boolean => {
    if (heard !== mark) return false;
    stop();
    socket.terminate();
    return true;
  };
  const pingEveryInterval = async (): Promise<void> => {
    let sincePing = -1; // nothing pinged yet: the first tick pings
    for (;;) {
      await timers.sleep(options.pingIntervalMillis, stopped.signal);
      if (dropIfSilentSince(sincePing)) return;
      sincePing = heard;
      socket.ping();
    }
  };
  pingEveryInterval().catch(() => undefined); // rejects with the abort once stopped
  return { mark: () => heard, dropIfSilentSince, stop };
}

/**
 * Closes `socket` with `code` and `reason` (terminating it at once while it is still connecting) and
 * resolves once it is closed. A peer that has not completed the close handshake within `graceMillis`
 * (milliseconds) is terminated: a silent one never will, and `ws` would wait 30 s for it, so a
 * client's `close()` after a partition took that long. The same rule as the keepalive's: a silent
 * connection is dropped.
 */
export function closeLink(socket: WebSocket, code: number, reason: string, graceMillis: number): Promise<void> {
  if (socket.readyState === socket.CLOSED) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => socket.terminate(), graceMillis);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    if (socket.readyState === socket.CONNECTING) socket.terminate();
    else if (socket.readyState === socket.OPEN) socket.close(code, reason);
  });
}
