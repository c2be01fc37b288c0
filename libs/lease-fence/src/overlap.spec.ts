/**
 * The failure fencing exists for, written down as a test: a naive lease next to the real one on
 * clocks that step on every read, so the gap between a validity check and the write after it is
 * reproducible (a clock that only moves between calls never lands inside that gap).
 */
import { describe, expect, it } from 'vitest';
import { StaleFenceError } from './errors.js';
import { FenceGate } from './fence/fence-gate.js';
import { LeaseClient } from './lease/lease-client.js';
import { LeaseCoordinator } from './lease/lease-coordinator.js';
import type { AcquireOutcome, Grant, RenewOutcome } from './lease/outcomes.js';
import { createManualClock, type ManualClock } from './time/manual-clock.js';

const TTL_MILLIS = 1_000;
const STEP_PER_READ_MILLIS = 5;

/** Several manual clocks on one simulated timeline: `advance` moves them all. */
const timeline = <K extends string>(
  ...domains: K[]
): { clocks: Record<K, ManualClock>; advance: (ms: number) => void } => {
  const clocks = Object.fromEntries(
    domains.map((d) => [d, createManualClock(d, { stepPerRead: STEP_PER_READ_MILLIS })]),
  ) as Record<K, ManualClock>;
  return { clocks, advance: (ms) => domains.forEach((d) => clocks[d].advance(ms)) };
};

// ---- The naive lease: what this library replaces. Deliberately wrong; do not copy. ----------

/** Naive coordinator: one expiresAt per resource, on the shared wall clock. */
class NaiveCoordinator {
  private readonly holders = new Map<string, { holderId: string; expiresAt: number }>();
  constructor(private readonly wall: ManualClock) {}
  acquire(resource: string, holderId: string): boolean {
    const now = this.wall.now().millis;
    const current = this.holders.get(resource);
    if (current !== undefined && now < current.expiresAt) return false;
    this.holders.set(resource, { holderId, expiresAt: now + TTL_MILLIS });
    return true;
  }
  renew(resource: string, holderId: string): boolean {
    const now = this.wall.now().millis;
    const current = this.holders.get(resource);
    if (current === undefined || current.holderId !== holderId) return false;
    current.expiresAt = now + TTL_MILLIS;
    return true;
  }
}

/** Naive holder: stores expiresAt from when the reply arrived and checks `now < expiresAt`. */
class NaiveHolder {
  private expiresAt = Number.NEGATIVE_INFINITY;
  constructor(private readonly wall: ManualClock) {}
  onReply(): void {
    this.expiresAt = this.wall.now().millis + TTL_MILLIS;
  }
  isValid(): boolean {
    return this.wall.now().millis < this.expiresAt;
  }
}

/** A resource with no fencing: every write lands, nothing is recorded. */
class UnfencedStore {
  value: string | undefined;
  readonly writes: string[] = [];
  write(holderId: string): void {
    this.value = holderId;
    this.writes.push(holderId);
  }
}

// ---- The real lease ----------------------------------------------------------------------------

const grantOf = (outcome: AcquireOutcome | RenewOutcome): Grant => {
  if (!outcome.ok) throw new Error(`expected a grant, got ${outcome.reason}`);
  return outcome.grant;
};

