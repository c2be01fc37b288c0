/**
 * Bad wire input: the request was refused before anything ran, and nothing changed.
 * Wire input is parsed with the protocol schemas at the controller.
 */
import { compileShapeCheck, type ShapeCheck } from '@lease-fence/protocol';
import type { z } from 'zod';

/** One problem with the input; `path` names the field (dotted), e.g. `ttlMillis`, `rejected.fence`, `resource`. */
export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

/** Thrown by {@link parseInput}; the exception filter answers 400 `{ error: 'invalid-request', message, issues }`. */
export class InvalidRequestError extends Error {
  /** Stable error code, also the `error` field of the reply. */
  readonly code = 'invalid-request';

  /** @param issues - At least one issue, each naming its field. */
  constructor(readonly issues: readonly InputIssue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    this.name = 'InvalidRequestError';
  }
}

/** Where a value came from; names the field when the issue is about the whole value (`frame`: an agent link frame, `agent-link/agent-session.ts`). */
export type InputPart = 'body' | 'query' | 'params' | 'frame';

/**
 * Turns zod issues into {@link InputIssue}s that name the field (unknown keys, or query parameters, are named one by one).
 * @param value - The value that was parsed, when known: a body that is not an object is then described (`got an array`).
 */
export function toInputIssues(issues: readonly z.core.$ZodIssue[], part: InputPart, value?: unknown): InputIssue[] {
  const result: InputIssue[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const message = part === 'query' ? 'is not a known query parameter' : 'is not a known field';
      // Named one by one up to a bound, so a request with thousands of made-up keys is not answered
      // with a reply many times its size.
      for (const key of issue.keys.slice(0, MAX_UNKNOWN_KEYS_NAMED))
        result.push({ path: path === '' ? key : `${path}.${key}`, message });
      const more = issue.keys.length - MAX_UNKNOWN_KEYS_NAMED;
      if (more > 0)
        result.push({
          path: path === '' ? part : path,
          message: `and ${more} more unknown ${part === 'query' ? 'query parameters' : 'fields'}`,
        });
    } else if (path === '' && (part === 'body' || part === 'frame') && issue.code === 'invalid_type') {
      result.push({ path: part, message: bodyIssue(value) });
    } else if (path !== '' && isAbsent(value, issue.path)) {
      // zod words an absent field by its schema ("expected nonoptional, received undefined"): say it is missing.
      if (!result.some((earlier) => earlier.path === path)) result.push({ path, message: missingIssue(issue) });
    } else {
      const field = path === '' ? part : path;
      // zod's own wording of a wrong type ("Invalid input: expected number, received string"), where the
      // schema gave none of its own: said as the other checks say it.
      const message =
        issue.code === 'invalid_type' && path !== '' && value !== undefined && issue.message.startsWith('Invalid input')
          ? `must be ${article(issue.expected)} ${issue.expected === 'int' ? 'integer' : issue.expected}, got ${describeValue(valueAt(value, issue.path))}`
          : issue.message;
      // One message per field: the first check it failed (an empty id is "too short", not also "not printable").
      if (!result.some((earlier) => earlier.path === field)) result.push({ path: field, message });
    }
  }
  return result;
}

/**
 * Each schema's quick check ({@link compileShapeCheck}, compiled from the schema itself on first
 * use), or `null` for a schema it cannot compile (a refinement, a union…): zod alone then.
 */
const quickChecks = new WeakMap<z.ZodType, ShapeCheck | null>();

const quickCheckOf = (schema: z.ZodType): ShapeCheck | null => {
  let check = quickChecks.get(schema);
  if (check === undefined) {
    try {
      check = compileShapeCheck(schema);
    } catch {
      check = null; // not compilable: every value goes through zod, which is the rule anyway
    }
    quickChecks.set(schema, check);
  }
  return check;
};

/**
 * `schema.safeParse(value)`, answered without zod when the schema's quick check passes `value`
 * (then zod would return that same value: a request on the lease hot path, one per operation,
 * skips zod's issue bookkeeping and its copy). Anything the check does not pass goes to zod,
 * which accepts it or names the field.
 */
export function safeParseInput<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  if (quickCheckOf(schema)?.(value) === true) return { success: true, data: value as z.output<S> };
  return schema.safeParse(value);
}

/**
 * Parses `value` with a protocol schema ({@link safeParseInput}).
 * @throws {@link InvalidRequestError} naming each offending field; nothing has run yet.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, part: InputPart): z.output<S> {
  const parsed = safeParseInput(schema, value);
  if (!parsed.success) throw new InvalidRequestError(toInputIssues(parsed.error.issues, part, value));
  return parsed.data;
}

/** Most unknown keys of one object named one by one in a 400; the rest are counted in one more issue. */
export const MAX_UNKNOWN_KEYS_NAMED = 20;

/** What is wrong with a body that is not a JSON object; `undefined` is a body that was not read as JSON at all. */
const bodyIssue = (value: unknown): string => {
  if (value === undefined) return 'must be a JSON object (none was read: send one with Content-Type: application/json)';
  return `must be a JSON object, got ${describeValue(value)}`;
};

/** A JSON value's kind as a reader says it: `null`, `an array`, `a string`, `an object`… */
const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `${article(typeof value)} ${typeof value}`;

const article = (noun: string): string => (/^[aeiou]/.test(noun) ? 'an' : 'a');

/** The value at `path` inside `value` (undefined when a step is not an object). */
const valueAt = (value: unknown, path: readonly PropertyKey[]): unknown => {
  let at = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
};

/**
 * Whether the field at `path` is absent from `value` (its parent is an object without that key).
 * Unknown when `value` was not given: then not absent, and zod's own message is kept.
 */
const isAbsent = (value: unknown, path: readonly PropertyKey[]): boolean => {
  let parent = value;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[key];
  }
  const key = path[path.length - 1];
  return typeof parent === 'object' && parent !== null && key !== undefined && !Object.hasOwn(parent, key);
};

/** The message for a field that was not given: `is required`, with what it must be when zod knows. */
const missingIssue = (issue: z.core.$ZodIssue): string => {
  if (issue.code === 'invalid_value' && issue.values.length > 0)
    return `is required: one of ${issue.values.map(String).join(', ')}`;
  if (issue.code === 'invalid_type' && issue.expected !== 'nonoptional')
    return `is required: ${article(issue.expected)} ${issue.expected}`;
  return 'is required';
};
