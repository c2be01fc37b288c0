import {
  coordinatorStarted,
  fenceRejected,
  leaseExpired,
  leaseGranted,
  leaseRenewed,
  rejectionsMissing,
} from '@lease-fence/coordinator-core/testing';
import { FenceGate, Instant, StaleFenceError, type FenceToken } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import {
  InvariantChecker,
  type ClockBook,
  type CompletedLease,
  type InvariantId,
  type Violation,
} from './invariants.js';

/** Readings of each domain are true time plus an offset (boot-2 and agent-a run on other origins). */
const OFFSETS: Record<string, number> = {
  'boot-1': 0,
  'boot-2': 10_000,
  'boot-3': 20_000,
  'agent-a': 500,
  'agent-b': 700,
};
const clocks: ClockBook = { trueTimeOf: (domain, millis) => millis - OFFSETS[domain]! };

function setup(): { checker: InvariantChecker; violations: Violation[] } {
  const violations: Violation[] = [];
  const checker = new InvariantChecker(
    clocks,
    () => 0,
    (violation) => violations.push(violation),
    1024,
  );
  return { checker, violations };
}

const firstInvariant = (violations: readonly Violation[]): InvariantId | undefined => violations[0]?.invariant;

/** A lease agent-a completed: deadline at true time `deadlineAt`, grant expiring at true time `expiresAt` (boot-1). */
const completed = (fields: Partial<CompletedLease> & { deadlineAt: number; expiresAt: number }): CompletedLease => ({
  kind: 'acquire',
  resource: 'slot',
  holderId: 'agent-a',
  fence: 1,
  requestId: 'req-1',
  deadline: Instant.of(fields.deadlineAt + OFFSETS['agent-a']!, 'agent-a'),
  coordinatorExpiresAt: Instant.of(fields.expiresAt, 'boot-1'),
  ...fields,
});