describe('overlap', () => {
  describe('a holder stalls between its validity check and its write', () => {
    it('naive: both holders pass their own check, both writes land, the stale one wins, nothing is recorded', () => {
      // Given agent-a holds the naive lease
      const { clocks, advance } = timeline('wall');
      const coordinator = new NaiveCoordinator(clocks.wall);
      const store = new UnfencedStore();
      const a = new NaiveHolder(clocks.wall);
      const b = new NaiveHolder(clocks.wall);
      expect(coordinator.acquire('slot', 'agent-a')).toBe(true);
      a.onReply();
      // When agent-a checks at ~950, then stalls 440 ms in a model call before writing
      advance(950 - clocks.wall.peek().millis);
      const aCheck = a.isValid();
      advance(440);
      // ...meanwhile the coordinator hands the slot to agent-b, which checks and writes
      expect(coordinator.acquire('slot', 'agent-b')).toBe(true);
      b.onReply();
      const bCheck = b.isValid();
      if (bCheck) store.write('agent-b');
      if (aCheck) store.write('agent-a');
      // Then
      expect([aCheck, bCheck]).toEqual([true, true]);
      expect(store.writes).toEqual(['agent-b', 'agent-a']);
      expect(store.value).toBe('agent-a');
    });

    it('real: the same sequence is refused by the gate and logged with both holder ids and fences', () => {
      // Given agent-a holds a real lease
      const { clocks, advance } = timeline('coordinator', 'agent-a', 'agent-b');
      const coordinator = new LeaseCoordinator({ clock: clocks.coordinator, ttlMillis: TTL_MILLIS });
      const gate = new FenceGate('slot');
      const store = new UnfencedStore();
      const a = new LeaseClient({ clock: clocks['agent-a'], holderId: 'agent-a', clockSkewMillis: 20 });
      const b = new LeaseClient({ clock: clocks['agent-b'], holderId: 'agent-b', clockSkewMillis: 20 });
      const requestA = a.beginAcquire('slot');
      const leaseA = a.completeAcquire(requestA, grantOf(coordinator.acquire(requestA)));
      // When agent-a checks at ~950 (the advisory check passes too), then stalls 440 ms
      advance(950 - clocks['agent-a'].peek().millis);
      const aCheck = !leaseA.hasExpired();
      advance(440);
      const requestB = b.beginAcquire('slot');
      const leaseB = b.completeAcquire(requestB, grantOf(coordinator.acquire(requestB)));
      gate.commit(leaseB.token, () => store.write('agent-b'));
      const late = (): void => gate.commit(leaseA.token, () => store.write('agent-a'));
      // Then
      expect(aCheck).toBe(true);
      expect(late).toThrow(StaleFenceError);
      expect(store.writes).toEqual(['agent-b']);
      expect(gate.rejections).toEqual([
        {
          seq: 1,
          resource: 'slot',
          kind: 'stale',
          rejected: { holderId: 'agent-a', fence: 1 },
          current: { holderId: 'agent-b', fence: 2 },
        },
      ]);
    });
  });

  describe('a renewal reply arrives late', () => {
    it('naive: dating the renewal from the reply makes the holder outlive the coordinator, and both writes land', () => {
      // Given agent-a holds the naive lease and sends a renewal at ~0
      const { clocks, advance } = timeline('wall');
      const coordinator = new NaiveCoordinator(clocks.wall);
      const store = new UnfencedStore();
      const a = new NaiveHolder(clocks.wall);
      const b = new NaiveHolder(clocks.wall);
      coordinator.acquire('slot', 'agent-a');
      a.onReply();
      // When the coordinator extends at ~40 and the reply reaches agent-a at ~900
      advance(40);
      coordinator.renew('slot', 'agent-a');
      advance(860);
      a.onReply();
      // ...agent-b takes the slot after the coordinator's expiry, and agent-a writes at ~1200
      advance(200);
      coordinator.acquire('slot', 'agent-b');
      b.onReply();
      if (b.isValid()) store.write('agent-b');
      advance(100);
      if (a.isValid()) store.write('agent-a');
      // Then
      expect(store.writes).toEqual(['agent-b', 'agent-a']);
    });

    it('real: the deadline is anchored at the send instant, so the holder knows it lost the lease, and the gate refuses it anyway', () => {
      // Given the same timeline with the real lease
      const { clocks, advance } = timeline('coordinator', 'agent-a', 'agent-b');
      const coordinator = new LeaseCoordinator({ clock: clocks.coordinator, ttlMillis: TTL_MILLIS });
      const gate = new FenceGate('slot');
      const store = new UnfencedStore();
      const a = new LeaseClient({ clock: clocks['agent-a'], holderId: 'agent-a', clockSkewMillis: 20 });
      const b = new LeaseClient({ clock: clocks['agent-b'], holderId: 'agent-b', clockSkewMillis: 20 });
      const acquireA = a.beginAcquire('slot');
      const firstLease = a.completeAcquire(acquireA, grantOf(coordinator.acquire(acquireA)));
      // When agent-a sends a renewal, the coordinator extends 40 ms later, and the reply arrives at ~900
      const renewal = a.beginRenewal(firstLease);
      advance(40);
      const renewedGrant = grantOf(coordinator.renew(renewal));
      advance(860);
      const leaseA = a.completeRenewal(renewal, renewedGrant);
      advance(200);
      const acquireB = b.beginAcquire('slot');
      const leaseB = b.completeAcquire(acquireB, grantOf(coordinator.acquire(acquireB)));
      gate.commit(leaseB.token, () => store.write('agent-b'));
      advance(100);
      // Then agent-a's own deadline ended before the coordinator's expiry (same timeline, same origin)
      expect(leaseA.deadline.millis).toBeLessThanOrEqual(renewedGrant.coordinatorExpiresAt.millis);
      expect(leaseA.hasExpired()).toBe(true);
      // ...and a write it makes anyway is refused and logged
      expect(() => gate.commit(leaseA.token, () => store.write('agent-a'))).toThrow(StaleFenceError);
      expect(store.writes).toEqual(['agent-b']);
      expect(gate.rejections[0]).toMatchObject({
        rejected: { holderId: 'agent-a', fence: 1 },
        current: { holderId: 'agent-b', fence: 2 },
      });
    });
  });
});
