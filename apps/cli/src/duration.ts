/**
 * The one duration parser of the command line and the MCP server: `500ms`, `30s`, `2m`, `1h`.
 *
 * Hand-written rather than taken from `ms` (vercel/ms): `ms` also accepts bare numbers, decimals
 * (`1.5h`), negative values and long unit words, so a typo such as `30` (meant as seconds) would
 * silently become 30 milliseconds. A lease's TTL and a wait are too important for that: here a
 * duration is a whole number followed by exactly one of four units, and anything else is refused
 * with a message that names the flag.
 */
import { MAX_TIMER_MILLIS } from '@lease-fence/client';
import { z } from 'zod';

/** Milliseconds per unit of a duration. */
const UNIT_MILLIS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

// Any number of digits: a value too long for a timer is refused as that, not as a syntax error.
const DURATION = /^(\d+)(ms|s|m|h)$/;

/** The syntax, as error messages and `--help` say it. */
export const DURATION_SYNTAX = 'a whole number with a unit: 500ms, 30s, 2m or 1h';

/**
 * Parses a duration into milliseconds.
 *
 * @param text - A whole number and a unit (`ms`, `s`, `m`, `h`), no spaces: `500ms`, `30s`, `2m`.
 * @returns The duration in milliseconds (an integer from 0 to `MAX_TIMER_MILLIS`, 2^31 - 1).
 * @throws RangeError when `text` is not of that form (the message quotes it and gives the syntax),
 *   or is longer than the longest timer.
 */
export function parseDurationMillis(text: string): number {
  const match = DURATION.exec(text.trim());
  if (match === null) throw new RangeError(`must be ${DURATION_SYNTAX}, got ${JSON.stringify(text)}`);
  const [, amount, unit] = match as unknown as [string, string, keyof typeof UNIT_MILLIS];
  const millis = Number(amount) * UNIT_MILLIS[unit];
  // Every duration here ends up in a timer (a TTL, a wait, a grace, a skew); Node fires a longer
  // setTimeout at once, and the SDK refuses such a TTL only after the flags were accepted.
  if (millis > MAX_TIMER_MILLIS) {
    throw new RangeError(
      `must be at most ${MAX_TIMER_MILLIS}ms (about ${Math.floor(MAX_TIMER_MILLIS / UNIT_MILLIS.h)}h, the longest timer), got ${JSON.stringify(text)}`,
    );
  }
  return millis;
}

/**
 * A zod schema of a duration string (the form {@link parseDurationMillis} accepts), parsed to
 * milliseconds, for settings read from flags, the environment or MCP tool inputs.
 */
export const DurationMillisSchema = z.string().transform((text, context) => {
  try {
    return parseDurationMillis(text);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});
