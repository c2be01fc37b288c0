import type { Clock } from './clock.js';
import { guardClock } from './guard-clock.js';

/**
 * A production clock backed by `process.hrtime.bigint()` (monotonic: unaffected by wall-clock
 * steps). Readings are milliseconds since this clock was created, as a float with sub-millisecond
 * precision, so the first reading is close to 0. Guarded like {@link guardClock}.
 *
 * The domain must be unique per process lifetime (a boot id, for example): two monotonic clocks
 * of different processes have unrelated origins.
 *
 * @param domain - The domain stamped on every reading. Non-empty.
 * @throws TypeError if `domain` is empty.
 * @see docs/design.md § "The library's rules" (createMonotonicClock reads process.hrtime.bigint)
 */
export function createMonotonicClock(domain: string): Clock {
  const origin = process.hrtime.bigint();
  return guardClock(domain, () => Number(process.hrtime.bigint() - origin) / 1e6);
}
