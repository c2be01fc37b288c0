import { COORDINATOR_SNAPSHOT_SCHEMA_VERSION } from '@lease-fence/protocol';
import { Instant } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { EventLogCorruptError } from '../ports/event-log-errors.js';
import { acquire, at, foldEvents, release, renew } from '../testing/decider-specification.js';
import {
  coordinatorCheckpointed,
  coordinatorStarted,
  fenceFloorReported,
  fenceRejected,
  rejectionsMissing,
  leaseExpired,
  leaseGranted,
  leaseReleased,
  leaseRenewed,
  snapshotTaken,
} from '../testing/event-builders.js';
import { decide } from './decide.js';
import { evolve } from './evolve.js';
import {
  createInitialState,
  fromSnapshot,
  leasesOf,
  nextExpectedSeq,
  REJECTION_KEYS_KEPT,
  rejectionKey,
  toSnapshot,
} from './state.js';

const started = coordinatorStarted({ atMillis: 0 });
const grantedA = leaseGranted('slot', 'agent-a', 1, { atMillis: 1000, requestId: 'req-a' });
const restart = (atMillis: number, expiresAtMillis: number) =>
  coordinatorStarted({
    bootId: 'boot-2',
    atMillis,
    previousBootId: 'boot-1',
    recoveredFence: 1,
    graceDeadlineMillis: expiresAtMillis,
    carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis }],
  });

