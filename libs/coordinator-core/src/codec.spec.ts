import { COORDINATOR_EVENT_TYPES, CoordinatorEventSchema, type CoordinatorEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { checkEvents, decodeRecord, decodeSnapshot, encodeEvents } from './codec.js';
import { EventLogCorruptError } from './ports/event-log-errors.js';
import {
  coordinatorCheckpointed,
  coordinatorStarted,
  fenceAdmitted,
  fenceFloorReported,
  rejectionsMissing,
  fenceBurned,
  fenceRejected,
  fenceReserved,
  leaseExpired,
  leaseGranted,
  leaseReleased,
  leaseRenewed,
  snapshotTaken,
} from './testing/event-builders.js';

const granted = leaseGranted('slot', 'agent-a', 3, { atMillis: 10 });
const stored = (overrides: Partial<Parameters<typeof decodeRecord>[0]> = {}) => ({
  position: 5,
  recordedAtMillis: 1_700_000_000_000,
  type: 'LeaseGranted',
  version: 1,
  data: JSON.stringify(granted.data),
  ...overrides,
});

/** One event of every type of the protocol, optional fields set. */
const everyEventType: readonly CoordinatorEvent[] = [
  coordinatorStarted({
    previousBootId: 'boot-0',
    carriedLeases: [{ resource: 'r', holderId: 'h', fence: 3, expiresAtMillis: 900 }],
    graceDeadlineMillis: 900,
    recoveredFence: 3,
  }),
  granted,
  leaseRenewed('slot', 'agent-a', 3, { atMillis: 20 }),
  leaseReleased('slot', 'agent-a', 3),
  leaseExpired('slot', 'agent-a', 3),
  fenceRejected({ seq: 7, gateWallMillis: 1_700_000_000_001, kind: 'double-grant' }),
  fenceAdmitted('slot', 'agent-a', 3),
  rejectionsMissing(3, 6, { reportedSeq: 7 }),
  snapshotTaken(9),
  coordinatorCheckpointed({ atMillis: 40 }),
  fenceFloorReported('slot', 'agent-a', 57, { atMillis: 50, raisedTo: 1_000_057 }),
  fenceReserved('deploy-slot', 'agent-b', 4, { atMillis: 50 }),
  fenceBurned('deploy-slot', 'agent-b', 4, { atMillis: 60, reason: 'coordinator-restarted' }),
];

/** The EventLogCorruptError `fn` throws. */
const corruptionOf = (fn: () => unknown): EventLogCorruptError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof EventLogCorruptError) return error;
    throw error;
  }
  throw new Error('expected EventLogCorruptError, nothing was thrown');
};

