/**
 * The time input's language: where "jump to …" goes in the log. It accepts
 * - a log position: `#1234`, `seq 1234`, `position 1234` or `1234`;
 * - a local time: `13:24:40` (today), `2026-12-02 13:24:40` or `2026-12-02T13:24:40`, read in
 *   the browser's time zone, which the input names ("local time, Europe/Berlin (UTC+1)");
 * - an ISO time with its offset: `2026-12-02T13:24:40.120Z`, `…+01:00`, `…-0530`.
 * Seconds and milliseconds are optional. Pure: the caller passes the clock and the time zone,
 * and conversion uses the platform's `Intl` time-zone data (no date library: `Intl` has the
 * zone rules, and the grammar is a few regular expressions).
 */

/** Where a jump goes: a log position, or a coordinator wall time (the last event at or before it). */
export type JumpTarget =
  | { readonly kind: 'position'; readonly position: number }
  | {
      readonly kind: 'wall';
      /** Epoch milliseconds. */
      readonly wallMillis: number;
      /** How the text was placed on the clock: its own offset, or the assumed local zone (`zoneLabel`). */
      readonly zone: 'offset' | 'local';
      /** E.g. `UTC+01:00 (as written)` or `local time, Europe/Berlin (UTC+1)`. */
      readonly zoneLabel: string;
    };

/** The outcome of {@link parseJumpTarget}: a target, or a sentence naming what was wrong. */
export type JumpParse =
  { readonly ok: true; readonly target: JumpTarget } | { readonly ok: false; readonly message: string };

/** What {@link parseJumpTarget} needs besides the text. */
export interface JumpContext {
  /** The browser's clock, epoch milliseconds: which day "today" is. */
  readonly nowMillis: number;
  /** IANA time zone local times are read in (the browser's, `Intl.DateTimeFormat().resolvedOptions().timeZone`). */
  readonly timeZone: string;
}

