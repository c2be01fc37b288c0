/**
 * Test doubles (not shipped): sockets a test opens, feeds and closes by hand, and timers that
 * fire only when the test says so. No real network, no real time.
 *
 * @internal
 */
import type { RecordedEvent, StreamFrame } from '@lease-fence/protocol';
import type { SocketLike, TimerLike } from '../stream/stream-client.js';

/** The `event` frame the coordinator sends for a recorded event. */
const eventFrame = (e: RecordedEvent): StreamFrame => ({
  type: 'event',
  position: e.position,
  recordedAtMillis: e.recordedAtMillis,
  event: e.event,
});

/** @internal A socket double: the test plays the server. */
export class FakeSocket implements SocketLike {
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { readonly data: unknown }) => void) | null = null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  closedByClient = false;

  constructor(readonly url: string) {}

  /** The `after` query parameter the client asked for. */
  get after(): number {
    return Number(new URL(this.url).searchParams.get('after'));
  }

  open(): this {
    this.onopen?.({});
    return this;
  }

  send(frame: StreamFrame | string): this {
    this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
    return this;
  }

  sendEvents(events: readonly RecordedEvent[]): this {
    for (const e of events) this.send(eventFrame(e));
    return this;
  }

  /** Sends `events` as one `batch` message, as the coordinator does for a client that asked for `batch=1`. */
  sendBatch(events: readonly RecordedEvent[], ...after: readonly StreamFrame[]): this {
    return this.send(JSON.stringify({ type: 'batch', frames: [...events.map(eventFrame), ...after] }));
  }

  serverClose(code = 1006, reason = ''): void {
    this.onclose?.({ code, reason });
  }

  close(): void {
    this.closedByClient = true;
  }
}

/** @internal Timers that run only on {@link ManualTimers.runDue} / {@link ManualTimers.advance}. */
export class ManualTimers implements TimerLike {
  nowMillis = 0;
  #next = 1;
  readonly #pending = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, delayMillis: number): unknown {
    const id = this.#next++;
    this.#pending.set(id, { at: this.nowMillis + delayMillis, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  /** Delays of the pending timers, ascending, relative to now. */
  get pendingDelays(): number[] {
    return [...this.#pending.values()].map((p) => p.at - this.nowMillis).sort((a, b) => a - b);
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(millis: number): void {
    const until = this.nowMillis + millis;
    for (;;) {
      const due = [...this.#pending.entries()].filter(([, p]) => p.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      this.#pending.delete(due[0]);
      this.nowMillis = due[1].at;
      due[1].callback();
    }
    this.nowMillis = until;
  }
}
