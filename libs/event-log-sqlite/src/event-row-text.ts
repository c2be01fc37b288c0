/**
 * An event row read as one text value (better-sqlite3's pluck mode) instead of an array of its
 * five columns (raw mode), for the paged reads (`read`, `readPages`, and so recovery's replay).
 *
 * Why: better-sqlite3 12 built for Node 20 makes each raw row an empty array grown by one V8 API
 * `Set` per column (`GetRawRowJS` in its `src/util/data.cpp`; the constructor that takes the
 * values at once is compiled only for Node 22's ABI and later). At 1M events that costs about
 * 0.35 µs per row, a seventh of recovery's main-thread CPU, where SQLite joining the columns into
 * one text and this reader splitting it costs far less (BENCHMARKS.md, "raw rows or one text per
 * row"). Hand-written because no library reads SQLite rows in this layout: it is this adapter's
 * own encoding, and the rows are still decoded by `decodeFields` (`libs/coordinator-core/src/codec.ts`).
 *
 * The text is `<position> <version> <recorded_at> <length of type> <type><data>`: the three
 * numbers as SQLite writes an INTEGER and a REAL as text (a whole `recorded_at` as an INTEGER;
 * SQLite 3.53 writes a finite REAL with the digits that read back to the same double, and an
 * infinite one as `Inf`), then the type's
 * length in characters, so a type is cut out exactly whatever it holds, and the data text after
 * it. A text that does not read back as valid (an infinite `recorded_at`, a type with characters
 * outside the Basic Multilingual Plane, whose length SQLite and JavaScript count differently)
 * fails to decode here; the adapter then reads that one row as columns and decodes it as before
 * (`sqlite-event-log.ts`), so a damaged record is refused with the same position, field and
 * message as without this text.
 */
import { decodeFields, type RecordedEvent } from '@lease-fence/coordinator-core';

/**
 * The SQL expression of an event row's text (see the module comment), over the `events` table's
 * columns; `length()` counts a TEXT's characters.
 */
export const EVENT_ROW_TEXT_SQL =
  "position || ' ' || version || ' ' || " +
  // A whole number of milliseconds (what Date.now() gives) as digits, which numberAt reads without a slice.
  "iif(recorded_at = CAST(recorded_at AS INTEGER), CAST(recorded_at AS INTEGER), recorded_at) || ' ' || " +
  "length(type) || ' ' || type || data";

const ZERO = 0x30;
const NINE = 0x39;
/** Most digits read one by one: any 15-digit integer is exact in a double. */
const MAX_DIGITS = 15;

/**
 * The number written in `text` from `start` to `end`: digits read in place (no string made for
 * them, as a replay does five times per row), anything else (a sign, a fraction, an exponent,
 * `Inf`, more than 15 digits) through `Number`.
 */
function numberAt(text: string, start: number, end: number): number {
  if (end - start > MAX_DIGITS || end === start) return Number(text.slice(start, end));
  let value = 0;
  for (let at = start; at < end; at += 1) {
    const code = text.charCodeAt(at);
    if (code < ZERO || code > NINE) return Number(text.slice(start, end));
    value = value * 10 + (code - ZERO);
  }
  return value;
}

/** The position at the head of an event row's text (an INTEGER primary key). */
export const positionOfRowText = (text: string): number => numberAt(text, 0, text.indexOf(' '));

/**
 * Decodes an event row's text with {@link decodeFields}, its data parsed in place (from its index
 * in the text, not sliced out: a sliced string costs every character read through it).
 * @throws `EventLogCorruptError` (from `decodeFields`) when the record does not decode, or
 *   when the text does not read back as its columns (an infinite `recorded_at`, a type whose
 *   length is counted differently): the caller then decodes that row from its columns, which
 *   gives the record's own refusal.
 */
export function decodeEventRowText(text: string): RecordedEvent {
  const positionEnd = text.indexOf(' ');
  const versionEnd = text.indexOf(' ', positionEnd + 1);
  const recordedAtEnd = text.indexOf(' ', versionEnd + 1);
  const typeLengthEnd = text.indexOf(' ', recordedAtEnd + 1);
  const typeEnd = typeLengthEnd + 1 + numberAt(text, recordedAtEnd + 1, typeLengthEnd);
  return decodeFields(
    numberAt(text, 0, positionEnd),
    text.slice(typeLengthEnd + 1, typeEnd),
    numberAt(text, positionEnd + 1, versionEnd),
    text,
    numberAt(text, versionEnd + 1, recordedAtEnd),
    typeEnd,
  );
}
