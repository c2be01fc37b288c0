import {
  NO_STREAM,
  START,
  StreamNotFoundError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import {
  EventLogCorruptError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  decodeRecord,
  encodeEvents,
} from '@lease-fence/coordinator-core';
import { leaseGranted } from '@lease-fence/coordinator-core/testing';
import { describe, expect, it } from 'vitest';
import {
  fromAppendResult,
  fromRevision,
  fromSnapshotEvent,
  isConnectionError,
  toEventData,
  toExpectedRevision,
  toKurrentConnectionString,
  toReadRevision,
  toSnapshotEvent,
  toStoredRecord,
  toStreamNames,
  toSubscriptionRevision,
  translateAppendError,
  translateError,
} from './to-eventstoredb.js';

const wrongExpectedVersion = (
  current: bigint | typeof NO_STREAM,
  expected: bigint | typeof NO_STREAM,
): WrongExpectedVersionError =>
  new WrongExpectedVersionError(undefined, { streamName: 'leaseFence-default', current, expected });

/** A resolved event as the client returns it from a read of the log stream. */
const resolvedAt = (
  revision: bigint,
  overrides: { metadata?: unknown; data?: unknown; type?: string } = {},
): ResolvedEvent => {
  const event = leaseGranted('slot', 'agent-a', Number(revision) + 1);
  return {
    event: {
      streamId: 'leaseFence-default',
      id: '00000000-0000-4000-8000-000000000000',
      revision,
      type: overrides.type ?? event.type,
      data: (overrides.data ?? event.data) as Record<string, unknown>,
      metadata: (overrides.metadata ?? { schemaVersion: 1, recordedAtMillis: 1_700_000_000_123 }) as Record<
        string,
        unknown
      >,
      isJson: true,
      created: new Date(1_700_000_000_000),
    },
  } as ResolvedEvent;
};

describe('to-eventstoredb', () => {
  describe('versions and revisions', () => {
    it('expects no stream for an empty log and the revision of the last event otherwise', () => {
      expect(toExpectedRevision(0)).toBe(NO_STREAM);
      expect(toExpectedRevision(1)).toBe(0n);
      expect(toExpectedRevision(42)).toBe(41n);
    });

    it('maps the 0-based revision of an event to its 1-based position', () => {
      expect(fromRevision(0n)).toBe(1);
      expect(fromRevision(41n)).toBe(42);
    });

    it('reads from the revision of a position, inclusive', () => {
      expect(toReadRevision(1)).toBe(0n);
      expect(toReadRevision(10)).toBe(9n);
    });

    it('subscribes from the start for position 0 and from the exclusive revision of the position otherwise', () => {
      expect(toSubscriptionRevision(0)).toBe(START);
      expect(toSubscriptionRevision(1)).toBe(0n);
      expect(toSubscriptionRevision(5)).toBe(4n);
    });

    it('reports the positions an append landed at from the revision the server returns', () => {
      expect(fromAppendResult({ success: true, nextExpectedRevision: 4n }, 2)).toEqual({
        fromPosition: 3,
        toPosition: 5,
      });
    });

    it('turns an append failure reported as data into ExpectedVersionConflictError', () => {
      expect(() => fromAppendResult({ success: false, nextExpectedRevision: -1n }, 3)).toThrow(
        ExpectedVersionConflictError,
      );
    });
  });

  describe('stream names', () => {
    it('gives each namespace its own event stream and snapshot stream outside the system streams', () => {
      expect(toStreamNames('default')).toEqual({
        events: 'leaseFence-default',
        snapshots: 'leaseFenceSnapshot-default',
      });
    });

    it.each(['', ' padded', 'x'.repeat(201)])(
      'refuses the namespace %j with TypeError naming the field',
      (namespace) => {
        expect(() => toStreamNames(namespace)).toThrow(/namespace/);
        expect(() => toStreamNames(namespace)).toThrow(TypeError);
      },
    );
  });

  describe('event records', () => {
    it('stores the event type, its data as JSON, and its schema version and wall time as metadata', () => {
      const [encoded] = encodeEvents('test', [leaseGranted('slot', 'agent-a', 1)]);

      const data = toEventData(encoded!, 1_700_000_000_123);

      expect(data).toMatchObject({
        type: 'LeaseGranted',
        contentType: 'application/json',
        metadata: { schemaVersion: 1, recordedAtMillis: 1_700_000_000_123 },
      });
      expect(data.data).toEqual(leaseGranted('slot', 'agent-a', 1).data);
    });

    it('reads an event back as the record the codec decodes into the appended event', () => {
      const recorded = decodeRecord(toStoredRecord(resolvedAt(0n), 1));

      expect(recorded).toEqual({
        position: 1,
        recordedAtMillis: 1_700_000_000_123,
        event: leaseGranted('slot', 'agent-a', 1),
      });
    });

    it('refuses a gap in revisions with EventLogCorruptError naming the missing position', () => {
      const error = (() => {
        try {
          toStoredRecord(resolvedAt(4n), 3);
        } catch (e) {
          return e;
        }
      })();

      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ code: 'event-log-corrupt', position: 3 });
    });

    it('refuses an event whose metadata this adapter did not write with EventLogCorruptError', () => {
      expect(() => toStoredRecord(resolvedAt(0n, { metadata: { other: true } }), 1)).toThrow(EventLogCorruptError);
    });
  });

  describe('snapshot records', () => {
    it('round-trips position, schema version and state', () => {
      const snapshot = { position: 7, schemaVersion: 2, state: { leases: [{ fence: 3 }] } };
      const stored = toSnapshotEvent(snapshot, JSON.stringify(snapshot.state));

      const read = fromSnapshotEvent({
        event: { ...resolvedAt(0n).event!, type: stored.type, data: stored.data as Record<string, unknown> },
      } as ResolvedEvent);

      expect(read).toEqual(snapshot);
    });

    it('refuses a snapshot event with a bad envelope with EventLogCorruptError naming the field', () => {
      const bad = {
        event: {
          ...resolvedAt(0n).event!,
          type: 'CoordinatorSnapshot',
          data: { position: -1, schemaVersion: 1, state: {} },
        },
      } as ResolvedEvent;

      expect(() => fromSnapshotEvent(bad)).toThrow(/snapshot\.position/);
    });
  });

  describe('errors', () => {
    it('turns a wrong expected revision into ExpectedVersionConflictError with the actual version', () => {
      const error = translateAppendError(wrongExpectedVersion(4n, 1n), 2);

      expect(error).toBeInstanceOf(ExpectedVersionConflictError);
      expect(error).toMatchObject({ code: 'expected-version-conflict', expectedVersion: 2, actualVersion: 5 });
    });

    it('reports an actual version of 0 when the stream does not exist', () => {
      expect(translateAppendError(wrongExpectedVersion(NO_STREAM, 3n), 4)).toMatchObject({
        expectedVersion: 4,
        actualVersion: 0,
      });
    });

    it('turns connection loss into a retryable EventLogUnavailableError', () => {
      const error = translateError(new UnavailableError(), 'read');

      expect(error).toBeInstanceOf(EventLogUnavailableError);
      expect(error).toMatchObject({ code: 'event-log-unavailable', retryable: true, logName: 'eventstoredb' });
    });

    it('recognises a raw grpc UNAVAILABLE service error as connection loss', () => {
      const raw = Object.assign(new Error('14 UNAVAILABLE: No connection established'), {
        code: 14,
        details: 'No connection established',
        metadata: {},
      });

      expect(isConnectionError(raw)).toBe(true);
      expect(translateAppendError(raw, 0)).toBeInstanceOf(EventLogUnavailableError);
    });

    it.each([
      'Unmapped gRPC error: code: The operation was cancelled, message: "connection reset"',
      'Unmapped gRPC connection error: transport error',
    ])("recognises the read bridge's unmapped transport failure %j as connection loss", (message) => {
      const bridged = new UnknownError(
        Object.assign(new Error(message), { name: 'UnknownError', metadata: {} }) as never,
      );

      expect(bridged.message).toContain('Unmapped gRPC');
      expect(translateError(bridged, 'read')).toBeInstanceOf(EventLogUnavailableError);
    });

    it('passes other errors through unchanged', () => {
      const notFound = new StreamNotFoundError(undefined, 'x');
      const unknown = new UnknownError(undefined, 'boom');
      const bug = new TypeError('bug');

      expect(translateError(notFound, 'read')).toBe(notFound);
      expect(translateError(unknown, 'read')).toBe(unknown);
      expect(translateAppendError(bug, 0)).toBe(bug);
    });
  });

  describe('connection strings', () => {
    it.each([
      ['kurrentdb://localhost:2113?tls=false', 'kurrentdb://localhost:2113?tls=false'],
      ['esdb://localhost:2113?tls=false', 'kurrentdb://localhost:2113?tls=false'],
      ['esdb+discover://cluster.dns:2113', 'kurrentdb+discover://cluster.dns:2113'],
      ['kurrent://host:2113', 'kurrent://host:2113'],
    ])('gives the client %s as %s', (given, expected) => {
      expect(toKurrentConnectionString(given)).toBe(expected);
    });

    it('refuses a string without a scheme with TypeError naming the field', () => {
      expect(() => toKurrentConnectionString('localhost:2113')).toThrow(/connectionString/);
    });
  });
});
