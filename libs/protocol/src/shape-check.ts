/**
 * A fast yes/no check compiled from a zod schema of this package: the same rules, read from the
 * schema's own definition, without zod's issue objects or its copy of the output. Replay uses it
 * to check every stored record at the speed of reading it; whenever it answers `false` the
 * caller runs the zod schema itself, which either accepts (and strips what the quick check
 * refused to pass through, such as an unknown key) or names the field that is wrong.
 *
 * Hand-compiled rather than a JSON-Schema validator (ajv over `z.toJSONSchema`): the schemas
 * here use a handful of zod kinds, each rule below is read from the schema's own definition (so
 * there is one copy of it), and any kind or check this compiler does not know makes
 * {@link compileShapeCheck} throw instead of checking less. `shape-check.property.spec.ts`
 * checks it against zod on arbitrary valid and mutated events.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Recovery)
 */
import type { z } from 'zod';

/**
 * `true` only for a value the schema accepts and whose parsed form is the value itself (no key
 * stripped, nothing transformed); `false` says nothing more: ask the schema.
 */
export type ShapeCheck = (value: unknown) => boolean;

/** The parts of a zod 4 definition this compiler reads (`schema._zod.def`). */
interface Definition {
  readonly type: string;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDefinition } }[];
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly catchall?: unknown;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly values?: readonly unknown[];
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly coerce?: boolean;
}

/** The parts of a zod 4 check definition this compiler reads. */
interface CheckDefinition {
  readonly check: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly value?: number;
  readonly inclusive?: boolean;
  readonly format?: string;
  readonly pattern?: RegExp;
}

/**
 * Compiles `schema` into a {@link ShapeCheck}: for objects, every known key is checked and any
 * other key makes the check answer `false` (zod would strip it: the caller then takes zod's output).
 *
 * Kinds understood: object (strip mode, or strict: zod refuses the other key, and the caller's
 * zod parse then names it), string (min/max length, regex), number (finite; integer as `safeint`
 * or as a multiple of 1; greater/less than, inclusive or not), boolean, literal, enum of strings,
 * optional, array, unknown (any value but undefined, passed through as zod passes it).
 *
 * @throws `TypeError` naming the path and the zod kind or check it cannot compile (a schema
 *   changed in a way this compiler must learn first: it never checks less than zod).
 */
export function compileShapeCheck(schema: z.ZodType): ShapeCheck {
  return compile(schema, '(root)');
}

function compile(schema: z.ZodType, path: string): ShapeCheck {
  const def = (schema as unknown as { _zod: { def: Definition } })._zod.def;
  if (def.coerce === true) throw unsupported(path, `coerced ${def.type}`);
  switch (def.type) {
    case 'string':
      return compileString(def, path);
    case 'number':
      return compileNumber(def, path);
    case 'boolean':
      noChecks(def, path);
      return (value) => typeof value === 'boolean';
    case 'literal': {
      noChecks(def, path);
      const values = def.values ?? [];
      return (value) => values.includes(value);
    }
    case 'enum': {
      noChecks(def, path);
      const values = Object.values(def.entries ?? {});
      if (values.some((value) => typeof value !== 'string')) throw unsupported(path, 'enum with non-string values');
      const allowed = new Set(values);
      return (value) => typeof value === 'string' && allowed.has(value);
    }
    case 'optional': {
      noChecks(def, path);
      const inner = compile(def.innerType!, path);
      return (value) => value === undefined || inner(value);
    }
    case 'array': {
      noChecks(def, path);
      const element = compile(def.element!, `${path}[]`);
      return (value) => {
        if (!Array.isArray(value)) return false;
        for (const item of value) if (!element(item)) return false;
        return true;
      };
    }
    case 'object':
      return compileObject(def, path);
    case 'unknown':
      noChecks(def, path);
      // zod 4 wants an object's `unknown` key present; an absent key reads as undefined here, so
      // undefined is left to zod.
      return (value) => value !== undefined;
    default:
      throw unsupported(path, def.type);
  }
}

