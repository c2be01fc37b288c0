/**
 * One client of the `/v1/stream` WebSocket: delivers every log event after the client's
 * position from a catch-up subscription, then `caught-up`, then live events; carries the
 * ticker's `stats` and `heartbeat` frames; and bounds the memory a slow client can hold.
 *
 * Backpressure, as EventStoreDB treats catch-up subscribers: while catching up the pump is
 * paced by the client (the next event is read from the log only once the socket has flushed
 * what is buffered), so a large history never piles up in memory. Once live, the pace is set by
 * writers: before every send the socket's `bufferedAmount` is checked, and a client above the
 * bound is sent `closing` (`slow-consumer`, with its last position) and disconnected. It
 * resumes with `after` = the last position it received: the log is the buffer, so no event is
 * lost or repeated.
 */
import type { Subscription } from '@lease-fence/coordinator-core';
import type { StreamFrame } from '@lease-fence/protocol';

/** The parts of a `ws` WebSocket the connection uses. */
export interface StreamSocket {
  /** Bytes queued in user space, not yet handed to the kernel. */
  readonly bufferedAmount: number;
  /** `WebSocket.OPEN` = 1. */
  readonly readyState: number;
  send(data: string, callback?: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

/** Options of {@link StreamConnection}. */
export interface StreamConnectionOptions {
  /** The client's position: events after it are delivered. */
  readonly after: number;
  /** The log's version when the client connected: `caught-up` is sent once it has been delivered. */
  readonly head: number;
  /** Bound on `bufferedAmount` (bytes) above which the client is a slow consumer. */
  readonly maxBufferedBytes: number;
  /** During catch-up, wait for the socket to flush once `bufferedAmount` exceeds this (bytes). */
  readonly catchUpHighWaterBytes: number;
  /** How long after `closing` an unresponsive client's socket is destroyed (milliseconds). */
  readonly closeGraceMillis: number;
  /** Monotonic milliseconds (for heartbeat spacing only). */
  readonly now: () => number;
  /** Called once if this client is disconnected as a slow consumer. */
  readonly onSlowConsumer: (position: number) => void;
}

const OPEN = 1;
/** WebSocket close code 1013 "Try Again Later": the client should reconnect and resume. */
export const CLOSE_TRY_AGAIN_LATER = 1013;
/** WebSocket close code 1001 "Going Away": the server is shutting down. */
export const CLOSE_GOING_AWAY = 1001;
/** WebSocket close code 1008 "Policy Violation". */
export const CLOSE_POLICY_VIOLATION = 1008;
/** WebSocket close code 1011 "Internal Error". */
export const CLOSE_INTERNAL_ERROR = 1011;

/** Delivers one client's frames. Create, then `run()`; `stop()` when the socket closes. */
export class StreamConnection {
  private position: number;
  private caughtUp = false;
  private stopped = false;
  private lastSentAtMillis: number;

  /**
   * @param socket - The client's socket.
   * @param subscription - A catch-up subscription after `options.after`; closed by {@link stop}.
   * @param options - See {@link StreamConnectionOptions}.
   */
  constructor(
    private readonly socket: StreamSocket,
    private readonly subscription: Subscription,
    private readonly options: StreamConnectionOptions,
  ) {
    this.position = options.after;
    this.lastSentAtMillis = options.now();
  }

  /** The last position sent to the client (its resume point). */
  get lastPosition(): number {
    return this.position;
  }

  /** Whether `caught-up` has been sent. */
  get isLive(): boolean {
    return this.caughtUp;
  }

  /** Milliseconds since the last frame other than `stats` was sent (heartbeats fill such silences). */
  idleMillis(): number {
    return this.options.now() - this.lastSentAtMillis;
  }

  /**
   * Pumps events until the client leaves, is disconnected, or the subscription ends.
   * Rejects only if the subscription fails (e.g. a corrupt event); the caller closes the socket.
   */
  async run(): Promise<void> {
    if (this.options.head <= this.options.after) this.markCaughtUp();
    try {
      for await (const recorded of this.subscription) {
        if (this.stopped) break;
        const frame: StreamFrame = { type: 'event', position: recorded.position, recordedAtMillis: recorded.recordedAtMillis, event: recorded.event };
        // Catching up: paced by the client. Live: pushed, and bounded by maxBufferedBytes in send().
        const pace = !this.caughtUp && this.socket.bufferedAmount > this.options.catchUpHighWaterBytes;
        const sent = pace ? await this.sendAndFlush(frame) : this.send(frame);
        if (!sent) break;
        this.position = recorded.position;
        if (!this.caughtUp && recorded.position >= this.options.head) this.markCaughtUp();
      }
    } finally {
      await this.stop();
    }
  }

  /**
   * Sends one frame unless the client is over the bound, in which case it is disconnected as a
   * slow consumer instead. Returns whether the frame was sent.
   */
  send(frame: StreamFrame): boolean {
    return this.write(frame, undefined);
  }

  /** Like {@link send}, and resolves once the frame (and so everything before it) has been handed to the kernel. */
  private sendAndFlush(frame: StreamFrame): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.write(frame, () => resolve(true))) resolve(false);
    });
  }

  private write(frame: StreamFrame, onFlushed: (() => void) | undefined): boolean {
    if (this.stopped || this.socket.readyState !== OPEN) return false;
    if (this.socket.bufferedAmount > this.options.maxBufferedBytes) {
      this.disconnect('slow-consumer', CLOSE_TRY_AGAIN_LATER);
      this.options.onSlowConsumer(this.position);
      return false;
    }
    this.socket.send(JSON.stringify(frame), onFlushed);
    if (frame.type !== 'stats') this.lastSentAtMillis = this.options.now();
    return true;
  }

  /**
   * Sends `closing` with the client's resume position and closes the socket; destroys it if the
   * client does not complete the close handshake within `closeGraceMillis`.
   */
  disconnect(reason: string, code: number): void {
    if (this.stopped) return;
    if (this.socket.readyState === OPEN) {
      this.socket.send(JSON.stringify({ type: 'closing', reason, position: this.position } satisfies StreamFrame));
      this.socket.close(code, reason);
      setTimeout(() => this.socket.terminate(), this.options.closeGraceMillis).unref();
    }
    void this.stop();
  }

  /** Stops delivering and closes the subscription. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.subscription.close();
  }

  private markCaughtUp(): void {
    this.caughtUp = true;
    this.send({ type: 'caught-up', position: this.position });
  }
}
