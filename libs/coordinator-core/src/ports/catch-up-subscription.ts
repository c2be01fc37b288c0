/**
 * The one implementation of a catch-up subscription for adapters whose store can be read by
 * position: it reads pages after the last delivered position until a read comes back empty,
 * then waits for a hint that more may exist, and reads again. Because every event is read from
 * the log by position, the switch from catch-up to live can neither skip nor repeat an event.
 *
 * @see ./event-log.ts {@link EventLog.subscribe}
 */
import { decodeRecord, type StoredEventRecord } from '../codec.js';
import type { RecordedEvent, Subscription } from './event-log.js';
import { EventLogCorruptError } from './event-log-errors.js';

/** What a catch-up subscription needs from an adapter. */
export interface CatchUpSource {
  /**
   * Reads up to `limit` stored records from position `from` (inclusive), in order; fewer (or
   * none) at the end of the log. Records are decoded one by one as they are delivered, so a
   * corrupt record ends the subscription after every record before it.
   */
  readPage(from: number, limit: number): Promise<readonly StoredEventRecord[]>;
  /**
   * Resolves when events after `position` may exist (a hint: a spurious wake-up only costs one
   * empty read), or when `signal` aborts. Must resolve at once if the adapter already knows of
   * events after `position`, so that an append between the empty read and this call is not missed.
   */
  waitForEventsAfter(position: number, signal: AbortSignal): Promise<void>;
}

/** Options of {@link createCatchUpSubscription}. */
export interface CatchUpSubscriptionOptions {
  /** Deliver events after this position (0 = from the start). */
  readonly after: number;
  /** Events per catch-up read. @defaultValue 512 */
  readonly pageSize?: number;
  /** Called once when the subscription ends (closed, consumer left the loop, or failed). */
  readonly onEnd?: () => void;
}

/**
 * Creates a {@link Subscription} over `source`: every event after `options.after`, in order,
 * exactly once. A gap in positions ends it with {@link EventLogCorruptError}.
 * @internal for adapters
 */
export function createCatchUpSubscription(source: CatchUpSource, options: CatchUpSubscriptionOptions): Subscription {
  const controller = new AbortController();
  const pageSize = options.pageSize ?? 512;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    controller.abort();
    options.onEnd?.();
  };

  async function* deliver(): AsyncGenerator<RecordedEvent, void, undefined> {
    let position = options.after;
    try {
      while (!controller.signal.aborted) {
        const page = await source.readPage(position + 1, pageSize);
        if (controller.signal.aborted) return;
        if (page.length === 0) {
          await source.waitForEventsAfter(position, controller.signal);
          continue;
        }
        for (const stored of page) {
          if (stored.position !== position + 1) {
            throw new EventLogCorruptError({
              position: position + 1,
              issues: [
                {
                  path: '',
                  message: `subscription expected position ${position + 1} but the log returned ${stored.position}`,
                },
              ],
            });
          }
          const recorded = decodeRecord(stored);
          position = recorded.position;
          yield recorded;
          if (controller.signal.aborted) return;
        }
      }
    } finally {
      end();
    }
  }

  const iterator = deliver();
  let iterated = false;
  return {
    [Symbol.asyncIterator]() {
      if (iterated)
        throw new TypeError('Subscription: iterate a subscription once; subscribe again for a second reader');
      iterated = true;
      return iterator;
    },
    async close() {
      end();
      await iterator.return(undefined);
    },
  };
}
