/**
 * Sizes of the black-box reliability probes, short (in `npm test`) or long (`npm run probes --
 * --long`, which sets `LEASE_FENCE_PROBES=long`), and the one way a probe prints its figures.
 */
import fc from 'fast-check';

/** How hard the probes push: `short` keeps `npm test` quick, `long` is the figure-producing run. */
export type ProbeLength = 'short' | 'long';

/** The length chosen by `LEASE_FENCE_PROBES` (`long`, anything else = `short`). */
export const PROBE_LENGTH: ProbeLength = process.env['LEASE_FENCE_PROBES'] === 'long' ? 'long' : 'short';

/** Picks the short or the long value. */
export const bySize = <T>(short: T, long: T): T => (PROBE_LENGTH === 'long' ? long : short);

/**
 * The seed of every random choice a probe makes (kill points, fuzz inputs): `LEASE_FENCE_PROBES_SEED`
 * when set, else a fixed default, so a run is reproducible. Printed with the figures.
 */
export const PROBE_SEED: number = (() => {
  const given = process.env['LEASE_FENCE_PROBES_SEED'];
  if (given === undefined || given === '') return 20_261_201;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`LEASE_FENCE_PROBES_SEED must be an integer, got ${given}`);
  return seed;
})();

/**
 * Prints one line of figures, `probe <name> (<length>, seed <seed>): key=value …`, on stdout,
 * where `npm run probes` (and vitest) show it. docs/operations.md § "Reliability: black-box probes" quotes these lines.
 */
export function reportFigures(name: string, figures: Readonly<Record<string, string | number>>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  console.log(`probe ${name} (${PROBE_LENGTH}, seed ${PROBE_SEED}): ${text}`);
}

/**
 * `count` seeded integers in `[min, max]` (fast-check's generator, so a seed reproduces the run).
 * The probes draw their kill points and load choices from these.
 */
export const seededIntegers = (seed: number, count: number, min: number, max: number): readonly number[] =>
  fc.sample(fc.integer({ min, max }), { seed, numRuns: count });

/** Resolves after `millis` milliseconds (pacing load, never synchronising on it). */
export const pause = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/**
 * How long a probe waits for a coordinator to log `ready` (milliseconds). Generous: on 2 shared
 * cores under the probes' own load a start has taken over 30 s.
 */
export const PROBE_START_TIMEOUT_MILLIS = 120_000;
