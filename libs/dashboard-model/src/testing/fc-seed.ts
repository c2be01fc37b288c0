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
