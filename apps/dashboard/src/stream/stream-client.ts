/**
 * The dashboard's client of the coordinator's catch-up subscription (`/v1/stream?after=N&batch=1`):
 * every log event after N in order, one `caught-up`, then live events, heartbeats and stats; the
 * frames the coordinator sends in one turn arrive as one `batch` message, handled frame by frame.
 *
 * Guarantees to its `onEvent` callback: positions N+1, N+2, … each exactly once, in order — across
 * reconnects (it resumes after the last position it delivered), duplicate frames (dropped) and
 * gaps (it reconnects from its last position). Holding (pause) only remembers a position: later
 * event frames are counted, not kept, so memory stays bounded; releasing reconnects from that
 * position, so nothing is lost and nothing is delivered twice.
 *
 * @see docs/design.md § "The event-sourced coordinator" (catch-up subscription)
 */
import type { ClosingFrame, RecordedEvent, StreamFrame } from '@lease-fence/protocol';
import { backoffDelayMillis, createRetryPolicy, type RetryPolicy } from '@lease-fence/client/retry-policy';
import { parseStreamMessage } from './parse-frame.js';

/** The part of the browser's `WebSocket` the client uses. */
export interface SocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}

/** Timers, injected so tests drive time explicitly. */
export interface TimerLike {
  setTimeout(callback: () => void, delayMillis: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Where the stream stands, always shown to the operator:
 * - `connecting`: opening a socket to read events after `after`;
 * - `catching-up`: open, reading the log up to its head;
 * - `live`: caught up; new events arrive as they are appended ({@link StreamClient.position} is the latest);
 * - `reconnecting`: the socket closed (`reason`); the next attempt is in `retryInMillis`;
 * - `unauthorized`: the server refused the viewer token after the upgrade (close code 4401 or 4403); no retry.
 *   (The coordinator refuses a bad token with HTTP 401 *before* the upgrade, which a browser only sees as a
 *   failed connection: check the token over HTTP, see `fetchEventsPage`.)
 * - `log-damaged`: the coordinator closed the stream on a record of its log that does not decode
 *   (`closing` with `event-log-corrupt`): it serves nothing past `after`, the last good position,
 *   until the record is repaired. Retried with the growing back-off, since each attempt meets the
 *   same record; while it retries, `connecting` / `catching-up` carry the same `damage`.
 * - `diverged`: the coordinator's log ends before `position` (`closing` with `after-beyond-head`, or a
 *   `caught-up` below it), or its event at `differsAt` is not the one delivered there (a reconnect asks
 *   for the last delivered event again to check): it was reset or replaced, so resuming cannot work; no retry;
 * - `closed`: {@link StreamClient.close} was called.
 */
export type ConnectionState =
  | {
      readonly status: 'connecting';
      readonly after: number;
      readonly attempt: number;
      readonly damage?: LogDamage;
    }
  | { readonly status: 'catching-up'; readonly after: number; readonly damage?: LogDamage }
  | { readonly status: 'live' }
  | {
      readonly status: 'reconnecting';
      readonly after: number;
      readonly attempt: number;
      readonly retryInMillis: number;
      readonly reason: string;
    }
  | {
      readonly status: 'log-damaged';
      readonly after: number;
      readonly attempt: number;
      readonly retryInMillis: number;
      readonly damage: LogDamage;
    }
  | { readonly status: 'unauthorized'; readonly reason: string }
  | {
      readonly status: 'diverged';
      readonly position: number;
      readonly headPosition: number;
      /** The position whose event is not the one this client delivered there, when that is how it diverged. */
      readonly differsAt?: number;
    }
  | { readonly status: 'closed' };

/**
 * A damaged record the coordinator stopped at, from its `closing` frame (`event-log-corrupt`):
 * `position` of the record when known, the `field` that does not decode when known, and the
 * coordinator's sentence (the one `GET /v1/events` answers with).
 */
export interface LogDamage {
  readonly position: number | undefined;
  readonly field: string | undefined;
  readonly message: string;
}

/** The damage a state reports (`log-damaged`, or an attempt made while it stands), else undefined. */
export function logDamageOf(state: ConnectionState): LogDamage | undefined {
  return 'damage' in state ? state.damage : undefined;
}

/** Close codes that mean the token was refused after the upgrade: retrying cannot help. */
export const UNAUTHORIZED_CLOSE_CODES: ReadonlySet<number> = new Set([4401, 4403]);

/** Options of {@link StreamClient}. Durations in milliseconds. */
export interface StreamClientOptions {
  /** The socket URL that streams every event after `after` (see {@link streamUrl}). */
  readonly url: (after: number) => string;
  /** Opens a socket (the browser: `(url) => new WebSocket(url)`). May throw; that counts as a failed attempt. */
  readonly connect: (url: string) => SocketLike;
  readonly timers: TimerLike;
  /** Deliver events after this position. Integer ≥ 0. @defaultValue 0 */
  readonly after?: number;
  /**
   * Upper bound of the first reconnect delay, milliseconds; the bound doubles per failed attempt.
   * Each delay is drawn uniformly below its bound ("full jitter", as in the AWS Architecture Blog's
   * "Exponential Backoff And Jitter"), so dashboards dropped together by one coordinator restart
   * reconnect spread out, not in lockstep. @defaultValue 250
   */
  readonly initialBackoffMillis?: number;
  /** Cap of the reconnect delay's bound, milliseconds: no delay reaches it. @defaultValue 10_000 */
  readonly maxBackoffMillis?: number;
  /** Uniform numbers in [0, 1) for the jitter (inject a seeded source in tests). @defaultValue Math.random */
  readonly random?: () => number;
  /** Reconnect when no frame arrived for this long (the server heartbeats). @defaultValue 30_000 */
  readonly staleAfterMillis?: number;
  /**
   * The clock that times `staleAfterMillis` (milliseconds; only differences are used): a frame only
   * stamps it, and the stale timer, when it fires, waits out the rest. @defaultValue Date.now
   */
  readonly now?: () => number;
  /** Each event, exactly once, in position order. */
  readonly onEvent: (recorded: RecordedEvent) => void;
  /**
   * The head of the log as the socket revealed it grew beyond what was delivered: an event frame
   * dropped while holding (pause, time travel). Heartbeats only reach idle clients, so a held client
   * on a busy log learns the head from these. @defaultValue none
   */
  readonly onHead?: (position: number) => void;
  /** Every other valid frame (`caught-up`, `heartbeat`, `stats`, `closing`). */
  readonly onFrame?: (frame: Exclude<StreamFrame, { type: 'event' }>) => void;
  readonly onState?: (state: ConnectionState) => void;
  /** Frames that failed the schema, gaps: reported, then handled (skipped or reconnected). */
  readonly onProblem?: (message: string) => void;
}

/**
 * A resumable catch-up subscription. Call {@link StreamClient.start} once; {@link StreamClient.close} to stop.
 */
export class StreamClient {
  readonly #options: StreamClientOptions;
  readonly #backoff: RetryPolicy;
  readonly #staleAfterMillis: number;
  #socket: SocketLike | undefined;
  #state: ConnectionState;
  #position: number;
  /** The event delivered at {@link StreamClient.position}: each reconnect asks for it again to check the log is the same. */
  #last: RecordedEvent | undefined;
  /** True from a reconnect until its socket resent {@link StreamClient.position}'s event. */
  #verifying = false;
  #head: number;
  #target: number | undefined;
  #dropped = false;
  #failures = 0;
  #attempt = 0;
  #retryTimer: unknown;
  #staleTimer: unknown;
  /** `now()` at the last frame (or at open): what the stale timer measures from. */
  #lastFrameAtMillis = 0;
  #duplicates = 0;
  #closed = false;
  /** The damaged record the coordinator last stopped at; cleared once a connection delivers again. */
  #damage: LogDamage | undefined;