/** Expects `evolve` to refuse `event` after `history` with EventLogCorruptError at the next position, changing nothing. */
const expectRefused = (
  history: Parameters<typeof foldEvents>[0],
  event: Parameters<typeof evolve>[1],
  message: RegExp,
): void => {
  const state = foldEvents(history);
  const before = JSON.stringify(toSnapshot(state));
  const error = (() => {
    try {
      evolve(state, event);
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  expect(error).toBeInstanceOf(EventLogCorruptError);
  expect(error).toMatchObject({ position: history.length + 1 });
  expect((error as Error).message).toMatch(message);
  expect(JSON.stringify(toSnapshot(state))).toBe(before);
};

describe('evolve', () => {
  describe('CoordinatorStarted', () => {
    it("moves a carried lease into the new boot's clock domain at its grace deadline, marked in grace", () => {
      const state = foldEvents([started, grantedA, restart(100, 9100)]);
      expect(leasesOf(state)).toEqual([
        expect.objectContaining({
          resource: 'slot',
          holderId: 'agent-a',
          fence: 1,
          inGrace: true,
          grantedAt: Instant.of(100, 'boot-2'),
          expiresAt: Instant.of(9100, 'boot-2'),
        }),
      ]);
      expect(state.boot).toEqual({
        bootId: 'boot-2',
        startedAtMillis: 100,
        lastAtMillis: 100,
        graceDeadlineMillis: 9100,
      });
    });

    it('lets the holder renew a carried lease with the same fence, which ends its grace', () => {
      const state = foldEvents([started, grantedA, restart(100, 9100)]);
      const { events, outcome } = decide(renew('slot', 'agent-a', 1), state, at(200, { bootId: 'boot-2' }));
      expect(outcome).toMatchObject({ ok: true, grant: { fence: 1 } });
      events.forEach((event) => evolve(state, event));
      expect(leasesOf(state)[0]).toMatchObject({ fence: 1, inGrace: false });
    });

    it('blocks other holders until the grace deadline, then grants a higher fence', () => {
      const state = foldEvents([started, grantedA, restart(100, 9100)]);
      expect(decide(acquire('slot', 'agent-b', 'req-b'), state, at(9099, { bootId: 'boot-2' })).outcome).toMatchObject({
        ok: false,
        reason: 'held',
        retryAfterMillis: 1,
      });
      expect(decide(acquire('slot', 'agent-b', 'req-b'), state, at(9100, { bootId: 'boot-2' })).outcome).toMatchObject({
        ok: true,
        grant: { fence: 2 },
      });
    });

    it('keeps the replay cache, so a retry after the restart gets the grant it was owed', () => {
      const state = foldEvents([started, grantedA, restart(100, 9100)]);
      expect(decide(acquire('slot', 'agent-a', 'req-a'), state, at(200, { bootId: 'boot-2' }))).toEqual({
        events: [],
        outcome: {
          ok: true,
          grant: {
            resource: 'slot',
            holderId: 'agent-a',
            fence: 1,
            ttlMillis: 10_000,
            requestId: 'req-a',
            coordinatorExpiresAt: Instant.of(9100, 'boot-2'),
          },
        },
      });
    });

    it('refuses a start that lowers the fence counter', () => {
      expectRefused(
        [started, grantedA],
        coordinatorStarted({
          bootId: 'boot-2',
          previousBootId: 'boot-1',
          recoveredFence: 0,
          carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 5 }],
        }),
        /fences would go backwards/,
      );
    });

    it('refuses a start that does not carry a current lease', () => {
      expectRefused(
        [started, grantedA],
        coordinatorStarted({ bootId: 'boot-2', previousBootId: 'boot-1', recoveredFence: 1 }),
        /not carried/,
      );
    });

    it('refuses a start that reuses the previous boot id', () => {
      expectRefused([started], coordinatorStarted({ bootId: 'boot-1', previousBootId: 'boot-1' }), /reused/);
    });
  });

  describe('consistency checks', () => {
    it('refuses a log that does not begin with CoordinatorStarted', () => {
      expectRefused([], grantedA, /does not begin with CoordinatorStarted/);
    });

    it('refuses a grant whose fence is not above every fence issued before', () => {
      expectRefused(
        [started, grantedA, leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 })],
        leaseGranted('slot', 'agent-b', 1, { atMillis: 11_000 }),
        /issued twice/,
      );
    });

    it('refuses a renewal of a lease that is not current', () => {
      expectRefused([started], leaseRenewed('slot', 'agent-a', 1, { atMillis: 5 }), /does not match the current lease/);
    });

    it('refuses an event of another boot after this one started', () => {
      expectRefused(
        [started, grantedA],
        coordinatorCheckpointed({ bootId: 'boot-0', atMillis: 2000 }),
        /written by boot "boot-0"/,
      );
    });

    it('refuses a reading that goes backwards within a boot', () => {
      expectRefused(
        [started, grantedA],
        coordinatorCheckpointed({ atMillis: 999 }),
        /before the boot's previous reading/,
      );
    });

    it('refuses a FenceFloorReported whose counter would sit below the reported fence', () => {
      expectRefused(
        [started],
        fenceFloorReported('slot', 'agent-a', 57, { atMillis: 1, raisedTo: 56 }),
        /raisedTo 56 is below the reported fence 57/,
      );
    });

    it('refuses a SnapshotTaken that names another position than its own', () => {
      expectRefused([started], snapshotTaken(7, { atMillis: 1 }), /covers position 7/);
    });
  });

  describe('FenceRejected', () => {
    it('keeps the rejection with its position and remembers its idempotency key with its content', () => {
      const state = foldEvents([started, fenceRejected({ atMillis: 3, seq: 4 })]);
      expect(state.rejections).toEqual([expect.objectContaining({ seq: 4, gateId: 'gate-1', position: 2 })]);
      expect([...state.rejectionKeys]).toEqual([
        [rejectionKey('gate-1', 'slot', 4), '["stale","agent-a",1,"agent-b",2]'],
      ]);
    });

    it('remembers at most REJECTION_KEYS_KEPT idempotency keys, evicting the oldest, so memory and snapshots stop growing', () => {
      // Arrange: two more rejections than the keys kept
      const state = foldEvents([started]);
      const total = REJECTION_KEYS_KEPT + 2;
      // Act
      for (let seq = 1; seq <= total; seq += 1) evolve(state, fenceRejected({ atMillis: 1, seq }));
      // Assert: the two oldest keys are gone, the newest kept, and the snapshot holds exactly the kept ones
      expect(state.rejectionKeys.size).toBe(REJECTION_KEYS_KEPT);
      expect(state.rejectionKeys.has(rejectionKey('gate-1', 'slot', 1))).toBe(false);
      expect(state.rejectionKeys.has(rejectionKey('gate-1', 'slot', 2))).toBe(false);
      expect(state.rejectionKeys.has(rejectionKey('gate-1', 'slot', 3))).toBe(true);
      expect(state.rejectionKeys.has(rejectionKey('gate-1', 'slot', total))).toBe(true);
      const snapshot = toSnapshot(state).state as { rejectionKeys: readonly string[] };
      expect(snapshot.rejectionKeys).toHaveLength(REJECTION_KEYS_KEPT);
      expect(fromSnapshot(toSnapshot(state))?.rejectionKeys.size).toBe(REJECTION_KEYS_KEPT);
    });
  });

  describe('RejectionsMissing', () => {
    it('moves the next expected seq past the missing range, and a late report below it never lowers it', () => {
      const state = foldEvents([
        started,
        fenceRejected({ atMillis: 3, seq: 1 }),
        rejectionsMissing(2, 4, { atMillis: 4 }),
        fenceRejected({ atMillis: 4, seq: 5 }),
        fenceRejected({ atMillis: 5, seq: 3 }),
      ]);
      expect(nextExpectedSeq(state, 'gate-1', 'slot')).toBe(6);
      expect(nextExpectedSeq(state, 'gate-2', 'slot')).toBe(1);
    });

    it('refuses an empty range, or one that reaches the reported seq, as corrupt', () => {
      expect(() => foldEvents([started, rejectionsMissing(3, 2, { atMillis: 3 })])).toThrow(EventLogCorruptError);
      expect(() => foldEvents([started, rejectionsMissing(2, 4, { atMillis: 3, reportedSeq: 4 })])).toThrow(
        /missing range 2\.\.4/,
      );
    });
  });
});

