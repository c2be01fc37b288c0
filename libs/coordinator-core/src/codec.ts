/**
 * Event record ⇄ domain event: the one place where stored records are validated (zod schemas of
 * `@lease-fence/protocol`) and old versions upcast. Adapters store what {@link encodeEvents}
 * returns and hand what they read to {@link decodeRecord}; a record that does not decode stops
 * the reader with {@link EventLogCorruptError} naming its position. Nothing is skipped.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Events)
 */
import {
  compileShapeCheck,
  compileShapeParser,
  CoordinatorEventSchema,
  type CoordinatorEvent,
  type CoordinatorEventType,
  type RecordedEvent,
  type ShapeCheck,
  type ShapeParser,
} from '@lease-fence/protocol';
import { EventLogCorruptError, type EventLogCorruptIssue } from './ports/event-log-errors.js';
import type { Snapshot } from './ports/event-log.js';

/** An event as adapters store it: type and schema version as columns, `data` as JSON text. */
export interface EncodedEvent {
  readonly type: CoordinatorEventType;
  readonly version: number;
  /** `event.data` as JSON text. */
  readonly data: string;
}

/** A record as an adapter read it, before decoding. `data` is JSON text or an already parsed object. */
export interface StoredEventRecord {
  /** 1-based position in the log. */
  readonly position: number;
  /** Wall-clock epoch milliseconds of the append (display only). */
  readonly recordedAtMillis: number;
  readonly type: string;
  readonly version: number;
  readonly data: unknown;
}

/** A snapshot as an adapter read it, before decoding: `state` as JSON text. */
export interface StoredSnapshot {
  readonly position: number;
  readonly schemaVersion: number;
  readonly state: string;
}

/** Upcasts the `data` of version `n` of an event type to version `n + 1`. */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/**
 * Upcasters by event type and *source* version: `UPCASTERS[type][n]` turns version `n` into
 * `n + 1`. Every event is at version 1 today, so the table is empty; when a schema in
 * `@lease-fence/protocol` gains version 2, its 1 → 2 upcaster goes here and old records are
 * never rewritten in the log.
 */
const UPCASTERS: { readonly [T in CoordinatorEventType]?: Readonly<Record<number, Upcaster>> } = {};

/** One member of the protocol's discriminated union: the schema of one event type at its current version. */
type EventMemberSchema = (typeof CoordinatorEventSchema.options)[number];

/**
 * What decoding a record of one event type needs, read from the protocol union's member for that
 * type once, at load, so a replay's record costs one lookup (by its type column) instead of one
 * per table and zod's getters for the version.
 */
interface TypeDecoder {
  /**
   * The union's member for the type. The union dispatches on `type` to exactly one of them, so a
   * record whose type is known is validated by that member's schema directly: the same check
   * (same schema, same issues and paths), without the union's dispatch on every record.
   */
  readonly schema: EventMemberSchema;
  /** The member's `version` literal: the type's current schema version (a positive integer). */
  readonly current: number;
  /**
   * The member's `data` compiled into a yes/no check (`compileShapeCheck` of
   * `@lease-fence/protocol`): it accepts a record's data only when the schema accepts it as it
   * is, so a record it accepts is exactly what zod would have returned, without zod's issue
   * machinery and its copy of every object. Anything else goes to the schema itself, which
   * accepts (stripping an unknown key) or names the field. Measured on a 100k-event log, replay's
   * validation went from about as costly as `JSON.parse` to a small fraction of it (the figures
   * are in the commit that introduced it); the schema stays the one copy of each rule.
   */
  readonly check: ShapeCheck;
  /**
   * The member's `data` compiled into a parser that checks as it reads (`compileShapeParser` of
   * `@lease-fence/protocol`): for the JSON text of a record at the current version it returns, in
   * one pass, the object `JSON.parse` would return, only when {@link TypeDecoder.check} would pass
   * it; for any other text it returns `undefined` and the record takes the path above
   * (`JSON.parse`, the check, the schema). A replay's records are nearly all the text the
   * coordinator wrote, so nearly all take the one pass: about 1.2 µs per record became 0.7 µs on
   * the records of a 1M-event log (the figures are in the commit that introduced it).
   */
  readonly parser: ShapeParser;
}

/** {@link TypeDecoder}s by event type: every member of the protocol's union. */
const TYPE_DECODERS: ReadonlyMap<string, TypeDecoder> = new Map(
  CoordinatorEventSchema.options.map((schema) => [
    schema.shape.type.value,
    {
      schema,
      current: schema.shape.version.value,
      check: compileShapeCheck(schema.shape.data),
      parser: compileShapeParser(schema.shape.data),
    },
  ]),
);