  /**
   * @throws RangeError if `after` is not a non-negative integer, a duration is not positive, or
   *   `maxBackoffMillis` is below `initialBackoffMillis`.
   */
  constructor(options: StreamClientOptions) {
    const after = options.after ?? 0;
    if (!Number.isSafeInteger(after) || after < 0)
      throw new RangeError(`StreamClient: after must be a non-negative integer (log position), got ${String(after)}`);
    // The SDK's retry policy: one copy of the full-jitter backoff for every reconnecting client.
    this.#backoff = createRetryPolicy('StreamClient', {
      initialDelayMillis: positive('initialBackoffMillis', options.initialBackoffMillis ?? 250),
      maxDelayMillis: positive('maxBackoffMillis', options.maxBackoffMillis ?? 10_000),
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    this.#staleAfterMillis = positive('staleAfterMillis', options.staleAfterMillis ?? 30_000);
    this.#options = options;
    this.#position = after;
    this.#head = after;
    this.#state = { status: 'connecting', after, attempt: 0 };
  }

  /** Position of the last event delivered to `onEvent` (the resume point). */
  get position(): number {
    return this.#position;
  }

  /** Highest log position the server has mentioned (events, `caught-up`, heartbeats). */
  get headPosition(): number {
    return this.#head;
  }

