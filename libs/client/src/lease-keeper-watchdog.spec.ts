/**
 * The keeper's watchdog follows the lease it holds now. A renewal with a shorter ttl (keeper option
 * `ttlMillis` below the acquired ttl) gives an EARLIER deadline; if the next renewal then gets no
 * answer, the signal must be aborted at that deadline, not at the one the watchdog saw when it
 * went to sleep.
 */
import { LeaseClient, LeaseCoordinator, createManualClock, type Lease, type ManualClock } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { LeaseKeeper, type LeaseRenewer } from './lease-keeper.js';
import type { ReleaseResult, RenewResult } from './results.js';
import { createManualTimers, type ManualTimers } from './testing/manual-timers.js';

describe('LeaseKeeper watchdog after a shortening renewal', () => {
  it('aborts the signal at the renewed (earlier) deadline when the next renewal gets no answer', async () => {
    // Given a 10 s lease (deadline 9 900) kept with 2 s renewals, on one timeline
    const clock: ManualClock = createManualClock('client', { start: 0 });
    const timers: ManualTimers = createManualTimers(clock);
    const leases = new LeaseClient({ clock, holderId: 'agent-1', clockSkewMillis: 100 });
    const coordinator = new LeaseCoordinator({ clock, ttlMillis: 10_000 });
    const pending: ((result: RenewResult<Lease>) => void)[] = [];
    let answered = 0;
    const renewer: LeaseRenewer<Lease> = {
      renew(lease: Lease, options): Promise<RenewResult<Lease>> {
        if (answered > 0) return new Promise((resolve) => pending.push(resolve)); // coordinator unreachable: no answer
        answered += 1;
        const request = leases.beginRenewal(
          lease,
          options.ttlMillis === undefined ? {} : { ttlMillis: options.ttlMillis },
        );
        const outcome = coordinator.renew(request);
        if (!outcome.ok) throw new Error('expected a renewal');
        return Promise.resolve({ ok: true, lease: leases.completeRenewal(request, outcome.grant) });
      },
      release: (): Promise<ReleaseResult> => Promise.resolve({ ok: true }),
    };
    const request = leases.beginAcquire('slot', { ttlMillis: 10_000 });
    const granted = coordinator.acquire(request);
    if (!granted.ok) throw new Error('expected a grant');
    const keeper = new LeaseKeeper(renewer, leases.completeAcquire(request, granted.grant), {
      timers,
      ttlMillis: 2_000,
    });
    await timers.waitForSleepers(2);

    // When the first renewal (at 4 950) is answered with a 2 s lease (deadline 6 850)
    await timers.advance(4_950);
    expect(keeper.view.deadline.millis).toBe(6_850);
    // And the next renewal is sent but never answered, and time passes the new deadline
    await timers.advance(1_000);
    await timers.advance(1_000); // now 6 950 > 6 850, the deadline the keeper holds

    // Then the keeper no longer trusts the lease
    expect({
      now: clock.peek().millis,
      remaining: keeper.view.remainingMillis(),
      aborted: keeper.signal.aborted,
      state: keeper.state,
    }).toMatchObject({ aborted: true, state: 'lost' });
  });
});
