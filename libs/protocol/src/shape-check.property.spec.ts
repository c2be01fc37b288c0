import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentRequestEnvelopeSchema } from './agent-link.js';
import { CoordinatorEventSchema } from './events.js';
import { AcquireBodySchema, ReleaseBodySchema, RenewBodySchema } from './http.js';
import { compileShapeCheck } from './shape-check.js';

/** The zod 4 definition fields this test's generator reads (`schema._zod.def`). */
interface Definition {
  readonly type: string;
  readonly checks?: readonly { readonly _zod: { readonly def: Record<string, unknown> } }[];
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly values?: readonly unknown[];
  readonly entries?: Readonly<Record<string, unknown>>;
}

const defOf = (schema: z.ZodType): Definition => (schema as unknown as { _zod: { def: Definition } })._zod.def;
const checksOf = (def: Definition): Record<string, unknown>[] => (def.checks ?? []).map((c) => c._zod.def);

/**
 * Values a schema accepts, drawn from its definition: ids by the id rule's pattern, numbers
 * inside their bounds, every optional field sometimes absent. Independent of the compiler under
 * test: it only produces candidates, and zod says whether each is valid.
 */
function valid(schema: z.ZodType): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  switch (def.type) {
    case 'string': {
      const checks = checksOf(def);
      const pattern = checks.find((c) => c['format'] === 'regex')?.['pattern'] as RegExp | undefined;
      const max = (checks.find((c) => c['check'] === 'max_length')?.['maximum'] as number | undefined) ?? 40;
      return (pattern === undefined ? fc.string() : fc.stringMatching(pattern)).filter(
        (s) => s.length >= 1 && s.length <= max,
      );
    }
    case 'number': {
      // multipleOf(1): zod also takes a few tiny non-integers (its float tolerance), which the check leaves to zod.
      const integer = checksOf(def).some(
        (c) => c['format'] === 'safeint' || (c['check'] === 'multiple_of' && c['value'] === 1),
      );
      const base = integer
        ? fc.oneof(fc.nat(1000), fc.maxSafeNat())
        : fc.oneof(fc.nat(1000), fc.double({ min: 0, max: 1e15, noNaN: true }));
      return base.filter((n) => schema.safeParse(n).success);
    }
    case 'boolean':
      return fc.boolean();
    case 'literal':
      return fc.constantFrom(...(def.values ?? []));
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries ?? {}));
    case 'optional':
      return fc.option(valid(def.innerType!), { nil: undefined });
    case 'array':
      return fc.array(valid(def.element!), { maxLength: 3 });
    case 'unknown':
      return fc.jsonValue();
    case 'object': {
      const fields = Object.entries(def.shape ?? {});
      return fc
        .tuple(...fields.map(([, field]) => valid(field)))
        .map((values) =>
          Object.fromEntries(fields.flatMap(([key], i) => (values[i] === undefined ? [] : [[key, values[i]]]))),
        );
    }
    default:
      throw new Error(`the test's generator does not know zod ${def.type}`);
  }
}

/** Values that break rules: wrong types, out of range, not integers, the id rule's edges, unknown shapes. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    true,
    '',
    ' a',
    'a ',
    'é',
    'x'.repeat(201),
    -1,
    0,
    0.5,
    -0.5,
    Number.MAX_SAFE_INTEGER + 1,
    2 ** 60,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '3',
    [],
    {},
    'stale',
    'coordinator-restarted',
  ),
  fc.jsonValue(),
);

/** Every object and array inside `value`, with the value itself. */
function containers(value: unknown): (Record<string, unknown> | unknown[])[] {
  if (value === null || typeof value !== 'object') return [];
  const inner = Object.values(value).flatMap(containers);
  return [value as Record<string, unknown>, ...inner];
}

/** A deep copy of `value` changed in one place: a field or element replaced, deleted, or an unknown key added. */
const mutated = (value: unknown): fc.Arbitrary<unknown> =>
  fc
    .tuple(fc.nat(), fc.nat(), fc.constantFrom('replace', 'delete', 'add'), wrongValue)
    .map(([which, key, how, replacement]) => {
      const copy = structuredClone(value);
      const targets = containers(copy);
      const target = targets[which % targets.length]!;
      const keys = Object.keys(target);
      if (how === 'add' || keys.length === 0) {
        (target as Record<string, unknown>)[Array.isArray(target) ? String(target.length) : `extra${key % 3}`] =
          replacement;
      } else if (how === 'delete') {
        delete (target as Record<string, unknown>)[keys[key % keys.length]!];
      } else {
        (target as Record<string, unknown>)[keys[key % keys.length]!] = replacement;
      }
      return copy;
    });

