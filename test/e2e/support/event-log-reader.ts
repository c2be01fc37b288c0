/**
 * The coordinator's log as a test reads it: `GET /v1/events?after=&limit=` with the viewer token,
 * every reply parsed with the protocol's `EventsReplySchema`, events kept in position order.
 * Waits poll the log until a condition holds (synchronisation on the log, not on sleeps); a
 * coordinator that is down (crashed, restarting) is polled again until the wait's deadline.
 */
import { EventsReplySchema, type RecordedEvent } from '@lease-fence/protocol';
import { vi } from 'vitest';

/** Largest page `GET /v1/events` serves (`EventsQuerySchema.limit`). */
const PAGE_LIMIT = 10_000;

/** Options of {@link EventLogReader.waitFor}. */
export interface WaitForLogOptions {
  /** Give up after this long, milliseconds. @defaultValue 60 000 */
  readonly timeoutMillis?: number;
  /** What is awaited, for the timeout message. */
  readonly description: string;
}

/** Reads and follows one coordinator's log over HTTP. */
export class EventLogReader {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #events: RecordedEvent[] = [];
  #head = 0;

  /**
   * @param baseUrl - The coordinator, `http://127.0.0.1:<port>`.
   * @param viewerToken - Any token may read; the viewer's is used.
   */
  constructor(baseUrl: string, viewerToken: string) {
    this.#baseUrl = baseUrl;
    this.#token = viewerToken;
  }

  /** Every event read so far, in position order (positions 1, 2, … without gaps). */
  get events(): readonly RecordedEvent[] {
    return this.#events;
  }

  /** The head position of the log at the last read. */
  get head(): number {
    return this.#head;
  }

  /**
   * Reads every event after the last one read, up to the head.
   *
   * @returns The head position of the log.
   * @throws Error on a non-200 reply, a reply that does not parse, or a gap; fetch's error when the coordinator is down.
   */
  async refresh(): Promise<number> {
    for (;;) {
      const after = this.#events.length;
      const response = await fetch(`${this.#baseUrl}/v1/events?after=${after}&limit=${PAGE_LIMIT}`, {
        headers: { authorization: `Bearer ${this.#token}` },
      });
      if (response.status !== 200)
        throw new Error(`GET /v1/events?after=${after} answered ${response.status}: ${await response.text()}`);
      const reply = EventsReplySchema.parse(await response.json());
      for (const recorded of reply.events) {
        if (recorded.position !== this.#events.length + 1)
          throw new Error(`GET /v1/events: expected position ${this.#events.length + 1}, got ${recorded.position}`);
        this.#events.push(recorded);
      }
      this.#head = reply.head;
      if (reply.events.length === 0 || this.#events.length >= reply.head) return reply.head;
    }
  }

  /** The events at positions 1 … `position`. @throws RangeError if they have not been read yet. */
  upTo(position: number): readonly RecordedEvent[] {
    if (position > this.#events.length)
      throw new RangeError(
        `EventLogReader.upTo: position ${position} has not been read (read up to ${this.#events.length})`,
      );
    return this.#events.slice(0, position);
  }

  /**
   * Reads the log until an event matching `predicate` is in it (already read, or appended later).
   *
   * @returns The first matching event.
   * @throws Error naming `options.description`, the head and the counts by type once `options.timeoutMillis` passed.
   */
  async waitFor<R extends RecordedEvent>(
    predicate: (recorded: RecordedEvent) => recorded is R,
    options: WaitForLogOptions,
  ): Promise<R>;
  async waitFor(predicate: (recorded: RecordedEvent) => boolean, options: WaitForLogOptions): Promise<RecordedEvent>;
  async waitFor(predicate: (recorded: RecordedEvent) => boolean, options: WaitForLogOptions): Promise<RecordedEvent> {
    return this.waitUntil(() => this.#events.find(predicate), options);
  }

  /**
   * Reads the log until `check` (called after each read) returns a value other than undefined.
   *
   * @returns That value.
   * @throws Error naming `options.description` once `options.timeoutMillis` passed.
   */
  async waitUntil<T>(check: () => T | undefined, options: WaitForLogOptions): Promise<T> {
    const timeout = options.timeoutMillis ?? 60_000;
    try {
      return await vi.waitFor(
        async () => {
          await this.refresh();
          const value = check();
          if (value === undefined) throw new Error('not yet');
          return value;
        },
        { timeout, interval: 250 },
      );
    } catch (error) {
      throw new Error(
        `the log did not show ${options.description} within ${timeout} ms (head ${this.#head}, ${describeCounts(this.#events)}): ${String(error)}`,
        { cause: error },
      );
    }
  }
}

/** `LeaseGranted ×12, …` for failure messages. */
function describeCounts(events: readonly RecordedEvent[]): string {
  const counts = new Map<string, number>();
  for (const { event } of events) counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => `${type} ×${count}`).join(', ') || 'no events';
}
