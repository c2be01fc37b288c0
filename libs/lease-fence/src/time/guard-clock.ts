import { ClockReadingError } from '../errors.js';
import { requireClockDomain, requireFunction } from '../validate.js';
import type { Clock } from './clock.js';
import { Instant } from './instant.js';

/**
 * Wraps a millisecond source as a {@link Clock} that refuses bad readings: NaN, ±Infinity, or
 * a reading below the previous accepted one throws {@link ClockReadingError} (and is not kept).
 * A wall clock such as `Date.now` steps backwards when the host resyncs, and a backwards step
 * silently lengthens how long a holder believes it owns a lease; this turns it into an error.
 *
 * @param domain - The domain stamped on every reading. Non-empty.
 * @param read - Returns the current reading in milliseconds. Called once per `now()`.
 * @throws TypeError if `domain` is empty or `read` is not a function.
 * @see docs/design.md § "The library's rules" (Clock sources are guarded)
 * @example
 * ```ts
 * const wall = guardClock('host-wall', () => Date.now());
 * ```
 */
export function guardClock(domain: string, read: () => number): Clock {
  requireClockDomain('guardClock', 'domain', domain);
  requireFunction('guardClock', 'read', read);
  let previous = Number.NEGATIVE_INFINITY;
  return Object.freeze({
    domain,
    now(): Instant {
      const reading = read();
      if (typeof reading !== 'number' || !Number.isFinite(reading)) {
        throw new ClockReadingError(domain, reading, 'not-finite', Number.isFinite(previous) ? previous : undefined);
      }
      if (reading < previous) throw new ClockReadingError(domain, reading, 'backwards', previous);
      previous = reading;
      return Instant.of(reading, domain);
    },
  });
}
