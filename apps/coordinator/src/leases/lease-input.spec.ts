import { AcquireBodySchema } from '@lease-fence/protocol';
import fc from 'fast-check';
import { isTtlMillis, MAX_TTL_MILLIS, requireTtlMillis, type TtlBounds } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../http/invalid-request.error.js';
import { checkTtlMillis } from './lease-input.js';

/** Does the service's edge (the body schema, then the configured bounds) take `ttlMillis`? */
function acceptedAtTheEdge(ttlMillis: number, bounds: TtlBounds): boolean {
  const parsed = AcquireBodySchema.safeParse({ requestId: 'r-1', ttlMillis });
  if (!parsed.success) return false;
  try {
    checkTtlMillis(parsed.data.ttlMillis, bounds);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return false;
  }
}

/** Does the library's rule take `ttlMillis` (both its predicate and its check)? */
function acceptedByTheLibrary(ttlMillis: number, bounds: TtlBounds): boolean {
  let threw = false;
  try {
    requireTtlMillis('test', 'ttlMillis', ttlMillis, bounds);
  } catch {
    threw = true;
  }
  expect(isTtlMillis(ttlMillis, bounds)).toBe(!threw);
  return !threw;
}

const bounds = fc
  .tuple(fc.integer({ min: 1, max: MAX_TTL_MILLIS }), fc.integer({ min: 1, max: MAX_TTL_MILLIS }))
  .map(([a, b]): TtlBounds => ({ minTtlMillis: Math.min(a, b), maxTtlMillis: Math.max(a, b) }));

/** TTLs around the bounds and everywhere else: integers, fractions, huge and unsafe numbers, NaN, ±Infinity, -0. */
const ttlNear = (b: TtlBounds): fc.Arbitrary<number> =>
  fc.oneof(
    fc.constantFrom(b.minTtlMillis - 1, b.minTtlMillis, b.maxTtlMillis, b.maxTtlMillis + 1, b.minTtlMillis + 0.5),
    fc.integer({ min: -10, max: MAX_TTL_MILLIS + 10 }),
    fc.double(),
    fc.constantFrom(0, -0, 1e20, 2 ** 53, 2 ** 53 + 2, Number.NaN, Number.POSITIVE_INFINITY, -1),
  );

describe('the TTL rule, written once in lease-fence', () => {
  it('the service edge (schema + configured bounds) accepts exactly the TTLs the library rule accepts', () => {
    fc.assert(
      fc.property(
        bounds.chain((b) => fc.tuple(fc.constant(b), ttlNear(b))),
        ([b, ttlMillis]) => {
          expect(acceptedAtTheEdge(ttlMillis, b)).toBe(acceptedByTheLibrary(ttlMillis, b));
        },
      ),
      { numRuns: 2_000, seed: 20261201 },
    );
  });

  it('names ttlMillis and the configured bounds when a TTL is out of range', () => {
    expect(() => checkTtlMillis(60_001, { minTtlMillis: 100, maxTtlMillis: 60_000 })).toThrow(
      'ttlMillis: is out of range: must be between 100 and 60000 milliseconds',
    );
  });
});