function compileObject(def: Definition, path: string): ShapeCheck {
  noChecks(def, path);
  // A strict object's catchall is `never`: an other key fails it, as it fails this check.
  const strict = (def.catchall as { _zod?: { def?: { type?: string } } } | undefined)?._zod?.def?.type === 'never';
  if (def.catchall !== undefined && !strict) throw unsupported(path, 'object with a catchall (passthrough)');
  const fields = Object.entries(def.shape ?? {}).map(
    ([key, field]) => [key, compile(field, `${path}.${key}`)] as const,
  );
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    let present = 0;
    for (const [key, check] of fields) {
      const field = record[key];
      if (!check(field)) return false;
      if (field !== undefined) present += 1;
    }
    // Any other key (or one set to undefined) is something zod would strip: not for this check.
    let keys = 0;
    for (const _key in record) keys += 1;
    return keys === present && Object.getPrototypeOf(record) === Object.prototype;
  };
}

function compileString(def: Definition, path: string): ShapeCheck {
  let minimum = 0;
  let maximum = Number.POSITIVE_INFINITY;
  const patterns: RegExp[] = [];
  for (const check of checksOf(def)) {
    if (check.check === 'min_length') minimum = Math.max(minimum, check.minimum!);
    else if (check.check === 'max_length') maximum = Math.min(maximum, check.maximum!);
    else if (check.check === 'string_format' && check.format === 'regex' && check.pattern !== undefined)
      patterns.push(check.pattern);
    else throw unsupported(path, `string check ${check.check}${check.format === undefined ? '' : ` ${check.format}`}`);
  }
  return (value) => {
    if (typeof value !== 'string' || value.length < minimum || value.length > maximum) return false;
    for (const pattern of patterns) {
      pattern.lastIndex = 0; // as zod does: a global or sticky pattern keeps state between tests
      if (!pattern.test(value)) return false;
    }
    return true;
  };
}

function compileNumber(def: Definition, path: string): ShapeCheck {
  let safeInteger = false;
  let integer = false;
  let above = Number.NEGATIVE_INFINITY; // value must be > above, or >= when aboveInclusive
  let aboveInclusive = true;
  let below = Number.POSITIVE_INFINITY;
  let belowInclusive = true;
  for (const check of checksOf(def)) {
    if (check.check === 'number_format' && check.format === 'safeint') safeInteger = true;
    // Every integer is a multiple of 1 to zod (its float-safe remainder); a few non-integers within
    // its tolerance are too, and those are left to zod.
    else if (check.check === 'multiple_of' && check.value === 1) integer = true;
    else if (check.check === 'greater_than' && check.value !== undefined) {
      if (check.value > above || (check.value === above && check.inclusive !== true)) {
        above = check.value;
        aboveInclusive = check.inclusive === true;
      }
    } else if (check.check === 'less_than' && check.value !== undefined) {
      if (check.value < below || (check.value === below && check.inclusive !== true)) {
        below = check.value;
        belowInclusive = check.inclusive === true;
      }
    } else
      throw unsupported(path, `number check ${check.check}${check.format === undefined ? '' : ` ${check.format}`}`);
  }
  return (value) =>
    typeof value === 'number' &&
    Number.isFinite(value) && // zod's number refuses NaN and ±Infinity
    (!safeInteger || Number.isSafeInteger(value)) &&
    (!integer || Number.isInteger(value)) &&
    (aboveInclusive ? value >= above : value > above) &&
    (belowInclusive ? value <= below : value < below);
}

/**
 * The check definitions of `def`, with `def` itself first when it is a check too (zod 4's
 * `z.email()`, `z.int()`: a schema that is also a check). A check's `when` (zod's condition for
 * running it) is not read: it can only make zod skip a check, so applying every check is at
 * least as strict as zod.
 */
function checksOf(def: Definition): CheckDefinition[] {
  const own = (def as Partial<CheckDefinition>).check === undefined ? [] : [def as unknown as CheckDefinition];
  return [...own, ...(def.checks ?? []).map(({ _zod }) => _zod.def)];
}

function noChecks(def: Definition, path: string): void {
  if (checksOf(def).length > 0) throw unsupported(path, `${def.type} with checks`);
}

const unsupported = (path: string, what: string): TypeError =>
  new TypeError(
    `compileShapeCheck: ${path}: cannot compile a zod ${what}; teach libs/protocol/src/shape-check.ts first`,
  );

/**
 * JSON text to the object it holds, checked in the same pass: the object only when the schema
 * accepts it as it is; `undefined` says nothing more (run `JSON.parse`, the {@link ShapeCheck}
 * and zod). `start` (default 0) is the index in `text` where the JSON text begins; it runs to
 * the end of `text`. A reader that holds a record's JSON at the end of a longer text (the SQLite
 * adapter's row text, `libs/event-log-sqlite/src/event-row-text.ts`) passes its start instead of
 * slicing it out: a sliced string costs every character read through it (about a third more
 * per record, BENCHMARKS.md "raw rows or one text per row").
 */
