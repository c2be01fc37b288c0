/**
 * A small seeded random source for the demo's choices (which slot, how long a model call, whether
 * to stall), so a run's decisions can be replayed with `DEMO_SEED`. Timing still varies.
 */

/** Uniform numbers in [0, 1) and helpers on top. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max]. */
  integer(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/**
 * mulberry32: a 32-bit generator, plenty for a demo (not for anything secret).
 * @param seed - Any integer; the same seed gives the same sequence.
 */
export const createRandom = (seed: number): Random => {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('Random.pick: items must not be empty');
      return items[Math.floor(next() * items.length)] as T;
    },
  };
};
