import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentRequestEnvelopeSchema } from './agent-link.js';
import { CoordinatorEventSchema } from './events.js';
import { AcquireBodySchema, ReleaseBodySchema, RenewBodySchema } from './http.js';
import { compileShapeCheck, compileShapeParser } from './shape-check.js';

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

/** JSON text changed in one place: a character inserted, deleted or replaced by one JSON gives a meaning to. */
const editedText = (text: string): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom('insert', 'delete', 'replace'),
      fc.constantFrom(
        ' ',
        '"',
        '\\',
        ',',
        ':',
        '{',
        '}',
        '[',
        '0',
        '1',
        '-',
        '+',
        '.',
        'e',
        'E',
        'x',
        'é',
        '\n',
        '\u0000',
      ),
    )
    .map(([at, how, character]) => {
      const index = at % (text.length + 1);
      if (how === 'insert') return text.slice(0, index) + character + text.slice(index);
      const rest = text.slice(index + 1);
      return text.slice(0, index) + (how === 'delete' ? '' : character) + rest;
    });

/** `JSON.parse(text)`, or `undefined` for text that is not JSON. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** Whatever the parser returns is what `JSON.parse` returns (same keys in the same order), and what the schema accepts as it is. */
function expectSameAsParseAndCheck(schema: z.ZodType, text: string, read: Record<string, unknown>): void {
  const parsed = parseJson(text);
  expect(read).toStrictEqual(parsed);
  expect(Object.keys(read)).toEqual(Object.keys(parsed as object));
  expect(compileShapeCheck(schema)(read)).toBe(true);
  expect(schema.safeParse(read)).toStrictEqual({ success: true, data: read });
}

describe('compileShapeParser against JSON.parse and zod, for every event type', () => {
  const dataSchemas = members.map(([type, schema]) => [type, schema.shape.data as z.ZodType] as const);

  /** Types whose data holds only scalars: their records can be read in one pass. */
  const flat = dataSchemas.filter(([type]) => type !== 'CoordinatorStarted' && type !== 'FenceRejected');

  it.each(dataSchemas)('%s: the text of a valid event reads as JSON.parse reads it', (type, schema) => {
    const parse = compileShapeParser(schema);
    let read = 0;
    fc.assert(
      fc.property(valid(schema), (data) => {
        const text = JSON.stringify(data);
        const result = parse(text);
        // The same text after a prefix, read from its start: the same answer.
        expect(parse(`7 1 {"x":1} ${text}`, 12)).toEqual(result);
        if (result === undefined) return;
        read += 1;
        expectSameAsParseAndCheck(schema, text, result);
      }),
      { numRuns: 200 },
    );
    // Ids with a quote or a backslash are escaped, and an absent optional field changes the keys: those are left to JSON.parse.
    if (flat.some(([flatType]) => flatType === type)) expect(read).toBeGreaterThan(50);
  });

  it.each(dataSchemas)(
    '%s: a text edited or holding a mutated event reads only as JSON.parse reads it and only when zod accepts it as it is',
    (_type, schema) => {
      const parse = compileShapeParser(schema);
      let refused = 0;
      fc.assert(
        fc.property(
          valid(schema).chain((data) =>
            fc.oneof(
              editedText(JSON.stringify(data)),
              mutated(data).map((changed) => JSON.stringify(changed) ?? ''),
            ),
          ),
          (text) => {
            const parsed = parseJson(text);
            const read = parse(text);
            if (parsed === undefined || !schema.safeParse(parsed).success) {
              refused += 1;
              expect(read).toBeUndefined();
            } else if (read !== undefined) {
              expectSameAsParseAndCheck(schema, text, read);
            }
          },
        ),
        { numRuns: 500 },
      );
      expect(refused).toBeGreaterThan(100); // the edits do reach JSON's grammar and zod's rules
    },
  );

  it('reads the records the coordinator writes: a grant, as JSON.stringify wrote it', () => {
    const [, granted] = members.find(([type]) => type === 'LeaseGranted')!;
    const data = {
      bootId: 'boot-1',
      atMillis: 0,
      wallMillis: 1796211206527,
      resource: 'deploy-slot/a',
      holderId: 'agent-7',
      fence: 12,
      requestId: 'q-0-0',
      ttlMillis: 600000,
      expiresAtMillis: 600000.5,
    };
    const text = JSON.stringify(data);
    const read = compileShapeParser(granted.shape.data)(text);
    expect(read).toBeDefined();
    expectSameAsParseAndCheck(granted.shape.data, text, read!);
  });
});