export type ShapeParser = (text: string, start?: number) => Record<string, unknown> | undefined;

/**
 * Compiles an object schema into a {@link ShapeParser}: reading a stored record and checking it
 * in one pass over its text, for the records a replay reads by the million. It returns an
 * object only when `text` (from `start`) is exactly what `JSON.stringify` writes for a value the schema accepts
 * as it is: `{`, every key of the schema once, in the schema's order, no whitespace, each value
 * a string without escapes, a number, `true`, `false` or `null` that the field's compiled check
 * ({@link compileShapeCheck}) passes, then `}` at the end of the text. That object equals what
 * `JSON.parse(text)` returns (same keys in the same order, same values), and the schema's
 * {@link ShapeCheck} passes it. Anything else (an escape, whitespace, another key order, a
 * missing, extra or repeated key, a nested object or array, a value the check refuses, text
 * that is not JSON) returns `undefined`, and the caller parses and checks the text as before:
 * this is a shortcut for the common case, never a second set of rules.
 *
 * Hand-written because JSON validators (ajv and the like) start from parsed JSON: on the
 * records of a replay, `JSON.parse` and then the check cost about 1.2 µs per record, this
 * 0.7 µs (figures in the commit that introduced it). The object is built by a function
 * generated from the schema's keys (`new Function`, keys written as JSON string literals): an
 * object literal has one fixed shape, where storing keys one by one into an object was
 * measured 40 % slower.
 *
 * @throws `TypeError` as {@link compileShapeCheck} does for a kind or check it cannot compile,
 *   and for a schema that is not an object or has a `__proto__` key.
 */
export function compileShapeParser(schema: z.ZodType): ShapeParser {
  const def = (schema as unknown as { _zod: { def: Definition } })._zod.def;
  if (def.type !== 'object') {
    throw new TypeError(
      `compileShapeParser: (root): cannot compile a zod ${def.type}: only an object is read in one pass`,
    );
  }
  compileShapeCheck(schema); // throws for whatever the check cannot compile
  const fields = Object.entries(def.shape ?? {}).map(([key, field]) => {
    // In an object literal `"__proto__": v` sets the prototype; JSON.parse makes an own key.
    if (key === '__proto__')
      throw new TypeError('compileShapeParser: (root).__proto__: cannot compile the key __proto__');
    return { head: `${JSON.stringify(key)}:`, check: compile(field, `(root).${key}`) };
  });
  // Generated from the schema's own keys only, each written as a JSON string literal.
  const build = new Function(
    'values',
    `return {${Object.keys(def.shape ?? {})
      .map((key, i) => `${JSON.stringify(key)}: values[${i}]`)
      .join(', ')}};`,
  ) as (values: readonly unknown[]) => Record<string, unknown>;
  const values: unknown[] = fields.map(() => undefined);
  const cursor: TokenCursor = { end: 0 };
  return (text, start = 0) => {
    if (text.charCodeAt(start) !== OPEN_BRACE) return undefined;
    let at = start + 1;
    for (let i = 0; i < fields.length; i += 1) {
      if (i > 0) {
        if (text.charCodeAt(at) !== COMMA) return undefined;
        at += 1;
      }
      const { head, check } = fields[i]!;
      if (!text.startsWith(head, at)) return undefined;
      const value = scalarAt(text, at + head.length, cursor);
      if (value === NOT_A_SCALAR || !check(value)) return undefined;
      values[i] = value;
      at = cursor.end;
    }
    return text.charCodeAt(at) === CLOSE_BRACE && at + 1 === text.length ? build(values) : undefined;
  };
}

/** Where the token {@link scalarAt} read ends (the index after it). */
interface TokenCursor {
  end: number;
}

/** {@link scalarAt}'s answer for a token it does not read (an object, an array, an escape, not JSON). */
const NOT_A_SCALAR: unique symbol = Symbol('not a scalar');

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const PLUS = 0x2b;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_T = 0x74;
const SPACE = 0x20;
const UPPER_E = 0x45;
/** Digits of a JSON integer that are always exact as a double (10^15 < 2^53), summed as read. */
const EXACT_DIGITS = 15;

