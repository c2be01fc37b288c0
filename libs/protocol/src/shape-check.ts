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
