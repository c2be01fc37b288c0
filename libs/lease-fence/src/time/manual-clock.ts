import { requireClockDomain, requireMillis } from '../validate.js';
import type { Clock } from './clock.js';
import { Instant } from './instant.js';

/**
 * A {@link Clock} for tests: time moves only when told to, and optionally by `stepPerRead` on
 * every read, so the gap between a validity check and the write after it is reproducible.
 *
 * @see docs/design.md § "The library's rules" (createManualClock advances on every read)
 */
export interface ManualClock extends Clock {
  /**
   * Returns the current reading, then moves the clock forward by `stepPerRead` milliseconds.
   */
  now(): Instant;
  /**
   * Moves the clock forward.
   * @param ms - Milliseconds to advance; finite and non-negative.
   * @throws RangeError if `ms` is negative, NaN or infinite (time never runs backwards).
   */
  advance(ms: number): void;
  /** The current reading, without stepping: for assertions that must not move time. */
  peek(): Instant;
}

/** Options of {@link createManualClock}. @see docs/design.md § "The library's rules" (createManualClock) */
export interface ManualClockOptions {
  /** First reading, in milliseconds. Finite. @defaultValue 0 */
  readonly start?: number;
  /** Milliseconds added after every `now()`. Finite, non-negative. @defaultValue 0 */
  readonly stepPerRead?: number;
}

/**
 * Creates a {@link ManualClock}.
 *
 * @param domain - The domain stamped on every reading. Non-empty.
 * @param options - `start` (ms, default 0) and `stepPerRead` (ms, default 0).
 * @throws TypeError if `domain` is empty; RangeError if `start` is not finite or `stepPerRead`
 *   is negative or not finite.
 * @see docs/design.md § "The library's rules" (createManualClock)
 * @example
 * ```ts
 * const clock = createManualClock('agent-a', { stepPerRead: 30 });
 * clock.now().millis; // 0
 * clock.now().millis; // 30
 * ```
 */
export function createManualClock(domain: string, options: ManualClockOptions = {}): ManualClock {
  const api = 'createManualClock';
  requireClockDomain(api, 'domain', domain);
  const start = options.start ?? 0;
  const stepPerRead = options.stepPerRead ?? 0;
  requireMillis(api, 'options.start', start);
  requireMillis(api, 'options.stepPerRead', stepPerRead, 0);
  let current = start;
  return Object.freeze({
    domain,
    now(): Instant {
      const reading = Instant.of(current, domain);
      current += stepPerRead;
      return reading;
    },
    advance(ms: number): void {
      requireMillis('ManualClock.advance', 'ms', ms, 0);
      current += ms;
    },
    peek(): Instant {
      return Instant.of(current, domain);
    },
  });
}