/** `true` for the character code of a decimal digit (`NaN`, past the end of a text, is not one). */
const isDigit = (code: number): boolean => code >= ZERO && code <= NINE;

/**
 * The JSON scalar starting at `start` in `text`, its end in `cursor.end`: a string without
 * escapes or control characters (the characters between the quotes, as `JSON.parse` returns
 * them; an equal string read recently, {@link RECENT_STRINGS}, is returned again), a number by JSON's grammar (the same double as `JSON.parse`: digits summed when they
 * are exact, `Number` of the token otherwise, which rounds as `JSON.parse` does), `true`,
 * `false`, `null`; {@link NOT_A_SCALAR} for anything else.
 */
function scalarAt(text: string, start: number, cursor: TokenCursor): unknown {
  let code = text.charCodeAt(start);
  if (code === QUOTE) {
    let hash = 0;
    for (let at = start + 1; ; at += 1) {
      code = text.charCodeAt(at);
      if (code === QUOTE) {
        cursor.end = at + 1;
        const length = at - start - 1;
        const slot = (hash ^ length) & (RECENT_STRINGS_SIZE - 1);
        const recent = RECENT_STRINGS[slot];
        if (recent !== undefined && recent.length === length && text.startsWith(recent, start + 1)) return recent;
        const value = text.slice(start + 1, at);
        RECENT_STRINGS[slot] = value;
        return value;
      }
      hash = (Math.imul(hash, 31) + code) | 0;
      // A control character is not JSON; an escape, or the end of the text (NaN), is left to JSON.parse.
      if (code < SPACE || code === BACKSLASH || Number.isNaN(code)) return NOT_A_SCALAR;
    }
  }
  if (code === LOWER_T || code === LOWER_F || code === LOWER_N) {
    for (const [word, value] of LITERALS) {
      if (text.startsWith(word, start)) {
        cursor.end = start + word.length;
        return value;
      }
    }
    return NOT_A_SCALAR;
  }
  let at = start;
  let plain = true; // no sign, fraction or exponent: the digits' sum is the value
  let sum = 0;
  if (code === MINUS) {
    plain = false;
    code = text.charCodeAt(++at);
  }
  if (code === ZERO) code = text.charCodeAt(++at);
  else if (isDigit(code)) {
    do {
      sum = sum * 10 + (code - ZERO);
      code = text.charCodeAt(++at);
    } while (isDigit(code));
  } else return NOT_A_SCALAR;
  if (code === DOT) {
    plain = false;
    code = text.charCodeAt(++at);
    if (!isDigit(code)) return NOT_A_SCALAR;
    do code = text.charCodeAt(++at);
    while (isDigit(code));
  }
  if (code === LOWER_E || code === UPPER_E) {
    plain = false;
    code = text.charCodeAt(++at);
    if (code === PLUS || code === MINUS) code = text.charCodeAt(++at);
    if (!isDigit(code)) return NOT_A_SCALAR;
    do code = text.charCodeAt(++at);
    while (isDigit(code));
  }
  cursor.end = at;
  return plain && at - start <= EXACT_DIGITS ? sum : Number(text.slice(start, at));
}

/** Slots of {@link RECENT_STRINGS}: a power of two. */
const RECENT_STRINGS_SIZE = 1024;
/**
 * The strings {@link scalarAt} returned last, one per slot, by a hash of their characters
 * (summed during the scan for the closing quote). A string equal to the one in its slot (same
 * length, same characters: compared, not trusted to the hash) is returned from here instead of a
 * new slice: the ids a log repeats (the boot, holders, resources) are then one string each, not
 * one per record, which the young generation would otherwise allocate and copy through every
 * scavenge while a replay cache keeps them (`JSON.parse` avoids the same cost by interning
 * strings of up to 10 characters). Measured on a 1M-event replay: scavenges 1 538 -> 714 ms, CPU
 * 3.45 -> 3.10 µs per event. Holds at most this many strings (a slice keeps its record's text
 * alive: at most that many records' texts).
 */
const RECENT_STRINGS: (string | undefined)[] = new Array<string | undefined>(RECENT_STRINGS_SIZE).fill(undefined);

/** JSON's literal names and their values. */
const LITERALS: readonly (readonly [string, boolean | null])[] = [
  ['true', true],
  ['false', false],
  ['null', null],
];