/** agent-a's lease on `slot` expired and agent-b holds fence 2: where the rejection cases below start. */
const slotHandedOver = [
  started,
  grantedA,
  leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 }),
  leaseGranted('slot', 'agent-b', 2, { atMillis: 11_000 }),
];
/** gate-1's report, as refusal `seq`, of agent-a's late write after {@link slotHandedOver}. */
const lateWriteReport = (seq: number) =>
  ({
    type: 'RecordFenceRejection',
    gateId: 'gate-1',
    resource: 'slot',
    seq,
    kind: 'stale',
    rejected: { holderId: 'agent-a', fence: 1 },
    current: { holderId: 'agent-b', fence: 2 },
  }) as const;

describe('snapshots of the state', () => {
  it('restores an equal state from its JSON form, which then decides the same', () => {
    // Arrange
    const state = foldEvents([
      started,
      grantedA,
      fenceRejected({ atMillis: 1500 }),
      restart(100, 9100),
      leaseGranted('other', 'agent-b', 2, { bootId: 'boot-2', atMillis: 200 }),
    ]);
    // Act
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>);
    // Assert
    expect(restored).toEqual(state);
    const now = at(300, { bootId: 'boot-2' });
    expect(decide(acquire('other', 'agent-c', 'req-c'), restored!, now)).toEqual(
      decide(acquire('other', 'agent-c', 'req-c'), state, now),
    );
  });

  it('keeps the content of each recorded rejection, so a restored state still tells a duplicate from a seq-conflict', () => {
    // Arrange
    const state = foldEvents([...slotHandedOver, fenceRejected({ atMillis: 11_500, seq: 4 })]);
    const report = lateWriteReport(4);
    // Act
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>);
    // Assert
    expect(restored).toBeDefined();
    expect(decide(report, restored!, at(12_000)).outcome).toEqual({ ok: true, duplicate: true });
    expect(
      decide({ ...report, rejected: { holderId: 'agent-c', fence: 1 } }, restored!, at(12_000)).outcome,
    ).toMatchObject({ ok: false, reason: 'seq-conflict' });
  });

  it('keeps the highest fence of a resource whose lease ended, so renew still answers expired after a restore', () => {
    // Arrange: 'slot' expired and was swept; replay cache too small to remember its grant
    const state = foldEvents(
      [started, grantedA, leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 })],
      createInitialState({ replayCacheSize: 0 }),
    );
    // Act
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>);
    // Assert
    expect(decide(renew('slot', 'agent-a', 1), restored!, at(12_000)).outcome).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('remembers a LeaseReleased on replay and in a snapshot, so a retried release still answers ok after a restart', () => {
    // Arrange: agent-a released 'slot' (the reply was lost), then the coordinator restarted
    const log = [started, grantedA, leaseReleased('slot', 'agent-a', 1, { atMillis: 2_000 })];
    const replayed = foldEvents(log);
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(replayed))) as ReturnType<typeof toSnapshot>);
    for (const state of [replayed, restored!]) {
      // Act: the SDK retries the same release after reconnecting
      const retry = decide(release('slot', 'agent-a', 1), state, at(3_000));
      // Assert: ok, and no second LeaseReleased; another holder's token is still an ended generation
      expect(retry).toEqual({ events: [], outcome: { ok: true } });
      expect(decide(release('slot', 'agent-b', 1), state, at(3_000)).outcome).toEqual({
        ok: false,
        reason: 'expired',
      });
    }
  });

  it('keeps the highest seq of each gate and resource, so a restored state still detects a gap', () => {
    // Arrange
    const state = foldEvents([...slotHandedOver, fenceRejected({ atMillis: 11_500, seq: 1 })]);
    const report = {
      type: 'RecordFenceRejection',
      gateId: 'gate-1',
      resource: 'slot',
      seq: 3,
      kind: 'stale',
      rejected: { holderId: 'agent-a', fence: 1 },
      current: { holderId: 'agent-b', fence: 2 },
    } as const;
    // Act
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>);
    // Assert
    expect(decide(report, restored!, at(12_000)).events.map((event) => event.type)).toEqual([
      'RejectionsMissing',
      'FenceRejected',
    ]);
    expect(decide({ ...report, seq: 2 }, restored!, at(12_000)).events.map((event) => event.type)).toEqual([
      'FenceRejected',
    ]);
  });

  it('keeps the seqs declared missing, so a restored state records a late one once and a resend of a recorded one never again', () => {
    // Arrange: seq 1 recorded, 2..3 declared missing when 4 came, then 3 came late
    const state = foldEvents([
      ...slotHandedOver,
      fenceRejected({ atMillis: 11_500, seq: 1 }),
      rejectionsMissing(2, 3, { atMillis: 11_600 }),
      fenceRejected({ atMillis: 11_600, seq: 4 }),
      fenceRejected({ atMillis: 11_700, seq: 3 }),
    ]);
    // Act: restored from a snapshot whose rejection keys were all pushed out (as by other gates' reports)
    const json = JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>;
    const restored = fromSnapshot({ ...json, state: { ...(json.state as object), rejectionKeys: [] } });
    // Assert: 2 is still missing (recorded when it comes); 1, 3 and 4 were recorded (a resend appends nothing)
    for (const seq of [1, 2, 3, 4]) {
      expect(decide(lateWriteReport(seq), restored!, at(12_000)).events.map((event) => event.type)).toEqual(
        seq === 2 ? ['FenceRejected'] : [],
      );
    }
  });

  it.each([
    [
      'the seqs declared missing of each gate and resource',
      (json: Record<string, unknown>) => ({
        ...json,
        rejectionSeqs: (json['rejectionSeqs'] as Record<string, unknown>[]).map(
          ({ missing: _missing, ...seqs }) => seqs,
        ),
      }),
    ],
    [
      'the highest rejection seq of each gate and resource',
      (json: Record<string, unknown>) => ({ ...json, rejectionSeqs: undefined }),
    ],
    [
      'highestFences in its lease table',
      (json: Record<string, unknown>) => ({
        ...json,
        table: { ...(json['table'] as object), highestFences: undefined },
      }),
    ],
    [
      'the renewals its lease table remembers',
      (json: Record<string, unknown>) => ({
        ...json,
        table: { ...(json['table'] as object), renewalReplayCache: undefined },
      }),
    ],
    [
      'the releases its lease table remembers',
      (json: Record<string, unknown>) => ({
        ...json,
        table: { ...(json['table'] as object), releaseReplayCache: undefined },
      }),
    ],
    [
      'the content of each rejection key',
      (json: Record<string, unknown>) => ({ ...json, rejectionKeys: [rejectionKey('gate-1', 'slot', 1)] }),
    ],
  ])('ignores a snapshot written before it kept %s, so the caller replays the whole log', (_what, legacy) => {
    const snapshot = toSnapshot(foldEvents([started, grantedA, fenceRejected({ atMillis: 1500 })]));
    const written = JSON.parse(
      JSON.stringify({ ...snapshot, state: legacy(snapshot.state as Record<string, unknown>) }),
    ) as ReturnType<typeof toSnapshot>;
    expect(fromSnapshot(written)).toBeUndefined();
  });

  it('refuses a snapshot with a malformed rejection key entry, naming it', () => {
    const snapshot = toSnapshot(foldEvents([started, fenceRejected({ atMillis: 1500 })]));
    const broken = { ...snapshot, state: { ...(snapshot.state as object), rejectionKeys: ['["only one"]'] } };
    expect(() => fromSnapshot(broken)).toThrow(/snapshot\.rejectionKeys\.0/);
  });

  it('ignores a snapshot of another schema version, so the caller replays the whole log', () => {
    expect(
      fromSnapshot({ position: 0, schemaVersion: COORDINATOR_SNAPSHOT_SCHEMA_VERSION + 1, state: {} }),
    ).toBeUndefined();
  });

  it('refuses a malformed snapshot with EventLogCorruptError naming its position and the field', () => {
    const snapshot = toSnapshot(foldEvents([started, grantedA]));
    const broken = { ...snapshot, state: { ...(snapshot.state as object), carried: 'nope' } };
    expect(() => fromSnapshot(broken)).toThrow(EventLogCorruptError);
    expect(() => fromSnapshot(broken)).toThrow(/position 2.*snapshot\.carried/);
  });

  it('refuses a snapshot whose lease table does not restore', () => {
    const snapshot = toSnapshot(createInitialState());
    const broken = { ...snapshot, state: { ...(snapshot.state as object), table: { format: 9 } } };
    expect(() => fromSnapshot(broken)).toThrow(/snapshot\.table/);
  });
});
