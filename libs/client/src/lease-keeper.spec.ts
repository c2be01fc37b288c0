import { LeaseClient, LeaseCoordinator, createManualClock, type Lease, type ManualClock } from 'lease-fence';
import { beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError } from './errors.js';
import { LeaseKeeper, type LeaseRenewer } from './lease-keeper.js';
import type { ReleaseResult, RenewResult } from './results.js';
import { createManualTimers, type ManualTimers } from './testing/manual-timers.js';

const TTL_MILLIS = 3000;
const SKEW_MILLIS = 100;

/** A renewer whose replies the test hands out by hand, ignoring aborts like a reply already on the wire. */
class ScriptedRenewer implements LeaseRenewer<Lease> {
  readonly renewals: { lease: Lease; reply: (result: RenewResult<Lease>) => void }[] = [];
  readonly releases: Lease[] = [];
  #onRenewal: (() => void) | undefined;

  renew(lease: Lease): Promise<RenewResult<Lease>> {
    return new Promise((resolve) => {
      this.renewals.push({ lease, reply: resolve });
      this.#onRenewal?.();
    });
  }

  release(lease: Lease): Promise<ReleaseResult> {
    this.releases.push(lease);
    return Promise.resolve({ ok: true });
  }

  nextRenewal(count: number): Promise<void> {
    if (this.renewals.length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onRenewal = () => {
        if (this.renewals.length >= count) resolve();
      };
    });
  }
}

describe('LeaseKeeper (scripted renewer)', () => {
  let clock: ManualClock;
  let timers: ManualTimers;
  let leases: LeaseClient;
  let coordinator: LeaseCoordinator;
  let renewer: ScriptedRenewer;

  /** A real grant and a real renewal grant, made by the library in-process. */
  const acquire = (ttlMillis = TTL_MILLIS): Lease => {
    const request = leases.beginAcquire('deploy-slot-a', { ttlMillis });
    const outcome = coordinator.acquire(request);
    if (!outcome.ok) throw new Error('expected a grant');
    return leases.completeAcquire(request, outcome.grant);
  };
  const renewalOf = (lease: Lease): RenewResult<Lease> => {
    const request = leases.beginRenewal(lease);
    const outcome = coordinator.renew(request);
    if (!outcome.ok) throw new Error('expected a renewal');
    return { ok: true, lease: leases.completeRenewal(request, outcome.grant) };
  };

  beforeEach(() => {
    clock = createManualClock('client', { start: 0 });
    timers = createManualTimers(clock);
    leases = new LeaseClient({ clock, holderId: 'agent-1', clockSkewMillis: SKEW_MILLIS });
    coordinator = new LeaseCoordinator({ clock: createManualClock('coordinator'), ttlMillis: TTL_MILLIS });
    renewer = new ScriptedRenewer();
  });

  it('sends the first renewal once half of the lease window has elapsed', async () => {
    // Arrange
    const keeper = new LeaseKeeper(renewer, acquire(), { timers });
    await timers.waitForSleepers(2);

    // Act
    await timers.advance(1449);
    const before = renewer.renewals.length;
    await timers.advance(1);
    await renewer.nextRenewal(1);

    // Assert: window 2900 ms, renewal at 1450 ms.
    expect(before).toBe(0);
    expect(renewer.renewals).toHaveLength(1);
    expect(keeper.state).toBe('held');
  });

  it('adopts the renewed lease, so the watchdog waits for the new deadline', async () => {
    // Arrange
    const keeper = new LeaseKeeper(renewer, acquire(), { timers });
    await timers.waitForSleepers(2);
    await timers.advance(1450);
    await renewer.nextRenewal(1);

    // Act
    const renewal = renewalOf(keeper.lease);
    renewer.renewals[0]?.reply(renewal);
    await timers.advance(1450); // past the first deadline (2900), before the renewed one (4350)

    // Assert
    expect(keeper.state).toBe('held');
    expect(keeper.signal.aborted).toBe(false);
    expect(keeper.view.deadline.millis).toBe(1450 + TTL_MILLIS - SKEW_MILLIS);
  });

  it('never revives the lease when a renewal reply arrives after the release', async () => {
    // Arrange: a renewal is on the wire when the holder releases.
    const renewed: Lease[] = [];
    const keeper = new LeaseKeeper(renewer, acquire(), { timers, onRenewed: (lease) => renewed.push(lease) });
    const original = keeper.lease;
    await timers.waitForSleepers(2);
    await timers.advance(1450);
    await renewer.nextRenewal(1);

    // Act
    const released = await keeper.release();
    renewer.renewals[0]?.reply(renewalOf(original));
    await timers.advance(0);

    // Assert
    expect(released).toEqual({ ok: true });
    expect(keeper.state).toBe('released');
    expect(keeper.lease).toBe(original);
    expect(renewed).toHaveLength(0);
    expect(keeper.signal.reason).toMatchObject({ code: 'lease-lost', reason: 'released' });
  });

  it('never revives the lease when a renewal reply arrives after the deadline passed', async () => {
    // Arrange
    const lost: LeaseLostError[] = [];
    const keeper = new LeaseKeeper(renewer, acquire(), { timers, onLost: (error) => lost.push(error) });
    const original = keeper.lease;
    await timers.waitForSleepers(2);
    await timers.advance(1450);
    await renewer.nextRenewal(1);

    // Act: the deadline passes with the renewal still unanswered; then its (good) reply lands.
    await timers.advance(1450);
    renewer.renewals[0]?.reply(renewalOf(original));
    await timers.advance(0);

    // Assert
    expect(keeper.state).toBe('lost');
    expect(keeper.lease).toBe(original);
    expect(keeper.signal.aborted).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(keeper.signal.reason).toMatchObject({ reason: 'deadline-passed', fence: 1 });
    expect(lost).toHaveLength(1);
  });

  it('sends no release after the coordinator answered expired, and reports that denial', async () => {
    // Arrange
    const keeper = new LeaseKeeper(renewer, acquire(), { timers });
    await timers.waitForSleepers(2);
    await timers.advance(1450);
    await renewer.nextRenewal(1);
    renewer.renewals[0]?.reply({ ok: false, reason: 'expired' });
    await timers.advance(0);

    // Act
    const released = await keeper.release();

    // Assert
    expect(keeper.state).toBe('lost');
    expect(keeper.lost?.reason).toBe('expired');
    expect(released).toEqual({ ok: false, reason: 'expired' });
    expect(renewer.releases).toHaveLength(0);
  });

  it('schedules a lease of the longest ttl with every timer below 2^31 ms', async () => {
    // Arrange
    const ttlMillis = 2 ** 31 - 1;

    // Act
    new LeaseKeeper(renewer, acquire(ttlMillis), { timers });
    await timers.waitForSleepers(2);

    // Assert
    expect(timers.pendingMillis.every((millis) => millis < 2 ** 31)).toBe(true);
    expect(Math.max(...timers.pendingMillis)).toBe(ttlMillis - SKEW_MILLIS);
  });

  it.each([0, 1, Number.NaN, -0.5])('refuses renewAtFraction %d with a RangeError naming it', (renewAtFraction) => {
    // Act / Assert
    expect(() => new LeaseKeeper(renewer, acquire(), { timers, renewAtFraction })).toThrow(
      /renewAtFraction must be strictly between 0 and 1/,
    );
  });
});
