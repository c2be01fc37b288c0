/**
 * The forward read every stored-record adapter shares: validate the range, then page through the
 * stored records and decode each one once, in position order.
 *
 * @see DESIGN.md § "The event-sourced coordinator" (the EventLog port)
 */
import { decodeRecord, type StoredEventRecord } from '../codec.js';
import { checkReadRange } from './event-log-arguments.js';
import type { ReadRange, RecordedEvent } from './event-log.js';

/** How an adapter reads its own storage for {@link readInPages}. */
export interface PagedRecordSource {
  /** Records with positions in `[from, to]`, in order, at most `limit` of them (fewer at the end). */
  readonly readPage: (from: number, to: number, limit: number) => readonly StoredEventRecord[];
  /** Throws the adapter's closed error when the log was closed (checked before every page). */
  readonly ensureOpen: () => void;
  /** Records per page. Positive integer. */
  readonly pageSize: number;
}

/**
 * The events of `range` (1-based, `to` inclusive, at most `limit`), read page by page so a long
 * log is never held in memory at once, each decoded with {@link decodeRecord}.
 *
 * @param api - Caller name for argument errors (`'SqliteEventLog.read'`).
 * @throws `TypeError` / `RangeError` for a malformed range (when iteration starts); the adapter's
 *   closed error; {@link EventLogCorruptError} for a record that does not decode.
 * @internal for adapters
 */
export function readInPages(api: string, range: ReadRange, source: PagedRecordSource): AsyncIterable<RecordedEvent> {
  return {
    async *[Symbol.asyncIterator]() {
      source.ensureOpen();
      const { from, to, limit } = checkReadRange(api, range);
      let next = from;
      let remaining = limit;
      while (remaining > 0 && next <= to) {
        source.ensureOpen();
        const page = source.readPage(next, to, Math.min(source.pageSize, remaining));
        if (page.length === 0) return;
        for (const stored of page) yield decodeRecord(stored);
        next = page[page.length - 1]!.position + 1;
        remaining -= page.length;
      }
    },
  };
}