  /** The position events are held at, or undefined when following live. */
  get heldAt(): number | undefined {
    return this.#target;
  }

  /** Events the server has beyond the hold position (0 when not holding). */
  get newSinceHold(): number {
    return this.#target === undefined ? 0 : Math.max(0, this.#head - this.#target);
  }

  /** Duplicate event frames dropped so far (a resent catch-up overlapping what was delivered). */
  get duplicatesDropped(): number {
    return this.#duplicates;
  }

  /** Where the stream stands (see {@link ConnectionState}). */
  get state(): ConnectionState {
    return this.#state;
  }

  /** Opens the first socket. */
  start(): void {
    if (this.#socket !== undefined || this.#closed) return;
    this.#open();
  }

  /**
   * Stops delivering events after `target` (pause, or time travel that needs no more): later event
   * frames are counted in {@link StreamClient.newSinceHold}, not kept.
   *
   * Raising the target above what was dropped reconnects from {@link StreamClient.position}.
   * @throws RangeError if `target` is not a non-negative integer.
   */
  holdAt(target: number): void {
    if (!Number.isSafeInteger(target) || target < 0)
      throw new RangeError(
        `StreamClient.holdAt: target must be a non-negative integer (log position), got ${String(target)}`,
      );
    this.#target = target;
    if (this.#dropped && target > this.#position) this.#resume();
  }

  /** Pause: hold at the last delivered position. */
  hold(): void {
    this.holdAt(this.#position);
  }

  /** Resume live: deliver everything after {@link StreamClient.position}, with no gap and no duplicate. */
  release(): void {
    this.#target = undefined;
    if (this.#dropped) this.#resume();
  }

  /** Closes the socket and stops reconnecting. */
  close(): void {
    this.#closed = true;
    this.#clearTimers();
    this.#detach();
    this.#setState({ status: 'closed' });
  }

  #resume(): void {
    this.#dropped = false;
    this.#failures = 0;
    this.#clearTimers();
    this.#detach();
    this.#open();
  }

  #open(): void {
    if (this.#closed) return;
    this.#attempt += 1;
    const after = this.#position;
    this.#setState({ status: 'connecting', after, attempt: this.#attempt, ...this.#damageField() });
    // With an event delivered, ask for it again: a log reset or replaced behind the same URL, grown
    // past this position, would otherwise be resumed as if it were the same log.
    this.#verifying = this.#last !== undefined;
    let socket: SocketLike;
    try {
      socket = this.#options.connect(this.#options.url(this.#verifying ? after - 1 : after));
    } catch (error) {
      this.#scheduleReconnect(`could not open the socket: ${(error as Error).message}`);
      return;
    }
    this.#socket = socket;
    // The back-off resets only when a connection delivers (an event, or caught-up), not on open:
    // a coordinator that accepts and then closes on an error before sending anything new would
    // otherwise be retried at the first delay forever.
    socket.onopen = () => {
      this.#setState({ status: 'catching-up', after: this.#position, ...this.#damageField() });
      this.#armStaleTimer();
    };
    socket.onmessage = (message) => this.#onMessage(socket, message.data);
    socket.onerror = () => undefined;
    socket.onclose = (event) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      if (UNAUTHORIZED_CLOSE_CODES.has(event.code)) {
        this.#clearTimers();
        this.#setState({ status: 'unauthorized', reason: event.reason || `closed with code ${event.code}` });
        return;
      }
      this.#scheduleReconnect(event.reason || `connection closed (code ${event.code})`);
    };
  }

  #onMessage(socket: SocketLike, data: unknown): void {
    // Stamped, not re-armed: clearing and setting a timer per frame cost 3 % of the page's main
    // thread at 2 000 events/s; the timer checks the stamp when it fires.
    this.#lastFrameAtMillis = this.#now();
    const parsed = parseStreamMessage(data);
    if (!parsed.ok) {
      this.#options.onProblem?.(parsed.message);
      return;
    }
    // A frame of a batch may end this socket (a gap, `closing`): the rest of the batch is its too.
    for (const frame of parsed.frames) {
      if (this.#socket !== socket) return;
      this.#onFrame(frame);
    }
  }

  #onFrame(frame: StreamFrame): void {
    switch (frame.type) {
      case 'event': {
        this.#head = Math.max(this.#head, frame.position);
        if (this.#verifying && frame.position === this.#position) {
          this.#verifying = false;
          if (!sameRecordedEvent(frame, this.#last)) this.#diverge(this.#head, frame.position);
          return;
        }
        if (frame.position <= this.#position) {
          this.#duplicates += 1;
          return;
        }
        // A socket that did not resend the last delivered event leaves nothing to check it against.
        this.#verifying = false;
        if (this.#target !== undefined && frame.position > this.#target) {
          this.#dropped = true; // counted in newSinceHold, not kept; release() resumes from #position
          this.#options.onHead?.(this.#head);
          return;
        }
        if (frame.position !== this.#position + 1) {
          this.#options.onProblem?.(
            `gap in the stream: expected position ${this.#position + 1}, got ${frame.position}; resuming after ${this.#position}`,
          );
          this.#reconnectSoon(`gap after position ${this.#position}`);
          return;
        }
        this.#position = frame.position;
        this.#madeProgress();
        this.#last = { position: frame.position, recordedAtMillis: frame.recordedAtMillis, event: frame.event };
        this.#options.onEvent(this.#last);
        return;
      }
      case 'caught-up':
        if (frame.position < this.#position) {
          this.#diverge(frame.position, undefined);
          return;
        }
        this.#head = Math.max(this.#head, frame.position);
        this.#madeProgress();
        if (this.#state.status !== 'live') this.#setState({ status: 'live' });
        break;
      case 'heartbeat':
        this.#head = Math.max(this.#head, frame.position);
        break;
      case 'closing':
        this.#options.onFrame?.(frame);
        if (frame.reason === 'after-beyond-head') {
          // The log is shorter than what this client has delivered: it was reset or replaced.
          this.#diverge(frame.position, undefined);
          return;
        }
        this.#head = Math.max(this.#head, frame.position);
        if (frame.reason === 'event-log-corrupt' || frame.reason === 'error') {
          // The coordinator failed reading its log: the next attempt will likely meet the same
          // failure, so the back-off keeps growing (it resets only on progress).
          this.#detach();
          if (frame.reason === 'event-log-corrupt') this.#damage = damageOf(frame);
          this.#scheduleReconnect(`server closing: ${frame.reason}`);
          return;
        }
        this.#reconnectSoon(`server closing: ${frame.reason}`);
        return;
      case 'stats':
        break;
    }
    this.#options.onFrame?.(frame);
  }

  /** Stops for good: the coordinator's log is not the one this client delivered (see `diverged`). */
  #diverge(headPosition: number, differsAt: number | undefined): void {
    this.#clearTimers();
    this.#detach();
    this.#closed = true;
    this.#setState({
      status: 'diverged',
      position: this.#position,
      headPosition,
      ...(differsAt === undefined ? {} : { differsAt }),
    });
  }

