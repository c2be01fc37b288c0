/**
 * The workspace's one validation module: the id, TTL, fence, count and integer rules, and the
 * argument checks built on them. Each check throws `TypeError` (wrong type) or `RangeError`
 * (right type, value out of range) with a message naming the API, the field, the unit and the
 * value received, and never substitutes a default. The rules and the checks other packages need
 * are exported from the package's index (with TSDoc here); the rest are internal to lease-fence.
 */

/**
 * Largest accepted TTL in milliseconds: `2^31 - 1`, so any timer set from a TTL stays below
 * 2^31 ms (the limit of `setTimeout`, which otherwise fires immediately).
 *
 * @see docs/design.md § "The library's rules" (TTLs are bounded)
 */
export const MAX_TTL_MILLIS: number = 2 ** 31 - 1;

/**
 * How many acquire grants a lease table remembers for idempotent retries.
 *
 * @see docs/design.md § "The library's rules" (Retries are idempotent)
 */
export const DEFAULT_REPLAY_CACHE_SIZE = 1024;

/**
 * Renders a received value for an argument error's message: strings quoted, `-0` kept, objects,
 * arrays and functions named rather than printed. The workspace's packages use it (and the
 * `require*` checks below) so every argument error reads the same.
 */
export const describeValue = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'bigint') return `${String(value)}n`;
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
};

/** Longest accepted resource, holder, request or gate id, in characters (the id rule, {@link isId}). */
export const MAX_ID_LENGTH = 200;

/**
 * The characters of an id: printable ASCII (`!` to `~` and the space), with no space at either
 * end. Resource names may contain `/` and `:` (for example `repo:web/deploy-slot`). Part of the
 * id rule ({@link isId}); the protocol's zod `IdSchema` is built from it and {@link MAX_ID_LENGTH}.
 */
export const ID_PATTERN: RegExp = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The phrases of the id rule's refusals, each to follow the field's name. lease-fence's
 * {@link requireId} and the protocol's zod `IdSchema` both report them.
 */
export const ID_PROBLEMS = Object.freeze({
  notString: 'must be a string',
  empty: 'must not be empty',
  tooLong: `must be at most ${MAX_ID_LENGTH} characters`,
  notPrintable: 'must be printable ASCII without leading or trailing spaces',
} as const);

/**
 * Why `value` is not an id (one of {@link ID_PROBLEMS}), or `undefined` for an id. The one copy
 * of the id rule: a string of 1 to {@link MAX_ID_LENGTH} characters matching {@link ID_PATTERN}.
 */
export function idProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return ID_PROBLEMS.notString;
  if (value.length === 0) return ID_PROBLEMS.empty;
  if (value.length > MAX_ID_LENGTH) return ID_PROBLEMS.tooLong;
  if (!ID_PATTERN.test(value)) return ID_PROBLEMS.notPrintable;
  return undefined;
}

/** `true` when `value` is an id: a string of 1 to {@link MAX_ID_LENGTH} characters matching {@link ID_PATTERN}. */
export const isId = (value: unknown): value is string => idProblem(value) === undefined;

/**
 * The id rule (resources, holders, request ids, gate ids), the same the coordinator's wire
 * keeps, so an id the service would refuse is refused here first: see {@link idProblem}.
 * @throws TypeError `"<api>: <field> must be a non-empty string, got <value>"` for a non-string
 *   or an empty string; RangeError `"<api>: <field> <problem>, got <value>"` for a string that is
 *   too long or not printable ASCII without spaces at its ends.
 */
export function requireId(api: string, field: string, value: unknown): asserts value is string {
  const problem = idProblem(value);
  if (problem === undefined) return;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${api}: ${field} must be a non-empty string, got ${describeValue(value)}`);
  }
  throw new RangeError(`${api}: ${field} ${problem}, got ${describeValue(value)}`);
}

/**
 * The clock-domain rule: a non-empty string. Looser than the id rule on purpose: a domain only
 * names a clock (an agent's, a test's) and never goes on the wire, except the coordinator's boot
 * id, which the coordinator checks with {@link requireId}.
 * @throws TypeError `"<api>: <field> must be a non-empty string, got <value>"` otherwise.
 */
export function requireClockDomain(api: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${api}: ${field} must be a non-empty string, got ${describeValue(value)}`);
  }
}

/** Throws TypeError unless `value` is a number (any number; range checks follow). */
function requireNumber(api: string, field: string, value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number') {
    throw new TypeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
  }
}

/**
 * The bounds a TTL must lie in, in milliseconds (both inclusive): integers with
 * `1 <= minTtlMillis <= maxTtlMillis <= MAX_TTL_MILLIS`. A coordinator's configured bounds.
 */
export interface TtlBounds {
  /** Shortest accepted TTL, in milliseconds. */
  readonly minTtlMillis: number;
  /** Longest accepted TTL, in milliseconds; at most {@link MAX_TTL_MILLIS}. */
  readonly maxTtlMillis: number;
}

/** The library's own TTL bounds: `[1, MAX_TTL_MILLIS]` milliseconds. */
export const DEFAULT_TTL_BOUNDS: TtlBounds = Object.freeze({ minTtlMillis: 1, maxTtlMillis: MAX_TTL_MILLIS });