const EXAMPLES = 'try 13:24:40, 2026-12-02 13:24:40, 2026-12-02T13:24:40Z (or +01:00), or #1234 for a log position';
const POSITION = /^(?:#|seq\s*|pos(?:ition)?\s*)?(\d+)$/i;
const DATE_ONLY = /^\d{4}-\d{1,2}-\d{1,2}$/;
const DATE_TIME =
  /^(?:(\d{4})-(\d{1,2})-(\d{1,2})(?:T|\s+))?(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Reads the time input.
 *
 * @param text - What the user typed.
 * @param context - The clock and time zone for local times.
 * @returns `ok: false` with a message naming the field that is wrong (month 13, hour 25, a
 *   local time skipped or repeated by a daylight-saving change, …); never throws.
 */
export function parseJumpTarget(text: string, context: JumpContext): JumpParse {
  const input = text.trim();
  if (input === '') return fail(`Type a time or a log position: ${EXAMPLES}.`);
  const position = POSITION.exec(input);
  if (position !== null) {
    const n = Number(position[1]);
    if (!Number.isSafeInteger(n)) return fail(`Position ${position[1]} is too large.`);
    return { ok: true, target: { kind: 'position', position: n } };
  }
  if (DATE_ONLY.test(input)) return fail(`"${input}" has a date but no time: add one, e.g. ${input} 13:24:40.`);
  const m = DATE_TIME.exec(input);
  if (m === null) return fail(`"${input}" is neither a time nor a log position: ${EXAMPLES}.`);
  const [, y, mo, d, h, mi, s, frac, offsetText] = m;
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  const millis = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  if (hour > 23) return fail(`Hour ${hour} is not 0–23 in "${input}".`);
  if (minute > 59) return fail(`Minute ${minute} is not 0–59 in "${input}".`);
  if (second > 59) return fail(`Second ${second} is not 0–59 in "${input}".`);

  let offsetMinutes: number | undefined;
  if (offsetText !== undefined) {
    const parsed = parseOffset(offsetText);
    if (typeof parsed === 'string') return fail(`${parsed} in "${input}".`);
    offsetMinutes = parsed;
  }
  let zoneDate: { year: number; month: number; day: number };
  try {
    zoneDate =
      y !== undefined
        ? { year: Number(y), month: Number(mo), day: Number(d) }
        : offsetMinutes === undefined
          ? dateIn(context.timeZone, context.nowMillis)
          : utcDate(context.nowMillis + offsetMinutes * 60_000);
  } catch {
    return fail(`The time zone "${context.timeZone}" is unknown to this browser: add an offset (Z or +01:00).`);
  }
  const { year, month, day } = zoneDate;
  if (month < 1 || month > 12) return fail(`Month ${month} is not 1–12 in "${input}".`);
  const days = daysInMonth(year, month);
  if (day < 1 || day > days)
    return fail(`Day ${day} is not in ${year}-${pad(month)} (it has ${days} days) in "${input}".`);

  const fieldsAsUtc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  if (offsetMinutes !== undefined) {
    return {
      ok: true,
      target: {
        kind: 'wall',
        wallMillis: fieldsAsUtc - offsetMinutes * 60_000,
        zone: 'offset',
        zoneLabel: `${formatUtcOffset(offsetMinutes)} (as written)`,
      },
    };
  }
  const instants = localInstants(fieldsAsUtc, context.timeZone);
  const local = `${year}-${pad(month)}-${pad(day)} ${pad(hour)}:${pad(minute)}`;
  if (instants.length === 0)
    return fail(
      `${local} does not exist in ${context.timeZone}: the clocks skipped it (daylight saving). Add an offset, e.g. ${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:00${isoOffset(offsetOf(context.timeZone, fieldsAsUtc - 12 * 3_600_000))}.`,
    );
  if (instants.length > 1) {
    const offsets = instants.map((t) => isoOffset(offsetOf(context.timeZone, t)));
    return fail(
      `${local} happens twice in ${context.timeZone} (the clocks went back): add an offset to say which, ${offsets.join(' or ')}.`,
    );
  }
  const wallMillis = instants[0] ?? fieldsAsUtc;
  return {
    ok: true,
    target: { kind: 'wall', wallMillis, zone: 'local', zoneLabel: describeLocalZone(context.timeZone, wallMillis) },
  };
}

/**
 * How the input names the zone it assumes: `local time, Europe/Berlin (UTC+1)`, with the zone's
 * offset at `atMillis` (it changes with daylight saving).
 *
 * @throws RangeError from `Intl` for a time zone the platform does not know.
 */
export function describeLocalZone(timeZone: string, atMillis: number): string {
  return `local time, ${timeZone} (${formatUtcOffset(offsetOf(timeZone, atMillis))})`;
}

/** Where the loaded log starts and ends, for {@link jumpOutsideLog}. */
export interface LogBounds {
  readonly firstPosition: number;
  /** Head of the log (as last heard). */
  readonly lastPosition: number;
  /** Coordinator wall time of the first loaded event, epoch milliseconds; undefined when none. */
  readonly firstWallMillis: number | undefined;
  /**
   * Coordinator wall time of the head's event, epoch milliseconds; undefined when none is loaded
   * or the head is not (a later time is then not refused: the caller loads on to it).
   */
  readonly lastWallMillis: number | undefined;
}

/**
 * Why a target lies outside the log, or undefined when it is inside: a position below the first
 * or above the head, a time before the first event or after the last one.
 *
 * @param target - A parsed target.
 * @param bounds - The log's ends.
 * @param describeWall - How a wall time is written in the message (e.g. `formatWallDateTime`).
 */
export function jumpOutsideLog(
  target: JumpTarget,
  bounds: LogBounds,
  describeWall: (wallMillis: number) => string,
): string | undefined {
  if (bounds.lastPosition === 0) return 'The log is empty: there is nothing to jump to yet.';
  if (target.kind === 'position') {
    if (target.position < bounds.firstPosition)
      return `Position ${target.position} is before the first event (#${bounds.firstPosition}).`;
    if (target.position > bounds.lastPosition)
      return `Position ${target.position} is after the last event (#${bounds.lastPosition}).`;
    return undefined;
  }
  const when = `${describeWall(target.wallMillis)} (${target.zoneLabel})`;
  if (bounds.firstWallMillis !== undefined && target.wallMillis < bounds.firstWallMillis)
    return `${when} is before the first event (#${bounds.firstPosition} at ${describeWall(bounds.firstWallMillis)}).`;
  if (bounds.lastWallMillis !== undefined && target.wallMillis > bounds.lastWallMillis)
    return `${when} is after the last event (#${bounds.lastPosition} at ${describeWall(bounds.lastWallMillis)}): press Live to follow the log.`;
  return undefined;
}

/** `UTC`, `UTC+1`, `UTC+5:30`, `UTC-3` for an offset east of UTC in minutes. */
export function formatUtcOffset(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'UTC';
  const sign = offsetMinutes > 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  const minutes = abs % 60;
  return `UTC${sign}${Math.floor(abs / 60)}${minutes === 0 ? '' : `:${pad(minutes)}`}`;
}

function fail(message: string): JumpParse {
  return { ok: false, message };
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function isoOffset(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'Z';
  const abs = Math.abs(offsetMinutes);
  return `${offsetMinutes > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** `Z`, `+01:00`, `+0100`, `-05` → minutes east of UTC, or what is wrong with it. */
function parseOffset(text: string): number | string {
  if (text.toUpperCase() === 'Z') return 0;
  const sign = text.startsWith('-') ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (digits.length !== 2 && digits.length !== 4) return `Offset ${text} is not ±hh:mm`;
  if (hours > 14) return `Offset ${text}: hours ${hours} is not 0–14`;
  if (minutes > 59) return `Offset ${text}: minutes ${minutes} is not 0–59`;
  return sign * (hours * 60 + minutes);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function utcDate(millis: number): { year: number; month: number; day: number } {
  const date = new Date(millis);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A formatter of the zone's calendar fields (cached: constructing one is slow). @throws RangeError for an unknown zone. */
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

function fieldsIn(timeZone: string, millis: number): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(millis)))
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  return fields;
}

function dateIn(timeZone: string, millis: number): { year: number; month: number; day: number } {
  const f = fieldsIn(timeZone, millis);
  return { year: f.year ?? 1970, month: f.month ?? 1, day: f.day ?? 1 };
}

/** The zone's offset east of UTC at an instant, whole minutes. */
function offsetOf(timeZone: string, millis: number): number {
  const f = fieldsIn(timeZone, millis);
  const asUtc = Date.UTC(f.year ?? 1970, (f.month ?? 1) - 1, f.day ?? 1, f.hour ?? 0, f.minute ?? 0, f.second ?? 0);
  const wholeSeconds = Math.floor(millis / 1000) * 1000;
  return Math.round((asUtc - wholeSeconds) / 60_000);
}

/**
 * Every instant whose local clock in `timeZone` reads the calendar fields `fieldsAsUtc` encodes
 * (as if they were UTC): none in a daylight-saving gap, two in an overlap, else one. Candidate
 * offsets are the zone's offsets within a day either side (zones change offset at most once a day).
 */
function localInstants(fieldsAsUtc: number, timeZone: string): number[] {
  const offsets = new Set<number>();
  for (const hours of [-26, -13, 0, 13, 26]) offsets.add(offsetOf(timeZone, fieldsAsUtc + hours * 3_600_000));
  const instants = new Set<number>();
  for (const offset of offsets) {
    const candidate = fieldsAsUtc - offset * 60_000;
    if (offsetOf(timeZone, candidate) === offset) instants.add(candidate);
  }
  return [...instants].sort((a, b) => a - b);
}
