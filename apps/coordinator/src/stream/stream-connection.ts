/**
 * One client of the `/v1/stream` WebSocket: delivers every log event after the client's
 * position, then `caught-up`, then live events; carries the ticker's `stats` and `heartbeat`
 * frames; and bounds the memory a slow client can hold.
 *
 * Events come from the client's own catch-up subscription until its position is close enough to
 * the head for the shared {@link LiveFanout} to take it: from then on the fan-out's one read,
 * decode and serialization of each event serves every live client (the same `Buffer`). Either way
 * each event is sent once, in position order: the fan-out replays what it retains after the
 * client's position, and skips what the client already has.
 *
 * Backpressure, as EventStoreDB treats catch-up subscribers: until the client has joined the
 * live feed the pump is paced by the client (the next event is read from the log only once the
 * socket has flushed what is buffered), so a large history never piles up in memory, and a client
 * that paused while the log grew past its connect-time head is not cut. Once live, the pace is set by
 * writers: before every send the socket's `bufferedAmount` is checked, and a client above the
 * bound is sent `closing` (`slow-consumer`, with its last position) and disconnected. It
 * resumes with `after` = the last position it received: the log is the buffer, so no event is
 * lost or repeated.
 */
import type { Subscription } from '@lease-fence/coordinator-core';
import type { ClosingFrame, StreamFrame } from '@lease-fence/protocol';
import { closingFrameOfFailure } from './closing-frame.js';
import { encodeEventFrame } from './event-frame.js';
import type { LiveFanout, LiveMember } from './live-fanout.js';

/** The parts of a `ws` WebSocket the connection uses. */
export interface StreamSocket {
  /** Bytes queued in user space, not yet handed to the kernel. */
  readonly bufferedAmount: number;
  /** `WebSocket.OPEN` = 1. */
  readonly readyState: number;
  /** Sends `data` (JSON text, or its UTF-8 bytes) as one text frame. */
  send(data: string | Buffer, callback?: (error?: Error) => void): void;
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
  /**
   * The shared live subscription to join once close enough to its head; without it the client's
   * own subscription delivers everything (as before the fan-out).
   */
  readonly fanout?: LiveFanout;
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

/**
 * Delivers one client's frames. Create, then `run()`; `stop()` when the socket closes.
 * It is a {@link LiveMember} of the fan-out once it has joined.
 */
export class StreamConnection implements LiveMember {
  private position: number;
  private caughtUp = false;
  private stopped = false;
  private lastSentAtMillis: number;
  private subscription: Subscription | undefined;
  /** Settles when the connection stops (resolves) or the fan-out it joined fails (rejects). */
  private readonly left: Promise<void>;
  private settleLeft!: (error: unknown) => void;

