/**
 * A renewal that asks for a shorter ttl must not move the coordinator's expiry earlier than the
 * deadline the holder already holds: until the renewal's reply is completed (and for ever if it
 * is lost), the holder's latest Lease still carries its previous deadline, and the holder's window
 * must stay a subset of the coordinator's (docs/design.md § "The library's rules", Client anchoring).
 */
import { describe, expect, it } from 'vitest';
import { LeaseClient } from './lease-client.js';
import { LeaseCoordinator } from './lease-coordinator.js';
import { createManualClock } from '../time/manual-clock.js';

describe('renewal with a shorter ttl', () => {
  it("never lets the coordinator grant another holder while the first holder's latest lease is still before its deadline", () => {
    // Given one timeline, no drift, 100 ms skew assumed by both clients
    const coordinatorClock = createManualClock('coordinator');
    const clockA = createManualClock('agent-a');
    const clockB = createManualClock('agent-b');
    const advance = (ms: number): void => [coordinatorClock, clockA, clockB].forEach((c) => c.advance(ms));
    const coordinator = new LeaseCoordinator({ clock: coordinatorClock, ttlMillis: 10_000 });
    const a = new LeaseClient({ clock: clockA, holderId: 'agent-a', clockSkewMillis: 100 });
    const b = new LeaseClient({ clock: clockB, holderId: 'agent-b', clockSkewMillis: 100 });

    // And agent-a holds a 10 s lease (deadline 9 900 on its clock)
    const acquire = a.beginAcquire('slot', { ttlMillis: 10_000 });
    const granted = coordinator.acquire(acquire);
    if (!granted.ok) throw new Error('expected a grant');
    const leaseA = a.completeAcquire(acquire, granted.grant);

    // When at 5 000 agent-a renews for 2 s and the reply is lost (the coordinator applied it)
    advance(5_000);
    const renewal = a.beginRenewal(leaseA, { ttlMillis: 2_000 });
    expect(coordinator.renew(renewal).ok).toBe(true);

    // And at 7 000 agent-b asks for the lease
    advance(2_000);
    const acquireB = b.beginAcquire('slot', { ttlMillis: 10_000 });
    const outcomeB = coordinator.acquire(acquireB);

    // Then either agent-b is refused, or agent-a's latest lease has already expired
    const bothHold = outcomeB.ok && !leaseA.hasExpired();
    expect({ bGranted: outcomeB.ok, aStillValidMillis: leaseA.remainingMillis(), bothHold }).toMatchObject({
      bothHold: false,
    });
  });
});
