/**
 * WebSocket-level keepalive for the `/v1/stream` clients, the standard `ws` way: every
 * interval, each open client that answered the previous ping (with a pong) is pinged again, and
 * one that did not is terminated. A peer that vanished without a FIN (a laptop that slept, a NAT
 * that dropped its mapping) is thus noticed within two intervals, instead of when its send buffer
 * outgrows the slow-consumer bound or TCP gives up, and its subscription is closed. Browsers
 * answer pings on their own; stream frames (`heartbeat`, `stats`) do not count as answers, as the
 * client never sends any.
 */

/** WebSocket `readyState` OPEN. */
const OPEN = 1;

/** The parts of a `ws` WebSocket the keepalive uses. */
export interface PingableSocket {
  /** `WebSocket.OPEN` = 1; only open sockets are pinged (a closing one is left to its close handshake). */
  readonly readyState: number;
  /** Sends a ping control frame. */
  ping(): void;
  /** Destroys the socket without a close handshake (the peer is presumed gone). */
  terminate(): void;
  on(event: 'pong', listener: () => void): unknown;
  off(event: 'pong', listener: () => void): unknown;
}

/** Options of {@link PingKeepalive}. */
export interface PingKeepaliveOptions {
  /**
   * Interval between pings (milliseconds, the event loop's timers); a client has until the next
   * ping to answer. A positive integer ≤ 2^31 - 1 (the largest `setInterval` delay).
   */
  readonly pingIntervalMillis: number;
}

/** Largest delay `setInterval` honours (milliseconds). */
const MAX_TIMER_MILLIS = 2 ** 31 - 1;

/**
 * Pings the sockets it watches every `pingIntervalMillis` and terminates those that have not
 * answered the previous ping. `start()`, `watch()` each client when it is accepted, call the
 * returned function when it closes, `stop()` at shutdown.
 */
export class PingKeepalive {
  /** Watched sockets: whether a pong arrived since the last ping (true when just watched), and the pong listener. */
  private readonly watched = new Map<
    PingableSocket,
    {
      answered: boolean;
      readonly onPong: () => void;
      readonly onUnresponsive: () => void;
      readonly readingPaused: (() => boolean) | undefined;
    }
  >();
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param options - See {@link PingKeepaliveOptions}.
   * @throws RangeError when `options.pingIntervalMillis` is not an integer in [1, 2^31 - 1].
   */
  constructor(private readonly options: PingKeepaliveOptions) {
    const millis = options.pingIntervalMillis;
    if (!Number.isInteger(millis) || millis < 1 || millis > MAX_TIMER_MILLIS) {
      throw new RangeError(
        `PingKeepalive: options.pingIntervalMillis must be an integer number of milliseconds in [1, ${MAX_TIMER_MILLIS}], got ${String(millis)}`,
      );
    }
  }

  /** Number of sockets watched. */
  get size(): number {
    return this.watched.size;
  }

  /** Starts pinging (an unref'd interval: it never keeps the process alive). Idempotent. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sweep(), this.options.pingIntervalMillis);
    this.timer.unref();
  }

  /** Stops pinging; watched sockets stay as they are. Idempotent. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Watches `socket` from now on. It counts as having answered until it is first pinged, so it
   * has at least one full interval to answer. Watching a watched socket again changes nothing.
   * @param socket - The client's WebSocket.
   * @param onUnresponsive - Called once if the client is terminated for not answering, just before `terminate()`.
   * @param readingPaused - Whether this side has stopped reading the socket (backpressure): a pong
   *   cannot be heard then, so a missed one is no evidence the peer is gone. While it says true the
   *   socket is neither pinged nor terminated; once reading resumes it is pinged and has a full
   *   interval to answer. Whoever pauses must bound the pause (the agent link resumes when its
   *   operations complete, and closes a slow reader after its own timeout). @defaultValue never paused
   * @returns A function that stops watching it (call it when the socket closes). Idempotent.
   */
  watch(socket: PingableSocket, onUnresponsive: () => void, readingPaused?: () => boolean): () => void {
    if (!this.watched.has(socket)) {
      const entry = {
        answered: true,
        onPong: () => {
          entry.answered = true;
        },
        onUnresponsive,
        readingPaused,
      };
      this.watched.set(socket, entry);
      socket.on('pong', entry.onPong);
    }
    return () => this.unwatch(socket);
  }

  /** One interval's pass: terminate the open sockets that did not answer, ping the others. */
  private sweep(): void {
    for (const [socket, entry] of [...this.watched]) {
      if (socket.readyState !== OPEN) continue;
      if (entry.readingPaused?.() === true) {
        entry.answered = true;
        continue;
      }
      if (!entry.answered) {
        this.unwatch(socket);
        entry.onUnresponsive();
        socket.terminate();
        continue;
      }
      entry.answered = false;
      socket.ping();
    }
  }

  private unwatch(socket: PingableSocket): void {
    const entry = this.watched.get(socket);
    if (entry === undefined) return;
    socket.off('pong', entry.onPong);
    this.watched.delete(socket);
  }
}