  /**
   * @param socket - The client's socket.
   * @param subscribe - Opens a catch-up subscription after a position (the log's `subscribe`); closed by {@link stop}.
   * @param options - See {@link StreamConnectionOptions}.
   */
  constructor(
    private readonly socket: StreamSocket,
    private readonly subscribe: (after: number) => Subscription,
    private readonly options: StreamConnectionOptions,
  ) {
    this.position = options.after;
    this.lastSentAtMillis = options.now();
    this.left = new Promise<void>((resolve, reject) => {
      this.settleLeft = (error) =>
        error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error)));
    });
    this.left.catch(() => undefined); // observed by run(); a failure while run() is between awaits is not "unhandled"
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
   * Pumps events until the client leaves, is disconnected, or the events end. When they end
   * without the client leaving, the client is sent `closing` (reason `log-closed`; if its
   * subscription or the shared fan-out failed, `event-log-corrupt` naming the damaged record, or
   * `error`: see {@link closingFrameOfFailure}) and the socket is closed (1011), so it reconnects
   * from its position instead of waiting on a silent socket.
   * Rejects (after that `closing`) if the subscription failed (e.g. a corrupt event).
   */
  async run(): Promise<void> {
    if (this.options.head <= this.options.after) this.markCaughtUp();
    try {
      if (this.joinFanout() || (await this.catchUp())) await this.left;
      // The events ended without this client leaving (the log was closed): tell it to reconnect.
      this.disconnect('log-closed', CLOSE_GOING_AWAY);
    } catch (error) {
      // Tell the client now: once stopped, the connection sends nothing more.
      this.disconnectWith(closingFrameOfFailure(error, this.position), CLOSE_INTERNAL_ERROR);
      throw error;
    } finally {
      await this.stop();
    }
  }

  /**
   * Sends one frame unless the client is over the bound, in which case it is disconnected as a
   * slow consumer instead. Returns whether the frame was sent.
   */
  send(frame: StreamFrame): boolean {
    return this.write(JSON.stringify(frame), frame.type !== 'stats', undefined);
  }

  /**
   * The fan-out's delivery of the event frame at `position` (see {@link LiveMember.deliver}):
   * skipped if the client already has it, sent (bounded like {@link send}) if it is the next one.
   * @throws Error if `position` would leave a gap (the fan-out broke its ordering: a bug).
   */
  deliver(position: number, frame: Buffer): boolean {
    if (this.stopped) return false;
    if (position <= this.position) return true; // already sent by this client's own catch-up read
    if (position !== this.position + 1)
      throw new Error(`StreamConnection: fan-out delivered position ${position} after ${this.position} (bug)`);
    if (!this.write(frame, true, undefined)) return false;
    this.advanceTo(position);
    return true;
  }

  /** The fan-out stopped: end with its error, or quietly if it just ended (see {@link LiveMember.detach}). */
  detach(error: unknown): void {
    this.settleLeft(error);
  }

  /**
   * Sends `closing` with the client's resume position and closes the socket; destroys it if the
   * client does not complete the close handshake within `closeGraceMillis`.
   */
  disconnect(reason: string, code: number): void {
    this.disconnectWith({ type: 'closing', reason, position: this.position }, code);
  }

  /** {@link disconnect} with a prepared `closing` frame (one that says more than its reason). */
  private disconnectWith(closing: ClosingFrame, code: number): void {
    if (this.stopped) return;
    if (this.socket.readyState === OPEN) {
      this.socket.send(JSON.stringify(closing satisfies StreamFrame));
      this.socket.close(code, closing.reason);
      setTimeout(() => this.socket.terminate(), this.options.closeGraceMillis).unref();
    }
    void this.stop();
  }

  /** Stops delivering, leaves the fan-out and closes the own subscription. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.options.fanout?.leave(this);
    this.settleLeft(undefined);
    await this.subscription?.close();
  }

  /**
   * Reads the client's own subscription until the fan-out takes the client over (`true`), or the
   * client leaves or the subscription ends (`false`).
   */
  private async catchUp(): Promise<boolean> {
    const subscription = this.subscribe(this.position);
    this.subscription = subscription;
    try {
      for await (const recorded of subscription) {
        if (this.stopped) return false;
        const frame = encodeEventFrame(recorded);
        // Paced by the client until it has joined the live feed, not merely reached its connect-time
        // head: while it reads its own subscription the log is its buffer, so a client that paused
        // (a background tab) while the log grew catches up at its own pace. Only its own subscription
        // as the live feed (no fan-out) is pushed, bounded by maxBufferedBytes in write().
        const ownSubscriptionIsLive = this.caughtUp && this.options.fanout === undefined;
        const pace = !ownSubscriptionIsLive && this.socket.bufferedAmount > this.options.catchUpHighWaterBytes;
        const sent = pace ? await this.sendAndFlush(frame) : this.write(frame, true, undefined);
        if (!sent) return false;
        this.advanceTo(recorded.position);
        if (this.joinFanout()) return true;
      }
      return false;
    } finally {
      this.subscription = undefined;
      await subscription.close();
    }
  }

  /** Joins the fan-out if it can replay the gap within the catch-up high-water mark. */
  private joinFanout(): boolean {
    const fanout = this.options.fanout;
    if (fanout === undefined || this.stopped) return false;
    return fanout.join(this, this.options.catchUpHighWaterBytes - this.socket.bufferedAmount);
  }

  /** Like a write, and resolves once the frame (and so everything before it) has been handed to the kernel. */
  private sendAndFlush(data: string): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.write(data, true, () => resolve(true))) resolve(false);
    });
  }

  private write(data: string | Buffer, isActivity: boolean, onFlushed: (() => void) | undefined): boolean {
    if (this.stopped || this.socket.readyState !== OPEN) return false;
    if (this.socket.bufferedAmount > this.options.maxBufferedBytes) {
      this.disconnect('slow-consumer', CLOSE_TRY_AGAIN_LATER);
      this.options.onSlowConsumer(this.position);
      return false;
    }
    this.socket.send(data, onFlushed);
    if (isActivity) this.lastSentAtMillis = this.options.now();
    return true;
  }

  /** Records that the event at `position` was sent, and sends `caught-up` once the head of the log at connect time is reached. */
  private advanceTo(position: number): void {
    this.position = position;
    if (!this.caughtUp && position >= this.options.head) this.markCaughtUp();
  }

  private markCaughtUp(): void {
    this.caughtUp = true;
    this.send({ type: 'caught-up', position: this.position });
  }
}