/**
 * Per event type, the whole member schema (type, version, data) compiled the same way: the
 * write path's quick check. A decided event it passes is exactly what the schema would return,
 * so {@link checkEvents} freezes and keeps a handed-over one as it is instead of having zod copy it (a zod parse
 * per event was about 5 % of the coordinator's time on the agent link, in the profile of
 * issue 18); anything it does not pass goes to the schema.
 */
const EVENT_CHECKS: ReadonlyMap<unknown, ShapeCheck> = new Map(
  CoordinatorEventSchema.options.map((schema) => [schema.shape.type.value, compileShapeCheck(schema)]),
);

/**
 * Validates events against the protocol schema without encoding them: all are checked, so a
 * batch with one bad event is refused whole. An event this function returned earlier is
 * accepted as it is without parsing it again (it is deep-frozen, so it is still what the schema
 * accepted): the coordinator checks each decision's events and appends the returned ones, and
 * the log's {@link encodeEvents} then costs one `JSON.stringify` per event, not a second parse.
 *
 * @param api - Caller name for the error message (`'DurableCoordinator'`).
 * @param handover - The caller hands the events over and keeps no reference it will change (the
 *   coordinator's own decisions): an event that needs no stripping (`EVENT_CHECKS`) is then
 *   frozen and returned itself, without zod's copy. Otherwise (the default) every event not
 *   returned earlier is parsed by the schema and the caller's objects are left as they are.
 * @returns the parsed events (unknown keys stripped), deep-frozen.
 * @throws `TypeError` if `events` is empty or not an array, or naming `events[i].<path>` and the
 *   schema's message when an event does not match.
 */
export function checkEvents(
  api: string,
  events: readonly CoordinatorEvent[],
  handover: 'handed-over' | 'borrowed' = 'borrowed',
): CoordinatorEvent[] {
  if (!Array.isArray(events) || events.length === 0) {
    throw new TypeError(
      `${api}: events must be a non-empty array of coordinator events, got ${Array.isArray(events) ? 'an empty array' : typeof events}`,
    );
  }
  return events.map((event, index) => {
    if (checkedEvents.has(event)) return event;
    if (
      handover === 'handed-over' &&
      EVENT_CHECKS.get((event as { readonly type?: unknown } | null)?.type)?.(event) === true
    ) {
      checkedEvents.add(deepFreeze(event));
      return event;
    }
    const parsed = CoordinatorEventSchema.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue === undefined ? '' : issue.path.map(String).join('.');
      throw new TypeError(
        `${api}: events[${index}]${path === '' ? '' : `.${path}`} ${issue?.message ?? 'is invalid'}; nothing was appended`,
      );
    }
    const checked = deepFreeze(parsed.data);
    checkedEvents.add(checked);
    return checked;
  });
}

/**
 * The events {@link checkEvents} returned: the schema's own output, deep-frozen, so what it
 * accepted once it would accept again. Weak: an event is forgotten with its last reference.
 */
const checkedEvents = new WeakSet<CoordinatorEvent>();

/** Freezes `value` and every object and array in it (events are plain JSON-shaped data: no cycles). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    Object.freeze(value);
    for (const field of Object.values(value)) deepFreeze(field);
  }
  return value;
}

/**
 * Validates events against the protocol schema ({@link checkEvents}) and encodes them for storage.
 *
 * @param api - Caller name for the error message (`'SqliteEventLog.append'`).
 * @throws `TypeError` as {@link checkEvents} does; nothing is encoded then.
 */
export function encodeEvents(api: string, events: readonly CoordinatorEvent[]): EncodedEvent[] {
  return checkEvents(api, events).map((event) => ({
    type: event.type,
    version: event.version,
    data: JSON.stringify(event.data),
  }));
}

/**
 * Decodes one stored record: parses `data` if it is JSON text, upcasts old versions, and
 * validates the result with the protocol schema (the union's member for the record's type):
 * JSON text at the current version through the schema's compiled parser first
 * ({@link TypeDecoder.parser}, parsing and checking in one pass), then whatever it does not take
 * through `JSON.parse` and the compiled check ({@link TypeDecoder.check}), and the schema itself for
 * whatever that check does not pass, so the issues of a corrupt record are the schema's.
 *
 * @returns the record as a {@link RecordedEvent} (current schema version).
 * @throws {@link EventLogCorruptError} naming `raw.position` when the type or version is
 *   unknown, the JSON is invalid, or the data does not match the schema.
 */
export function decodeRecord(raw: StoredEventRecord): RecordedEvent {
  return decodeFields(raw.position, raw.type, raw.version, raw.data, raw.recordedAtMillis);
}