  #reconnectSoon(reason: string): void {
    this.#detach();
    this.#failures = 0;
    this.#scheduleReconnect(reason);
  }

  #scheduleReconnect(reason: string): void {
    if (this.#closed) return;
    this.#clearTimers();
    this.#failures += 1;
    const delay = backoffDelayMillis(this.#backoff, this.#failures);
    this.#dropped = false;
    this.#setState(
      this.#damage === undefined
        ? { status: 'reconnecting', after: this.#position, attempt: this.#attempt, retryInMillis: delay, reason }
        : {
            status: 'log-damaged',
            after: this.#position,
            attempt: this.#attempt,
            retryInMillis: delay,
            damage: this.#damage,
          },
    );
    this.#retryTimer = this.#options.timers.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#open();
    }, delay);
  }

  /** A connection delivered something new: the back-off starts over and any damage is behind us. */
  #madeProgress(): void {
    this.#failures = 0;
    this.#damage = undefined;
  }

  #damageField(): { readonly damage?: LogDamage } {
    return this.#damage === undefined ? {} : { damage: this.#damage };
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** Starts timing staleness from now (the socket opened). */
  #armStaleTimer(): void {
    this.#lastFrameAtMillis = this.#now();
    this.#waitForStale(this.#staleAfterMillis);
  }

  /** Fires after `delayMillis`: reconnects if no frame came for `staleAfterMillis`, else waits out the rest. */
  #waitForStale(delayMillis: number): void {
    if (this.#staleTimer !== undefined) this.#options.timers.clearTimeout(this.#staleTimer);
    this.#staleTimer = this.#options.timers.setTimeout(() => {
      this.#staleTimer = undefined;
      const quietMillis = this.#now() - this.#lastFrameAtMillis;
      if (quietMillis < this.#staleAfterMillis) this.#waitForStale(this.#staleAfterMillis - quietMillis);
      else this.#reconnectSoon(`no frame for ${this.#staleAfterMillis} ms`);
    }, delayMillis);
  }

  #clearTimers(): void {
    if (this.#retryTimer !== undefined) this.#options.timers.clearTimeout(this.#retryTimer);
    if (this.#staleTimer !== undefined) this.#options.timers.clearTimeout(this.#staleTimer);
    this.#retryTimer = undefined;
    this.#staleTimer = undefined;
  }

  #detach(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket === undefined) return;
    socket.onopen = null;
    socket.onmessage = null;
    socket.onclose = null;
    socket.onerror = null;
    socket.close(1000, 'client resuming');
  }

  #setState(state: ConnectionState): void {
    this.#state = state;
    this.#options.onState?.(state);
  }
}

