/**
 * Argument checks every EventLog adapter applies before touching its store, so that misuse is
 * refused the same way everywhere (and changes nothing). Exported for adapters.
 *
 * @see ./event-log.ts for the port's contract.
 */
import { isIntegerInRange } from 'lease-fence';
import type { AppendOptions, ReadRange, Snapshot } from './event-log.js';

/** A version, position or count: lease-fence's integer rule with no upper bound but the safe range. */
const isNonNegativeInteger = (value: unknown): value is number => isIntegerInRange(value, 0);

/**
 * Checks `options.expectedVersion` of an append.
 * @throws `RangeError` naming `api` and the value when it is not a non-negative safe integer.
 * @internal for adapters
 */
export function checkAppendOptions(api: string, options: AppendOptions): void {
  if (options === null || typeof options !== 'object' || !isNonNegativeInteger(options.expectedVersion)) {
    throw new RangeError(
      `${api}: expectedVersion must be a non-negative integer (number of events), got ${String(options?.expectedVersion)}`,
    );
  }
}

/**
 * Checks a read range and returns it with defaults (`to` = Infinity, `limit` = Infinity).
 * @throws `RangeError` naming `api`, the field and the value.
 * @internal for adapters
 */
export function checkReadRange(api: string, range: ReadRange): { from: number; to: number; limit: number } {
  if (range === null || typeof range !== 'object')
    throw new TypeError(`${api}: range must be an object { from, to?, limit? }, got ${String(range)}`);
  if (!isNonNegativeInteger(range.from) || range.from < 1) {
    throw new RangeError(`${api}: from must be a positive integer (1-based position), got ${String(range.from)}`);
  }
  if (range.to !== undefined && !isNonNegativeInteger(range.to)) {
    throw new RangeError(`${api}: to must be a non-negative integer (position, inclusive), got ${String(range.to)}`);
  }
  if (range.limit !== undefined && (!isNonNegativeInteger(range.limit) || range.limit < 1)) {
    throw new RangeError(`${api}: limit must be a positive integer (events), got ${String(range.limit)}`);
  }
  return { from: range.from, to: range.to ?? Number.POSITIVE_INFINITY, limit: range.limit ?? Number.POSITIVE_INFINITY };
}

/**
 * Checks the `after` position of a subscription.
 * @throws `RangeError` naming `api` and the value.
 * @internal for adapters
 */
export function checkSubscribeAfter(api: string, after: number): void {
  if (!isNonNegativeInteger(after)) {
    throw new RangeError(
      `${api}: after must be a non-negative integer (position; 0 = from the start), got ${String(after)}`,
    );
  }
}

/**
 * Checks a snapshot against the log's current version and serialises its state to JSON text.
 * @returns the state as JSON text.
 * @throws `RangeError` when `position` is not an integer in `[0, version]` or `schemaVersion` is not a positive integer.
 * @throws `TypeError` when `state` is not JSON-serialisable.
 * @internal for adapters
 */
export function checkSnapshot(api: string, snapshot: Snapshot, version: number): string {
  if (!isNonNegativeInteger(snapshot.position) || snapshot.position > version) {
    throw new RangeError(
      `${api}: position must be an integer between 0 and the log's version ${version}, got ${String(snapshot.position)}`,
    );
  }
  if (!isNonNegativeInteger(snapshot.schemaVersion) || snapshot.schemaVersion < 1) {
    throw new RangeError(`${api}: schemaVersion must be a positive integer, got ${String(snapshot.schemaVersion)}`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(snapshot.state);
  } catch (error) {
    throw new TypeError(
      `${api}: state must be JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (json === undefined) throw new TypeError(`${api}: state must be JSON-serialisable, got ${typeof snapshot.state}`);
  return json;
}
