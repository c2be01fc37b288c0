/**
 * Works around a client behaviour found while finishing issue 6: with `@kurrent/kurrentdb-client`
 * 1.3.1, a client whose first read found the server unreachable never reads from it later, even
 * once the server is up (its native read bridge, `@kurrent/bridge` 0.2.2, keeps answering
 * `UnavailableError`; seen with a refused connection and with a reset one). A client that reached
 * the server once reconnects on its own after a loss. So a coordinator started before its
 * KurrentDB server would wait forever.
 *
 * {@link openFirstContactEventLog} therefore replaces the adapter (and with it the client) after
 * every `EventLogUnavailableError` until a call has succeeded once; from then on it only
 * delegates. Reproduced by test/esdb/coordinator-service.int.spec.ts ("unreachable at start-up").
 * It lives beside the adapter because it is a workaround for this vendor's client; the service
 * wraps `connectEventStoreDbEventLog` in it (`apps/coordinator/src/event-log/open-event-log.ts`).
 * Background: docs/eventstoredb.md, "What we found out about the client".
 */
import {
  EventLogUnavailableError,
  readPagesOf,
  type AppendOptions,
  type AppendResult,
  type CoordinatorEvent,
  type EventLog,
  type ReadRange,
  type RecordedEvent,
  type Snapshot,
  type Subscription,
} from '@lease-fence/coordinator-core';

/**
 * An EventLog over the log `connect` opens, re-opened (old one closed) after each
 * `EventLogUnavailableError` until one call has succeeded. Subscriptions are taken from the log
 * current at the time of the call.
 *
 * @param connect - Opens a fresh log with a fresh client (e.g. `connectEventStoreDbEventLog`); called once now and once per replacement.
 * @throws whatever the first `connect()` throws (a malformed connection string).
 */
export async function openFirstContactEventLog(connect: () => Promise<EventLog>): Promise<EventLog> {
  let current = await connect();
  let reached = false;
  let closed = false;
  let replacing: Promise<void> | undefined;

  /** Swaps in a fresh log if `failed` is still current and the server was never reached. */
  const retire = (failed: EventLog, error: unknown): void => {
    if (
      reached ||
      closed ||
      current !== failed ||
      replacing !== undefined ||
      !(error instanceof EventLogUnavailableError)
    )
      return;
    replacing = connect()
      .then(
        async (fresh) => {
          if (closed) {
            await fresh.close();
            return;
          }
          current = fresh;
          await failed.close();
        },
        () => undefined, // the next failure retries the replacement
      )
      .finally(() => {
        replacing = undefined;
      });
  };

  /** Runs `call` on the current log, noting a success and retiring the log on a failure before first contact. */
  const delegate = async <T>(call: (log: EventLog) => Promise<T>): Promise<T> => {
    const log = current;
    try {
      const result = await call(log);
      reached = true;
      return result;
    } catch (error) {
      retire(log, error);
      throw error;
    }
  };

  /** Iterates what `open` reads from the current log, noting contact and retiring the log on a failure before first contact (as {@link delegate}). */
  const follow = <T>(open: (log: EventLog) => AsyncIterable<T>): AsyncIterable<T> => ({
    async *[Symbol.asyncIterator](): AsyncGenerator<T> {
      const log = current;
      try {
        for await (const item of open(log)) {
          reached = true;
          yield item;
        }
        reached = true;
      } catch (error) {
        retire(log, error);
        throw error;
      }
    },
  });

  return {
    get name() {
      return current.name;
    },
    append: (events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult> =>
      delegate((log) => log.append(events, options)),
    read: (range: ReadRange): AsyncIterable<RecordedEvent> => follow((log) => log.read(range)),
    readPages: (range: ReadRange): AsyncIterable<readonly RecordedEvent[]> => follow((log) => readPagesOf(log, range)),
    version: (): Promise<number> => delegate((log) => log.version()),
    subscribe: (options: { readonly after: number }): Subscription => current.subscribe(options),
    latestSnapshot: (): Promise<Snapshot | undefined> => delegate((log) => log.latestSnapshot()),
    saveSnapshot: (snapshot: Snapshot): Promise<void> => delegate((log) => log.saveSnapshot(snapshot)),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await replacing;
      await current.close();
    },
  };
}
