/**
 * How the dashboard writes times and durations. Wall times are shown in UTC with a `Z` so that a
 * link or a ticket read in another time zone names the same instant; every time says its clock.
 */
import type { ClockStamp } from './clock-stamp.js';

/**
 * `HH:MM:SS.mmmZ` of a coordinator wall time.
 *
 * @param wallMillis - Epoch milliseconds.
 */
export function formatWallTime(wallMillis: number): string {
  if (!Number.isFinite(wallMillis)) return '—';
  return new Date(wallMillis).toISOString().slice(11, 23) + 'Z';
}

/**
 * `YYYY-MM-DD HH:MM:SS.mmmZ` of a coordinator wall time.
 *
 * @param wallMillis - Epoch milliseconds.
 */
export function formatWallDateTime(wallMillis: number): string {
  if (!Number.isFinite(wallMillis)) return '—';
  return `${formatWallDate(wallMillis)} ${formatWallTime(wallMillis)}`;
}

/**
 * `YYYY-MM-DD` of a coordinator wall time: its day in UTC.
 *
 * @param wallMillis - Epoch milliseconds.
 */
export function formatWallDate(wallMillis: number): string {
  if (!Number.isFinite(wallMillis)) return '—';
  return new Date(wallMillis).toISOString().slice(0, 10);
}

/**
 * The one UTC day all of `wallMillis` fall on (`YYYY-MM-DD`), or undefined when they span more than
 * one day or there are none: a table may then name the day once in its header and give each row
 * its time of day, and must date each row otherwise.
 *
 * @param wallMillis - Epoch milliseconds.
 */
export function commonWallDate(wallMillis: Iterable<number>): string | undefined {
  let day: string | undefined;
  for (const millis of wallMillis) {
    const next = formatWallDate(millis);
    if (day === undefined) day = next;
    else if (next !== day) return undefined;
  }
  return day;
}

/** How a table writes its column of wall times: see {@link wallTimeColumn}. */
export interface WallTimeColumn {
  /** The column's header: its name and the clock's zone, and the day when every row falls on it. */
  readonly header: string;
  /** A row's time: `HH:MM:SS.mmmZ` under a header that names the day, else dated. */
  readonly format: (wallMillis: number) => string;
}

/**
 * The wall-time column of a table of `wallMillis`: the header names the UTC day once when every
 * row falls on it (`time (2026-12-03, UTC)`, rows `22:31:46.080Z`), else each row is dated
 * (`time (UTC)`, rows `2026-12-03 22:31:46.080Z`), so a table of a log spanning days never shows a
 * time of no day.
 *
 * @param name - The column's name, e.g. `time`.
 * @param wallMillis - The rows' wall times, epoch milliseconds.
 */
export function wallTimeColumn(name: string, wallMillis: Iterable<number>): WallTimeColumn {
  const day = commonWallDate(wallMillis);
  return day === undefined
    ? { header: `${name} (UTC)`, format: formatWallDateTime }
    : { header: `${name} (${day}, UTC)`, format: formatWallTime };
}

/**
 * A duration for people: `850 ms`, `6.9 s`, `2 min 5 s`, `3 h 12 min`. Negative durations keep their sign.
 *
 * @param millis - Milliseconds.
 */
export function formatDuration(millis: number): string {
  if (!Number.isFinite(millis)) return '—';
  const sign = millis < 0 ? '-' : '';
  const ms = Math.abs(millis);
  if (ms < 1_000) return `${sign}${Math.round(ms)} ms`;
  if (ms < 60_000) return `${sign}${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms < 3_600_000) return `${sign}${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${sign}${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

/** A boot id shortened for display: its first 10 characters and `…` when longer. */
export function shortBootId(bootId: string): string {
  return bootId.length > 10 ? `${bootId.slice(0, 10)}…` : bootId;
}

/**
 * Both clocks of a logged event, e.g.
 * `12:01:03.120Z wall · coordinator boot 7f3a9c21e0… +5123 ms monotonic · position 1234`.
 */
export function describeStamp(stamp: ClockStamp): string {
  return `${formatWallTime(stamp.wallMillis)} wall · coordinator boot ${shortBootId(stamp.bootId)} +${formatMonotonic(stamp.atMillis)} monotonic · position ${stamp.position}`;
}

/** Monotonic milliseconds as `5123 ms` (three decimals dropped; it is a reading, not a duration to round). */
export function formatMonotonic(atMillis: number): string {
  return `${Math.round(atMillis)} ms`;
}