/**
 * {@link decodeRecord} of a record's fields, for an adapter that reads rows (SQLite's raw rows)
 * and so need not build a {@link StoredEventRecord} per row only for it to be thrown away: the
 * same checks, in the same order, with the same errors.
 *
 * @param position - 1-based position in the log.
 * @param type - The event type column.
 * @param storedVersion - The schema version column.
 * @param storedData - JSON text or an already parsed object.
 * @param recordedAtMillis - Wall-clock epoch milliseconds of the append.
 * @param dataStart - Where the JSON text begins in `storedData` when it is a string (it runs to
 *   the end): a row read as one text (`libs/event-log-sqlite/src/event-row-text.ts`) is parsed
 *   in place rather than sliced ({@link ShapeParser}'s `start`). @defaultValue 0
 * @throws as {@link decodeRecord}.
 */
export function decodeFields(
  position: number,
  type: string,
  storedVersion: number,
  storedData: unknown,
  recordedAtMillis: number,
  dataStart = 0,
): RecordedEvent {
  const decoder = TYPE_DECODERS.get(type);
  if (decoder === undefined)
    throw corruptAt(position, [{ path: 'type', message: `unknown event type ${JSON.stringify(type)}` }]);
  const current = decoder.current;
  if (!Number.isSafeInteger(storedVersion) || storedVersion < 1 || storedVersion > current) {
    throw corruptAt(position, [
      {
        path: 'version',
        message: `unknown version ${String(storedVersion)} of ${type} (this reader knows 1..${current})`,
      },
    ]);
  }
  if (typeof storedData === 'string' && storedVersion === current) {
    const read = decoder.parser(storedData, dataStart);
    if (read !== undefined) return recordedAt(position, recordedAtMillis, { type, version: current, data: read });
  }
  let data: unknown = typeof storedData === 'string' && dataStart > 0 ? storedData.slice(dataStart) : storedData;
  const parsedHere = typeof data === 'string';
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch (error) {
      throw corruptAt(position, [{ path: 'data', message: invalidJson(error) }], error);
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw corruptAt(position, [{ path: 'data', message: 'must be a JSON object' }]);
  }
  let upcast = data as Record<string, unknown>;
  for (let version = storedVersion; version < current; version += 1) {
    const upcaster = UPCASTERS[type as CoordinatorEventType]?.[version];
    if (upcaster === undefined)
      throw corruptAt(position, [{ path: 'version', message: `no upcaster from version ${version} of ${type}` }]);
    upcast = upcaster(upcast);
  }
  let event: CoordinatorEvent;
  if (parsedHere && decoder.check(upcast)) {
    // Exactly what the schema would return, every field checked: the object JSON.parse (or an
    // upcaster) just made, which nothing else holds. Data an adapter handed over as an object is
    // copied by the schema as before, so the event never aliases the adapter's storage.
    event = { type, version: current, data: upcast } as CoordinatorEvent;
  } else {
    const parsed = decoder.schema.safeParse({ type, version: current, data: upcast });
    if (!parsed.success) throw corruptAt(position, toIssues(parsed.error));
    event = parsed.data;
  }
  return recordedAt(position, recordedAtMillis, event);
}

/**
 * The recorded event of a decoded `event`, once its `recordedAtMillis` is checked.
 * @throws {@link EventLogCorruptError} naming `position` when `recordedAtMillis` is not a finite number.
 */
function recordedAt(position: number, recordedAtMillis: number, event: unknown): RecordedEvent {
  if (!Number.isFinite(recordedAtMillis)) {
    throw corruptAt(position, [
      { path: 'recordedAtMillis', message: `must be a finite number, got ${String(recordedAtMillis)}` },
    ]);
  }
  return { position, recordedAtMillis, event: event as CoordinatorEvent };
}

/** The error that stops a reader at the record at `position`. */
const corruptAt = (position: number, issues: EventLogCorruptIssue[], cause?: unknown): EventLogCorruptError =>
  new EventLogCorruptError({ position, issues, cause });

/**
 * The message of a stored text `JSON.parse` refused. V8 says "at position N", meaning a character
 * offset into the text; beside a log position that reads as another record, so it is named a character.
 */
function invalidJson(error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `invalid JSON: ${detail.replace(/ at position (\d+)/, ' at character $1')}`;
}

/**
 * Decodes a stored snapshot's JSON text.
 * @throws {@link EventLogCorruptError} naming the snapshot's position when the JSON is invalid.
 */
export function decodeSnapshot(raw: StoredSnapshot): Snapshot {
  try {
    return { position: raw.position, schemaVersion: raw.schemaVersion, state: JSON.parse(raw.state) as unknown };
  } catch (error) {
    throw new EventLogCorruptError({
      position: raw.position,
      issues: [{ path: 'snapshot.state', message: invalidJson(error) }],
      cause: error,
    });
  }
}

const toIssues = (error: {
  readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
}): EventLogCorruptIssue[] =>
  error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