describe('compileShapeParser reads only what it can read exactly, and leaves the rest to JSON.parse', () => {
  const schema = z.object({ id: z.string(), n: z.number(), flag: z.boolean(), note: z.unknown() });
  const parse = compileShapeParser(schema);

  it.each([
    '{"id":"a","n":0,"flag":true,"note":null}',
    '{"id":"","n":-0,"flag":false,"note":1}',
    '{"id":"é ü","n":1e3,"flag":true,"note":"x"}',
    '{"id":"a","n":-12.5E-3,"flag":true,"note":false}',
    '{"id":"a","n":123456789012345,"flag":true,"note":0}',
    '{"id":"a","n":12345678901234567890,"flag":true,"note":0}',
    '{"id":"a","n":1.0347729999999729,"flag":true,"note":0}',
  ])('%s reads as JSON.parse reads it', (text) => {
    const read = parse(text);
    expect(read).toBeDefined();
    expectSameAsParseAndCheck(schema, text, read!);
    expect(Object.is(read!['n'], JSON.parse(text).n)).toBe(true); // -0 stays -0
  });

  it.each([
    ['another key order', '{"n":0,"id":"a","flag":true,"note":null}'],
    ['whitespace', '{"id":"a", "n":0,"flag":true,"note":null}'],
    ['an escape', '{"id":"a\\u0062","n":0,"flag":true,"note":null}'],
    ['a nested object', '{"id":"a","n":0,"flag":true,"note":{}}'],
    ['a missing key', '{"id":"a","n":0,"flag":true}'],
    ['an extra key', '{"id":"a","n":0,"flag":true,"note":null,"x":1}'],
    ['a repeated key', '{"id":"a","n":0,"flag":true,"note":null,"note":null}'],
    ['text after the object', '{"id":"a","n":0,"flag":true,"note":null} '],
    ['a leading zero', '{"id":"a","n":01,"flag":true,"note":null}'],
    ['a bare fraction', '{"id":"a","n":1.,"flag":true,"note":null}'],
    ['a plus sign', '{"id":"a","n":+1,"flag":true,"note":null}'],
    ['a sign alone', '{"id":"a","n":-,"flag":true,"note":null}'],
    ['an empty exponent', '{"id":"a","n":1e,"flag":true,"note":null}'],
    ['NaN', '{"id":"a","n":NaN,"flag":true,"note":null}'],
    ['a minus before a literal', '{"id":"a","n":-true,"flag":true,"note":null}'],
    ['a wrong type (the check refuses)', '{"id":1,"n":0,"flag":true,"note":null}'],
    ['an unterminated string', '{"id":"a'],
    ['a control character', '{"id":"a\u0001","n":0,"flag":true,"note":null}'],
  ])('%s: undefined', (_label, text) => {
    expect(parse(text)).toBeUndefined();
  });

  it('reads every string exactly, also among many of the same length read before it (its recent strings are compared, not trusted to a hash)', () => {
    // 5 000 distinct ids of 8 characters: more than the recent strings' slots, so several share one.
    const ids = Array.from({ length: 5000 }, (_, i) => `id-${i.toString(36).padStart(5, '0')}`);
    const textOf = (id: string): string => `{"id":${JSON.stringify(id)},"n":0,"flag":true,"note":null}`;
    for (const id of [...ids, ...ids.slice().reverse()]) expect(parse(textOf(id))?.['id']).toBe(id);
  });

  it('refuses to compile what is not an object, a key __proto__, and whatever compileShapeCheck cannot compile', () => {
    expect(() => compileShapeParser(z.string())).toThrow(/^compileShapeParser: \(root\): cannot compile/);
    expect(() => compileShapeParser(z.object({ ['__proto__']: z.string() }))).toThrow(
      /^compileShapeParser: \(root\)\.__proto__: cannot compile/,
    );
    expect(() => compileShapeParser(z.object({ mail: z.email() }))).toThrow(
      /^compileShapeCheck: \(root\)\.mail: cannot compile/,
    );
  });
});