const members = CoordinatorEventSchema.options.map((schema) => [schema.shape.type.value, schema] as const);
/** The hot path's request schemas (HTTP bodies, the agent link's frame envelope): strict objects, `unknown`, multipleOf(1). */
const requests = [
  ['AcquireBodySchema', AcquireBodySchema],
  ['RenewBodySchema', RenewBodySchema],
  ['ReleaseBodySchema', ReleaseBodySchema],
  ['AgentRequestEnvelopeSchema', AgentRequestEnvelopeSchema],
] as const;

describe.each([
  ['every event type of the protocol', members],
  ['the request schemas', requests],
] as const)(
  'compileShapeCheck against zod, for %s',
  (_subjects, schemas: readonly (readonly [string, z.ZodType])[]) => {
    it.each(schemas)('%s: valid events pass both, and the check passes exactly what zod returns', (_type, schema) => {
      const check = compileShapeCheck(schema);
      fc.assert(
        fc.property(valid(schema), (event) => {
          const parsed = schema.safeParse(event);
          expect(parsed.success).toBe(true);
          expect(check(event)).toBe(true);
          expect(parsed.data).toStrictEqual(event);
        }),
        { numRuns: 200 },
      );
    });

    it.each(schemas)('%s: whenever zod refuses a mutated event, the check refuses it too', (_type, schema) => {
      const check = compileShapeCheck(schema);
      let refusedByZod = 0;
      fc.assert(
        fc.property(
          valid(schema).chain((event) => mutated(event)),
          (candidate) => {
            const parsed = schema.safeParse(candidate);
            if (!parsed.success) {
              refusedByZod += 1;
              expect(check(candidate)).toBe(false);
            } else if (check(candidate)) {
              // What the check passes is what zod would have returned: nothing stripped or changed.
              expect(parsed.data).toStrictEqual(candidate);
            }
          },
        ),
        { numRuns: 500 },
      );
      expect(refusedByZod).toBeGreaterThan(100); // the mutations do reach zod's rules
    });
  },
);

describe('compileShapeCheck on what the request schemas add', () => {
  it('refuses an unknown key that zod would strip, and a non-plain object, so the caller takes zod output', () => {
    const schema = z.object({ id: z.string() });
    const check = compileShapeCheck(schema);
    expect(check({ id: 'a' })).toBe(true);
    expect(check({ id: 'a', other: 1 })).toBe(false);
    expect(check(Object.assign(Object.create(null), { id: 'a' }))).toBe(false);
    expect(check(['a'])).toBe(false);
  });

  it('a strict object: any other key, an absent `unknown` key and a non-integer multipleOf(1) are left to zod, which refuses them', () => {
    const schema = z.strictObject({ body: z.unknown(), ttlMillis: z.number().multipleOf(1) });
    const check = compileShapeCheck(schema);
    expect(check({ body: { any: 1 }, ttlMillis: 5 })).toBe(true);
    for (const refused of [{ body: 1, ttlMillis: 5, other: 1 }, { ttlMillis: 5 }, { body: 1, ttlMillis: 5.5 }]) {
      expect(check(refused)).toBe(false);
      expect(schema.safeParse(refused).success).toBe(false);
    }
  });
});

describe('compileShapeCheck refuses to compile what it cannot check as strictly as zod', () => {
  it.each([
    ['a string format', z.object({ mail: z.email() }), '(root).mail'],
    ['a number multipleOf', z.number().multipleOf(2), '(root)'],
    ['a refinement', z.string().refine((s) => s !== 'x'), '(root)'],
    ['a passthrough object', z.looseObject({ a: z.string() }), '(root)'],
    ['a union', z.union([z.string(), z.number()]), '(root)'],
    ['a transform', z.string().transform((s) => s.length), '(root)'],
    ['a coerced number', z.coerce.number(), '(root)'],
    ['an ip address (a string schema that is its own check)', z.object({ at: z.ipv4() }), '(root).at'],
  ])('%s', (_label, schema, path) => {
    expect(() => compileShapeCheck(schema as z.ZodType)).toThrow(
      new RegExp(`^compileShapeCheck: ${path.replace(/[().]/g, '\\$&')}: cannot compile`),
    );
  });
});
