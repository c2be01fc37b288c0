import fc from 'fast-check';
import { idProblem, isId, requireId } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { IdSchema, MAX_ID_LENGTH } from './events.js';

/** Strings near every edge of the id rule: empty, printable ASCII, spaces at the ends, control and non-ASCII characters, and lengths around the limit. */
const candidates = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ unit: fc.constantFrom(' ', 'a', '~', '!', '\t', '\u007f', 'é'), maxLength: 6 }),
  fc
    .tuple(fc.integer({ min: MAX_ID_LENGTH - 2, max: MAX_ID_LENGTH + 2 }), fc.constantFrom('x', ' ', 'é'))
    .map(([length, last]) => 'x'.repeat(length - 1) + last),
);

describe('the id rule, written once in lease-fence', () => {
  it('accepts and refuses exactly the same strings in the library (requireId) and on the wire (IdSchema), with the same reason', () => {
    fc.assert(
      fc.property(candidates, (value) => {
        const wire = IdSchema.safeParse(value);
        let libraryError: unknown;
        try {
          requireId('test', 'id', value);
        } catch (error) {
          libraryError = error;
        }
        expect(libraryError === undefined).toBe(wire.success);
        expect(isId(value)).toBe(wire.success);
        if (!wire.success) expect(wire.error.issues[0]?.message).toBe(idProblem(value));
      }),
      { numRuns: 2_000, seed: 20261201 },
    );
  });

  it.each([
    ['agent-a', true],
    ['repo:web/deploy-slot', true],
    ['a b', true],
    ['x'.repeat(MAX_ID_LENGTH), true],
    ['', false],
    [' lead', false],
    ['trail ', false],
    ['x'.repeat(MAX_ID_LENGTH + 1), false],
    ['caf\u00e9', false],
  ])('decides %j the same on both sides (%s)', (value, accepted) => {
    expect(IdSchema.safeParse(value).success).toBe(accepted);
    expect(isId(value)).toBe(accepted);
  });
});