/**
 * The TTL rule, the one copy: `value` is an integer number of milliseconds within `bounds`
 * (`[1, MAX_TTL_MILLIS]` by default). The coordinator's configured bounds, its service's request
 * check and the library's calls all decide with it.
 */
export function isTtlMillis(value: unknown, bounds: TtlBounds = DEFAULT_TTL_BOUNDS): value is number {
  return (
    typeof value === 'number' && Number.isInteger(value) && value >= bounds.minTtlMillis && value <= bounds.maxTtlMillis
  );
}

/**
 * Throws unless `value` keeps the TTL rule ({@link isTtlMillis}) within `bounds`.
 * @throws TypeError (not a number) / RangeError (not an integer in the bounds)
 *   `"<api>: <field> must be a positive integer number of milliseconds, at most <max>, got <value>"`
 *   when the lower bound is 1, else `"… must be an integer number of milliseconds in [<min>, <max>], got <value>"`.
 */
export function requireTtlMillis(
  api: string,
  field: string,
  value: unknown,
  bounds: TtlBounds = DEFAULT_TTL_BOUNDS,
): asserts value is number {
  if (isTtlMillis(value, bounds)) return;
  const { minTtlMillis, maxTtlMillis } = bounds;
  const what =
    minTtlMillis === 1
      ? `a positive integer number of milliseconds, at most ${maxTtlMillis}`
      : `an integer number of milliseconds in [${minTtlMillis}, ${maxTtlMillis}]`;
  requireNumber(api, field, value, what);
  throw new RangeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
}

/**
 * The fence rule: a positive safe integer.
 * @throws TypeError (not a number) / RangeError (out of range) `"<api>: <field> must be a positive safe integer, got <value>"`.
 */
export function requireFence(api: string, field: string, value: unknown): asserts value is number {
  const what = 'a positive safe integer';
  requireNumber(api, field, value, what);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
  }
}

/**
 * `true` when `value` is a safe integer in `[min, max]` (both inclusive). The one integer check
 * of the workspace: {@link requireInteger}, {@link requireCount}, the coordinator's options and
 * the gates' outboxes decide with it.
 * @param max - @defaultValue `Number.MAX_SAFE_INTEGER`
 */
export function isIntegerInRange(value: unknown, min: number, max: number = Number.MAX_SAFE_INTEGER): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** The range and unit of an integer option, for {@link requireInteger}. */
export interface IntegerRange {
  /** Smallest accepted value. */
  readonly min: number;
  /** Largest accepted value. @defaultValue `Number.MAX_SAFE_INTEGER` */
  readonly max?: number;
  /** What the integer counts, for the message (`'milliseconds'`, `'events'`, `'fences'`, …). */
  readonly unit: string;
}

/**
 * Throws unless `value` is a safe integer in `range` ({@link isIntegerInRange}).
 * @throws TypeError (not a number) / RangeError (a fraction, NaN, ±Infinity, unsafe, or out of
 *   range) `"<api>: <field> must be an integer (<unit>) in [<min>, <max>], got <value>"`.
 */
export function requireInteger(
  api: string,
  field: string,
  value: unknown,
  range: IntegerRange,
): asserts value is number {
  const { min, max = Number.MAX_SAFE_INTEGER, unit } = range;
  if (isIntegerInRange(value, min, max)) return;
  const what = `an integer (${unit}) in [${min}, ${max}]`;
  requireNumber(api, field, value, what);
  throw new RangeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
}

/**
 * Throws unless `value` is a count: a non-negative safe integer (a seq, a capacity, a fence counter).
 * @throws TypeError (not a number) / RangeError (otherwise) `"<api>: <field> must be a non-negative safe integer, got <value>"`.
 */
export function requireCount(api: string, field: string, value: unknown): asserts value is number {
  if (isIntegerInRange(value, 0)) return;
  const what = 'a non-negative safe integer';
  requireNumber(api, field, value, what);
  throw new RangeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
}

/**
 * Throws unless `value` is a finite number of milliseconds, at least `min` when given.
 * @internal
 */
export function requireMillis(api: string, field: string, value: unknown, min?: number): asserts value is number {
  const what =
    min === undefined ? 'a finite number of milliseconds' : `a finite number of milliseconds, at least ${min}`;
  requireNumber(api, field, value, what);
  if (!Number.isFinite(value) || (min !== undefined && value < min)) {
    throw new RangeError(`${api}: ${field} must be ${what}, got ${describeValue(value)}`);
  }
}

/** Throws TypeError unless `value` is a function. @internal */
export function requireFunction(
  api: string,
  field: string,
  value: unknown,
): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') {
    throw new TypeError(`${api}: ${field} must be a function, got ${describeValue(value)}`);
  }
}

/**
 * Checks that an options or request argument is a non-null object.
 * @throws TypeError `"<api>: <field> must be an object, got <value>"` otherwise.
 */
export function requireObject<T>(api: string, field: string, value: T): asserts value is T & object {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`${api}: ${field} must be an object, got ${describeValue(value)}`);
  }
}
