import type { Instant } from './instant.js';

/**
 * A source of {@link Instant}s, all in one clock domain. Readings never go backwards.
 * Implementations: {@link createMonotonicClock} (production), {@link createManualClock} (tests),
 * {@link guardClock} (wraps any millisecond source).
 *
 * @see docs/design.md § "The library's rules" (Instant)
 */
export interface Clock {
  /** The domain stamped on every instant this clock returns. */
  readonly domain: string;
  /**
   * The current reading, in this clock's domain.
   * @throws {@link ClockReadingError} from guarded sources, on a NaN, infinite or backwards reading.
   */
  now(): Instant;
}