describe('InvariantChecker', () => {
  describe('I1 no stale write', () => {
    it('flags a write whose fence is below one the resource already applied', () => {
      const { checker, violations } = setup();
      checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-b', fence: 2 });
      checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-a', fence: 1 });
      expect(firstInvariant(violations)).toBe('I1-no-stale-write');
    });

    it('flags an equal fence from another holder, and accepts a lower fence in a new incarnation', () => {
      const equal = setup();
      equal.checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-b', fence: 2 });
      equal.checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-a', fence: 2 });
      expect(firstInvariant(equal.violations)).toBe('I1-no-stale-write');

      const restarted = setup();
      restarted.checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-b', fence: 2 });
      restarted.checker.writeApplied('slot#2', { resource: 'slot', holderId: 'agent-a', fence: 1 });
      restarted.checker.writeApplied('slot#2', { resource: 'slot', holderId: 'agent-a', fence: 1 });
      expect(restarted.violations).toEqual([]);
    });
  });

  describe('I2 fence unique and I3 fence order', () => {
    it('flags a fence granted twice across boots', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 1, { atMillis: 10_000 }));
      checker.eventLanded(coordinatorStarted({ bootId: 'boot-2', atMillis: 20_000 }));
      checker.eventLanded(
        leaseGranted('other', 'agent-b', 1, { bootId: 'boot-2', atMillis: 20_000, requestId: 'req-b' }),
      );
      expect(firstInvariant(violations)).toBe('I2-fence-unique');
    });

    it('flags a client holding a fence the log gave to another holder', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-b', 1));
      checker.leaseCompleted(completed({ deadlineAt: 100, expiresAt: 10_000 }));
      expect(firstInvariant(violations)).toBe('I2-fence-unique');
    });

    it('flags a resource granted a lower fence after a higher one', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 3));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 3, { atMillis: 10_000 }));
      checker.eventLanded(leaseGranted('slot', 'agent-b', 2, { atMillis: 10_000 }));
      expect(firstInvariant(violations)).toBe('I3-fence-order');
    });
  });

  describe('I4 holder window', () => {
    it('accepts a deadline at or before the grant expiry and before the generation ends', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { ttlMillis: 1000 }));
      checker.leaseCompleted(completed({ deadlineAt: 990, expiresAt: 1000 }));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 1, { atMillis: 1001 }));
      expect(violations).toEqual([]);
    });

    it('flags a deadline after the grant expiry', () => {
      const { checker, violations } = setup();
      checker.leaseCompleted(completed({ deadlineAt: 1000.5, expiresAt: 1000 }));
      expect(firstInvariant(violations)).toBe('I4-holder-window');
    });

    it('flags a recovery that re-anchors a carried lease before its holder deadline', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { ttlMillis: 1000 }));
      checker.leaseCompleted(completed({ deadlineAt: 990, expiresAt: 1000 }));
      checker.eventLanded(
        coordinatorStarted({
          bootId: 'boot-2',
          atMillis: 10_300,
          previousBootId: 'boot-1',
          recoveredFence: 1,
          carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 10_300 }],
        }),
      );
      expect(firstInvariant(violations)).toBe('I4-holder-window');
    });

    it('flags a generation the coordinator expires before its holder deadline', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { ttlMillis: 1000 }));
      checker.leaseCompleted(completed({ deadlineAt: 990, expiresAt: 1000 }));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 1, { atMillis: 800 }));
      expect(firstInvariant(violations)).toBe('I4-holder-window');
    });
  });

  describe('I5 acknowledged means durable', () => {
    it('flags a lease a client received whose grant never landed', () => {
      const { checker, violations } = setup();
      checker.leaseCompleted(completed({ deadlineAt: 100, expiresAt: 1000 }));
      checker.checkAcknowledgedDurable('end of run');
      expect(firstInvariant(violations)).toBe('I5-ack-durable');
    });

    it('checks at each recovery, skipping what the recovering boot answered itself', () => {
      const { checker, violations } = setup();
      checker.leaseCompleted(
        completed({ deadlineAt: 100, expiresAt: 1000, coordinatorExpiresAt: Instant.of(11_000, 'boot-2') }),
      );
      checker.eventLanded(coordinatorStarted({ bootId: 'boot-2' }));
      expect(violations).toEqual([]);
      checker.eventLanded(coordinatorStarted({ bootId: 'boot-3', previousBootId: 'boot-2' }));
      expect(firstInvariant(violations)).toBe('I5-ack-durable');
    });
  });

  describe('I6 refusal recorded and I8 refusal justified', () => {
    const refuse = (gate: FenceGate, token: FenceToken): unknown => {
      try {
        gate.commit(token, () => undefined);
      } catch (error) {
        return error;
      }
      throw new Error('expected a refusal');
    };

    it('accepts a real gate refusal that reaches the log, and flags one that never does', () => {
      const { checker, violations } = setup();
      const gate = new FenceGate('slot');
      const newer = { resource: 'slot', holderId: 'agent-b', fence: 2 };
      gate.commit(newer, () => checker.writeApplied('slot#1', newer));
      const stale = { resource: 'slot', holderId: 'agent-a', fence: 1 };
      checker.refused(
        {
          incarnation: 'slot#1',
          gateId: 'gate-slot',
          token: stale,
          error: refuse(gate, stale),
          gateRejections: gate.rejections,
        },
        true,
      );
      expect(violations).toEqual([]);
      checker.checkReportsRecorded();
      expect(firstInvariant(violations)).toBe('I6-refusal-recorded');

      const reported = setup();
      reported.checker.admitted('slot#1', newer);
      reported.checker.refused(
        {
          incarnation: 'slot#1',
          gateId: 'gate-slot',
          token: stale,
          error: refuse(gate, stale),
          gateRejections: gate.rejections,
        },
        true,
      );
      reported.checker.eventLanded(coordinatorStarted());
      reported.checker.eventLanded(
        fenceRejected({
          gateId: 'gate-slot',
          resource: 'slot',
          seq: 2,
          rejected: { holderId: 'agent-a', fence: 1 },
          current: { holderId: 'agent-b', fence: 2 },
        }),
      );
      reported.checker.checkReportsRecorded();
      expect(reported.violations).toEqual([]);
    });

    it("flags a refusal that is not a StaleFenceError with the gate's record", () => {
      const { checker, violations } = setup();
      const token = { resource: 'slot', holderId: 'agent-a', fence: 1 };
      checker.refused(
        { incarnation: 'slot#1', gateId: 'gate-slot', token, error: new Error('nope'), gateRejections: [] },
        false,
      );
      expect(firstInvariant(violations)).toBe('I6-refusal-recorded');
    });

    it("flags a refusal of the floor holder's own fence", () => {
      const { checker, violations } = setup();
      const token = { resource: 'slot', holderId: 'agent-a', fence: 3 };
      checker.admitted('slot#1', token);
      const record = {
        seq: 1,
        resource: 'slot',
        kind: 'stale' as const,
        rejected: { holderId: 'agent-a', fence: 3 },
        current: { holderId: 'agent-a', fence: 3 },
      };
      checker.refused(
        {
          incarnation: 'slot#1',
          gateId: 'gate-slot',
          token,
          error: new StaleFenceError(record),
          gateRejections: [record],
        },
        false,
      );
      expect(firstInvariant(violations)).toBe('I8-refusal-justified');
    });
  });

  describe('I7 no resurrection', () => {
    it('flags a renewal decided at or after the generation expiry', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { ttlMillis: 1000 }));
      checker.eventLanded(leaseRenewed('slot', 'agent-a', 1, { atMillis: 999, ttlMillis: 1000 }));
      expect(violations).toEqual([]);
      checker.eventLanded(leaseRenewed('slot', 'agent-a', 1, { atMillis: 1999, ttlMillis: 1000 }));
      checker.eventLanded(leaseRenewed('slot', 'agent-a', 1, { atMillis: 3000, ttlMillis: 1000 }));
      expect(firstInvariant(violations)).toBe('I7-no-resurrection');
    });

    it('flags a renewal of a generation that already ended', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { ttlMillis: 1000 }));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 1, { atMillis: 1000 }));
      checker.eventLanded(leaseRenewed('slot', 'agent-a', 1, { atMillis: 1001 }));
      expect(firstInvariant(violations)).toBe('I7-no-resurrection');
    });
  });

  describe('I9 retries are idempotent', () => {
    it('flags a second generation for the same holder and requestId', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(leaseGranted('slot', 'agent-a', 1, { requestId: 'agent-a/r1', ttlMillis: 1000 }));
      checker.eventLanded(leaseExpired('slot', 'agent-a', 1, { atMillis: 1000 }));
      checker.eventLanded(leaseGranted('slot', 'agent-a', 2, { requestId: 'agent-a/r1', atMillis: 1000 }));
      expect(firstInvariant(violations)).toBe('I9-retry-idempotent');
    });
  });

  describe('I11 gap justified', () => {
    it('accepts a gap whose refusals never reach the log, and flags a refusal that lands after it was declared missing', () => {
      // Arrange: #1 logged, #2 and #3 declared missing when #4 arrived
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(fenceRejected({ seq: 1 }));
      checker.eventLanded(rejectionsMissing(2, 3));
      checker.eventLanded(fenceRejected({ seq: 4 }));
      expect(violations).toEqual([]);

      // Act: #3 was only late (sent beside #4, not before it)
      checker.eventLanded(fenceRejected({ seq: 3 }));

      // Assert
      expect(firstInvariant(violations)).toBe('I11-gap-justified');
      expect(violations[0]?.message).toContain('#3');
    });

    it('flags a gap declared over a refusal already in the log', () => {
      const { checker, violations } = setup();
      checker.eventLanded(coordinatorStarted());
      checker.eventLanded(fenceRejected({ seq: 2 }));
      checker.eventLanded(rejectionsMissing(1, 2, { reportedSeq: 3 }));
      expect(firstInvariant(violations)).toBe('I11-gap-justified');
    });
  });

  it('keeps only the first violation and counts every check it made', () => {
    const { checker, violations } = setup();
    checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-b', fence: 2 });
    checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-a', fence: 1 });
    checker.writeApplied('slot#1', { resource: 'slot', holderId: 'agent-a', fence: 0.5 });
    expect(violations).toHaveLength(1);
    expect(checker.violation).toEqual(violations[0]);
    expect(checker.checks['I1-no-stale-write']).toBe(3);
  });
});