/**
 * The stream's URL for the page's origin: `ws(s)://host/v1/stream?after=N&token=T&batch=1`
 * (`batch=1`: the frames of one server turn come as one message, see libs/protocol/src/stream.ts).
 *
 * @param origin - The page's origin, e.g. `https://coordinator:3000`.
 * @param after - Resume position.
 * @param token - Viewer token (the browser cannot set headers on a WebSocket).
 */
export function streamUrl(origin: string, after: number, token: string): string {
  const url = new URL('/v1/stream', origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('after', String(after));
  url.searchParams.set('token', token);
  url.searchParams.set('batch', '1');
  return url.toString();
}

function damageOf(frame: ClosingFrame): LogDamage {
  return {
    position: frame.corruptPosition,
    field: frame.field,
    message: frame.message ?? `the coordinator's event log is corrupt after position ${frame.position}`,
  };
}

function positive(field: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`StreamClient: ${field} must be a positive number (milliseconds), got ${String(value)}`);
  return value;
}

/** Whether an event frame is the event `delivered` (same position, recording time and event). */
function sameRecordedEvent(
  frame: { readonly position: number; readonly recordedAtMillis: number; readonly event: RecordedEvent['event'] },
  delivered: RecordedEvent | undefined,
): boolean {
  return (
    delivered !== undefined &&
    frame.position === delivered.position &&
    frame.recordedAtMillis === delivered.recordedAtMillis &&
    JSON.stringify(frame.event) === JSON.stringify(delivered.event)
  );
}
