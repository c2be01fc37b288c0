/**
 * The forward read every stored-record adapter shares: validate the range, then page through the
 * stored records and decode each one once, in position order. {@link readRecordPages} hands the
 * decoded records over a page at a time (one promise per page: what recovery folds);
 * {@link readInPages} hands them over one at a time (`EventLog.read`).
 *
 * @see docs/design.md § "The event-sourced coordinator" (the EventLog port; Recovery)
 */
import { isIntegerInRange } from 'lease-fence';
import type { StoredEventRecord } from '../codec.js';
import { checkReadRange } from './event-log-arguments.js';
import type { EventLog, ReadRange, RecordedEvent } from './event-log.js';

/** Events per page when a log without `readPages` is read in pages ({@link readPagesOf}). */
const FALLBACK_PAGE_SIZE = 512;

/**
 * How an adapter reads its own storage for {@link readInPages} and {@link readRecordPages}.
 * @typeParam Row - What the adapter reads per record: a {@link StoredEventRecord}, or its own row
 *   (SQLite's raw row array) with a `decode` that decodes it straight into the event.
 */
export interface PagedRecordSource<Row = StoredEventRecord> {
  /** Records with positions in `[from, to]`, in order, at most `limit` of them (fewer at the end). */
  readonly readPage: (from: number, to: number, limit: number) => readonly Row[];
  /**
   * Decodes one row into its event, with `decodeRecord`'s checks and errors (through
   * `decodeFields` for a row that is not a {@link StoredEventRecord}; both in `codec.ts`).
   */
  readonly decode: (row: Row) => RecordedEvent;
  /** Throws the adapter's closed error when the log was closed (checked before every page). */
  readonly ensureOpen: () => void;
  /** Records per page. Positive integer. */
  readonly pageSize: number;
}

/**
 * The events of `range` (1-based, `to` inclusive, at most `limit`) in pages of at most
 * `source.pageSize`, read page by page so a long log is never held in memory at once, each
 * record decoded with `source.decode`. A page is never empty. When a record does not decode,
 * the records of its page before it are yielded first, then the iteration throws, so a reader
 * sees exactly what `read` would have delivered.
 *
 * @param api - Caller name for argument errors (`'SqliteEventLog.readPages'`).
 * @throws `TypeError` / `RangeError` for a malformed range (when iteration starts); the adapter's
 *   closed error; {@link EventLogCorruptError} for a record that does not decode.
 * @internal for adapters
 */
export function readRecordPages<Row>(
  api: string,
  range: ReadRange,
  source: PagedRecordSource<Row>,
): AsyncIterable<readonly RecordedEvent[]> {
  return {
    async *[Symbol.asyncIterator]() {
      source.ensureOpen();
      const { from, to, limit } = checkReadRange(api, range);
      let next = from;
      let remaining = limit;
      while (remaining > 0 && next <= to) {
        source.ensureOpen();
        const stored = source.readPage(next, to, Math.min(source.pageSize, remaining));
        if (stored.length === 0) return;
        const decoded: RecordedEvent[] = [];
        try {
          for (const row of stored) decoded.push(source.decode(row));
        } catch (error) {
          if (decoded.length > 0) yield decoded;
          throw error;
        }
        yield decoded;
        next = decoded[decoded.length - 1]!.position + 1;
        remaining -= stored.length;
      }
    },
  };
}

/**
 * The events of `range`, one at a time: {@link readRecordPages} flattened.
 *
 * @param api - Caller name for argument errors (`'SqliteEventLog.read'`).
 * @throws as {@link readRecordPages}.
 * @internal for adapters
 */
export function readInPages<Row>(
  api: string,
  range: ReadRange,
  source: PagedRecordSource<Row>,
): AsyncIterable<RecordedEvent> {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const page of readRecordPages(api, range, source)) yield* page;
    },
  };
}

/**
 * Groups events read one at a time into pages of at most `pageSize`, in order: for a log whose
 * storage hands events over one by one (a remote stream), or that has no `readPages`. When
 * `events` throws, the events read before it are yielded first, then the error is rethrown.
 *
 * @param pageSize - Most events per page. Positive integer.
 * @throws `RangeError` (at once) if `pageSize` is not a positive integer; whatever `events` throws.
 * @internal for adapters and recovery
 */
export function groupIntoPages(
  events: AsyncIterable<RecordedEvent>,
  pageSize: number,
): AsyncIterable<readonly RecordedEvent[]> {
  if (!isIntegerInRange(pageSize, 1)) {
    throw new RangeError(`groupIntoPages: pageSize must be a positive integer (events), got ${String(pageSize)}`);
  }
  return {
    async *[Symbol.asyncIterator]() {
      let page: RecordedEvent[] = [];
      try {
        for await (const recorded of events) {
          page.push(recorded);
          if (page.length === pageSize) {
            yield page;
            page = [];
          }
        }
      } catch (error) {
        if (page.length > 0) yield page;
        throw error;
      }
      if (page.length > 0) yield page;
    },
  };
}

/**
 * The events of `range` in pages, from any EventLog: its own `readPages` when it has one, else its
 * `read` grouped into pages of 512 ({@link groupIntoPages}). What recovery folds, and what a
 * decorator forwarding the port hands on.
 *
 * @throws as the log's `readPages` / `read`.
 */
export function readPagesOf(
  log: Pick<EventLog, 'read' | 'readPages'>,
  range: ReadRange,
): AsyncIterable<readonly RecordedEvent[]> {
  return log.readPages?.(range) ?? groupIntoPages(log.read(range), FALLBACK_PAGE_SIZE);
}
