/**
 * The port's catch-up subscription over a KurrentDB stream subscription. The server does the
 * catch-up and the switch to live itself; this wrapper decodes each event once, checks that
 * positions are contiguous (a gap means the stream was truncated: acknowledged events are
 * missing), buffers with backpressure, and turns the client's stream events into one async
 * iterator that `close()` can end at any moment.
 *
 * @see ../../coordinator-core/src/ports/event-log.ts `EventLog.subscribe`
 */
import type { ResolvedEvent, StreamSubscription } from '@kurrent/kurrentdb-client';
import {
  decodeRecord,
  EventLogUnavailableError,
  type RecordedEvent,
  type Subscription,
} from '@lease-fence/coordinator-core';
import { LOG_NAME, toStoredRecord, translateError } from './to-eventstoredb.js';

/** Options of {@link createEventStoreDbSubscription}. */
export interface EventStoreDbSubscriptionOptions {
  /** The position the source starts after (0 = from the start); the first event must be `after + 1`. */
  readonly after: number;
  /** Called once when the subscription ends: closed, or failed. */
  readonly onEnd: () => void;
  /** Events buffered before the source is paused. @defaultValue 1024 */
  readonly highWaterMark?: number;
}

type Waiter = { resolve(result: IteratorResult<RecordedEvent>): void; reject(error: unknown): void };

const DONE: IteratorResult<RecordedEvent> = { value: undefined, done: true };

/**
 * Wraps a started KurrentDB stream subscription as a port {@link Subscription}.
 *
 * The iterator ends (`done`) after `close()`. It rejects with {@link EventLogUnavailableError}
 * when the connection drops or the server ends the subscription (resubscribe after the last
 * delivered position), and with {@link EventLogCorruptError} on an undecodable event or a gap —
 * in both cases after delivering every event received before the failure.
 */
export function createEventStoreDbSubscription(
  source: StreamSubscription,
  options: EventStoreDbSubscriptionOptions,
): Subscription {
  const highWaterMark = options.highWaterMark ?? 1024;
  const buffered: RecordedEvent[] = [];
  let position = options.after;
  let waiter: Waiter | undefined;
  let failure: { readonly error: unknown } | undefined;
  let ended = false;
  let iterated = false;

  const end = (): void => {
    if (ended) return;
    ended = true;
    options.onEnd();
    source.unsubscribe().catch(() => {
      /* the connection is already gone: nothing left to cancel */
    });
  };

  const fail = (error: unknown): void => {
    if (ended || failure !== undefined) return;
    failure = { error };
    end();
    if (waiter !== undefined && buffered.length === 0) {
      const pending = waiter;
      waiter = undefined;
      pending.reject(error);
    }
  };

  const receive = (resolved: ResolvedEvent): void => {
    if (ended) return;
    let recorded: RecordedEvent;
    try {
      recorded = decodeRecord(toStoredRecord(resolved, position + 1));
    } catch (error) {
      fail(error);
      return;
    }
    position = recorded.position;
    if (waiter !== undefined) {
      const pending = waiter;
      waiter = undefined;
      pending.resolve({ value: recorded, done: false });
      return;
    }
    buffered.push(recorded);
    if (buffered.length >= highWaterMark) source.pause();
  };

  source.on('data', receive);
  source.on('error', (error) => fail(translateError(error, 'subscribe')));
  source.on('end', () =>
    fail(new EventLogUnavailableError(LOG_NAME, { message: 'subscribe: the server ended the subscription' })),
  );

  const next = (): Promise<IteratorResult<RecordedEvent>> => {
    const recorded = buffered.shift();
    if (recorded !== undefined) {
      if (source.isPaused() && buffered.length < highWaterMark / 2 && !ended) source.resume();
      return Promise.resolve({ value: recorded, done: false });
    }
    if (failure !== undefined) {
      const { error } = failure;
      failure = { error: undefined };
      return error === undefined ? Promise.resolve(DONE) : Promise.reject(error);
    }
    if (ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      waiter = { resolve, reject };
    });
  };

  const close = async (): Promise<void> => {
    buffered.length = 0;
    end();
    if (waiter !== undefined) {
      const pending = waiter;
      waiter = undefined;
      pending.resolve(DONE);
    }
  };

  const iterator: AsyncIterableIterator<RecordedEvent> = {
    next,
    async return() {
      await close();
      return DONE;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };

  return {
    [Symbol.asyncIterator]() {
      if (iterated)
        throw new TypeError('Subscription: iterate a subscription once; subscribe again for a second reader');
      iterated = true;
      return iterator;
    },
    close,
  };
}
