/**
 * How the coordinator supervisor (`coordinator-supervisor.ts`) waits before its next attempt to reach the event log and
 * re-open the coordinator: capped exponential backoff with jitter, so a fleet of coordinators
 * that lost one server does not come back in lock-step.
 */
import { isIntegerInRange } from 'lease-fence';

/** Options of {@link createReopenBackoff}. */
export interface ReopenBackoffOptions {
  /** Upper bound of the first wait (milliseconds). Positive integer. */
  readonly initialDelayMillis: number;
  /** Upper bound of every wait (milliseconds). Integer ≥ `initialDelayMillis`. */
  readonly maxDelayMillis: number;
  /** Uniform random number in [0, 1). @defaultValue Math.random */
  readonly random?: () => number;
}

/** Waits between attempts; see {@link createReopenBackoff}. */
export interface ReopenBackoff {
  /**
   * The wait before the attempt that follows `failures` consecutive failures (milliseconds,
   * integer): `ceiling = min(maxDelayMillis, initialDelayMillis × 2^(failures - 1))`, then a
   * uniform pick in [ceiling / 2, ceiling] ("equal jitter": it still grows, and never bunches at 0).
   * @throws RangeError when `failures` is not a positive integer.
   */
  delayMillis(failures: number): number;
}

/**
 * Creates the supervisor's backoff policy, e.g. 100 ms → 5 s: waits of 50–100, 100–200, 200–400 ms, …,
 * then 2.5–5 s for good.
 * @throws RangeError naming the option when a delay is not a positive integer or
 *   `initialDelayMillis > maxDelayMillis`.
 */
export function createReopenBackoff(options: ReopenBackoffOptions): ReopenBackoff {
  const { initialDelayMillis, maxDelayMillis } = options;
  const random = options.random ?? Math.random;
  for (const [field, value] of [
    ['initialDelayMillis', initialDelayMillis],
    ['maxDelayMillis', maxDelayMillis],
  ] as const) {
    if (!isIntegerInRange(value, 1))
      throw new RangeError(
        `createReopenBackoff: ${field} must be a positive integer (milliseconds), got ${String(value)}`,
      );
  }
  if (initialDelayMillis > maxDelayMillis) {
    throw new RangeError(
      `createReopenBackoff: initialDelayMillis must be ≤ maxDelayMillis (${maxDelayMillis} ms), got ${initialDelayMillis}`,
    );
  }
  return {
    delayMillis(failures) {
      if (!isIntegerInRange(failures, 1))
        throw new RangeError(`ReopenBackoff.delayMillis: failures must be a positive integer, got ${String(failures)}`);
      // 2^(failures - 1) overflows to Infinity for large counts; min() caps it either way.
      const ceiling = Math.min(maxDelayMillis, initialDelayMillis * 2 ** Math.min(failures - 1, 52));
      return Math.round(ceiling / 2 + random() * (ceiling / 2));
    },
  };
}
