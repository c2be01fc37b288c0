/**
 * Test helper: fast-check parameters with the seed taken from `FC_SEED` when set,
 * so a failure printed by fast-check can be replayed with `FC_SEED=<seed> npx vitest run <file>`.
 *
 * @internal
 */
import type { Parameters } from 'fast-check';

/** @internal `{ seed? , numRuns }` for `fc.assert`. */
export function fcParameters<T>(numRuns: number): Parameters<T> {
  const raw = process.env['FC_SEED'];
  const seed = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : undefined;
  return seed === undefined || !Number.isInteger(seed) ? { numRuns } : { numRuns, seed };
}

/**
 * The timeout to give `it(…)` for a property test: none (vitest reads 0 as no limit). Its budget
 * is the `numRuns` given to {@link fcParameters}, the same work on every machine; a wall-clock
 * limit only made the heavier properties fail on a loaded machine.
 */
export const NO_WALL_CLOCK_TIMEOUT = 0;