describe('codec', () => {
  describe('encodeEvents', () => {
    it('stores type and version as columns and the data as JSON text', () => {
      expect(encodeEvents('test', [granted])).toEqual([
        { type: 'LeaseGranted', version: 1, data: JSON.stringify(granted.data) },
      ]);
    });

    it('refuses a batch with one invalid event, naming its index and field', () => {
      const bad = { ...granted, data: { ...granted.data, ttlMillis: 1.5 } };
      expect(() => encodeEvents('SqliteEventLog.append', [granted, bad])).toThrow(
        /SqliteEventLog\.append: events\[1\]\.data\.ttlMillis/,
      );
      expect(() => checkEvents('test', [])).toThrow(TypeError);
    });
  });

  describe('checkEvents', () => {
    it('returns the parsed events deep-frozen, with unknown keys stripped', () => {
      // Given an event with a key the schema does not know
      const withExtra = { ...granted, data: { ...granted.data, note: 'not in the schema' } };

      // When it is checked
      const [checked] = checkEvents('test', [withExtra]);

      // Then the result is the schema's output, and neither it nor its data can be changed
      expect(checked).toEqual(granted);
      expect(Object.isFrozen(checked)).toBe(true);
      expect(Object.isFrozen(checked!.data)).toBe(true);
    });

    it('keeps a valid handed-over event itself, frozen, and still parses one that needs stripping; leaves a borrowed one alone', () => {
      const handed = structuredClone(granted);
      const withExtra = { ...structuredClone(granted), data: { ...granted.data, note: 'not in the schema' } };
      const [kept, stripped] = checkEvents('test', [handed, withExtra], 'handed-over');
      expect(kept).toBe(handed);
      expect(Object.isFrozen(handed) && Object.isFrozen(handed.data)).toBe(true);
      expect(stripped).not.toBe(withExtra);
      expect(stripped).toEqual(granted);

      const borrowed = structuredClone(granted);
      const [copy] = checkEvents('test', [borrowed]);
      expect(copy).not.toBe(borrowed);
      expect(copy).toEqual(granted);
      expect(Object.isFrozen(borrowed)).toBe(false);
    });

    it('refuses an invalid handed-over event with the schema message, naming its index and field', () => {
      const bad = { ...structuredClone(granted), data: { ...granted.data, fence: 0 } };
      expect(() => checkEvents('DurableCoordinator', [structuredClone(granted), bad], 'handed-over')).toThrow(
        /DurableCoordinator: events\[1\]\.data\.fence .*; nothing was appended/,
      );
    });

    it('accepts events it returned as they are, and encodes them like any other', () => {
      const checked = checkEvents('test', [granted]);

      expect(checkEvents('test', checked)[0]).toBe(checked[0]);
      expect(encodeEvents('test', checked)).toEqual(encodeEvents('test', [granted]));
    });
  });

  describe('decodeRecord', () => {
    it('has a test event for every type of the protocol', () => {
      expect(new Set(everyEventType.map((e) => e.type))).toEqual(new Set(COORDINATOR_EVENT_TYPES));
    });

    it('decodes a stored record into the recorded event', () => {
      expect(decodeRecord(stored())).toEqual({ position: 5, recordedAtMillis: 1_700_000_000_000, event: granted });
    });

    it('accepts data that is already parsed', () => {
      expect(decodeRecord(stored({ data: granted.data })).event).toEqual(granted);
    });

    it.each(everyEventType.map((event) => [event.type, event] as const))(
      "decodes a %s record to exactly what the protocol's union schema parses",
      (_type, event) => {
        // Given a record of this type with a key the schema does not know
        const data = JSON.stringify({ ...event.data, note: 'not in the schema' });
        // When it is decoded
        const decoded = decodeRecord(stored({ type: event.type, version: event.version, data })).event;
        // Then the result is the union's output (unknown keys stripped), key order included
        const parsed = CoordinatorEventSchema.parse({
          type: event.type,
          version: event.version,
          data: JSON.parse(data) as unknown,
        });
        expect(decoded).toEqual(parsed);
        expect(JSON.stringify(decoded)).toBe(JSON.stringify(parsed));
      },
    );

    it.each([
      ['an unknown type', { type: 'LeaseStolen' }, 'type', /unknown event type "LeaseStolen"/],
      ['a version from a newer writer', { version: 2 }, 'version', /unknown version 2 of LeaseGranted/],
      ['invalid JSON', { data: '{"resource":' }, 'data', /invalid JSON/],
      [
        'invalid JSON, its offset as a character',
        { data: '{"bad' },
        'data',
        /data: invalid JSON: Unterminated string in JSON at character 5$/,
      ],
      ['data that is not an object', { data: '[1,2]' }, 'data', /must be a JSON object/],
      ['a field that fails the schema', { data: JSON.stringify({ ...granted.data, fence: 0 }) }, 'data.fence', /./],
      ['a missing field', { data: JSON.stringify({ ...granted.data, holderId: undefined }) }, 'data.holderId', /./],
    ])('stops at %s with EventLogCorruptError naming the position and the path', (_case, overrides, path, message) => {
      const error = corruptionOf(() => decodeRecord(stored(overrides)));
      expect(error.code).toBe('event-log-corrupt');
      expect(error.position).toBe(5);
      expect(error.issues[0]?.path).toBe(path);
      expect(error.message).toMatch(/position 5/);
      expect(error.message).toMatch(message);
    });
  });

  describe('decodeSnapshot', () => {
    it("refuses invalid JSON naming the snapshot's position", () => {
      expect(corruptionOf(() => decodeSnapshot({ position: 9, schemaVersion: 1, state: '{' })).position).toBe(9);
    });
  });
});
