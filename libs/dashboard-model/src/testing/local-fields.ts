/**
 * The calendar fields of an instant as a wall clock in `timeZone` shows them, read from `Intl`
 * directly: the independent answer tests compare the _Jump to_ parser (`../jump-target.ts`) with,
 * so it must not call the parser's own conversion.
 *
 * @param wallMillis - the instant, milliseconds since the Unix epoch.
 * @param timeZone - an IANA zone name (`Europe/Berlin`).
 * @returns `date` as `YYYY-MM-DD` and `time` as `HH:MM:SS.mmm` (24-hour), the input's local form.
 * @throws `RangeError` for a zone `Intl` does not know.
 */
export function localFieldsIn(wallMillis: number, timeZone: string): { date: string; time: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(wallMillis))
      .map((part) => [part.type, part.value]),
  );
  const millis = String(wallMillis % 1_000).padStart(3, '0');
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    time: `${parts.hour}:${parts.minute}:${parts.second}.${millis}`,
  };
}
