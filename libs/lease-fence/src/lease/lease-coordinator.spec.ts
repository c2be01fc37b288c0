import { describe, expect, it } from 'vitest';
import { ClockDomainError } from '../errors.js';
import type { Clock } from '../time/clock.js';
import { Instant } from '../time/instant.js';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import { LeaseCoordinator } from './lease-coordinator.js';
import type { AcquireOutcome, Grant } from './outcomes.js';

const setup = (
  options: { ttlMillis?: number; startFence?: number; replayCacheSize?: number } = {},
): { clock: ManualClock; coordinator: LeaseCoordinator } => {
  const clock = createManualClock('coordinator');
  const coordinator = new LeaseCoordinator({ clock, ttlMillis: options.ttlMillis ?? 1_000, ...options });
  return { clock, coordinator };
};

const grantOf = (outcome: AcquireOutcome): Grant => {
  if (!outcome.ok) throw new Error(`expected a grant, got ${outcome.reason}`);
  return outcome.grant;
};

describe('LeaseCoordinator', () => {
  describe('fence ordering', () => {
    it('mints a strictly higher fence for every acquisition after an expiry', () => {
      const { clock, coordinator } = setup();
      const fences: number[] = [];
      for (const holderId of ['agent-a', 'agent-b', 'agent-a', 'agent-c']) {
        fences.push(
          grantOf(coordinator.acquire({ resource: 'slot', holderId, requestId: `${holderId}-${fences.length}` })).fence,
        );
        clock.advance(1_000);
      }
      expect(fences).toEqual([1, 2, 3, 4]);
    });

    it('mints a strictly higher fence after a release, at once', () => {
      const { coordinator } = setup();
      const first = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' }));
      expect(coordinator.release(first)).toEqual({ ok: true });
      const second = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-b', requestId: 'r2' }));
      expect(second.fence).toBeGreaterThan(first.fence);
    });

    it('continues after startFence so a restarted coordinator never reissues a fence', () => {
      const { coordinator } = setup({ startFence: 41 });
      expect(grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' })).fence).toBe(42);
      expect(coordinator.issuedFence).toBe(42);
    });

    it('shares one fence counter across resources', () => {
      const { coordinator } = setup();
      const a = grantOf(coordinator.acquire({ resource: 'a', holderId: 'agent-a', requestId: 'r1' }));
      const b = grantOf(coordinator.acquire({ resource: 'b', holderId: 'agent-a', requestId: 'r2' }));
      expect([a.fence, b.fence]).toEqual([1, 2]);
    });
  });

  describe('acquire', () => {
    it('denies another holder while the lease is current, naming the holder and the wait', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(300);
      expect(coordinator.acquire({ resource: 'slot', holderId: 'agent-b', requestId: 'r2' })).toEqual({
        ok: false,
        reason: 'held',
        heldBy: 'agent-a',
        retryAfterMillis: 700,
      });
    });

    it('denies the holder a second acquisition and issues no second fence', () => {
      const { coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      const again = coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r2' });
      expect(again).toMatchObject({ ok: false, reason: 'already-held', fence: 1 });
      expect(coordinator.issuedFence).toBe(1);
    });

    it('honours a requested ttl', () => {
      const { coordinator } = setup();
      const grant = grantOf(
        coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 250 }),
      );
      expect(grant.ttlMillis).toBe(250);
      expect(grant.coordinatorExpiresAt.millis).toBe(250);
    });

    it('reads the clock exactly once per call', () => {
      const clock = createManualClock('coordinator', { stepPerRead: 1 });
      const coordinator = new LeaseCoordinator({ clock, ttlMillis: 1_000 });
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' });
      coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 });
      coordinator.expireDue();
      expect(clock.peek().millis).toBe(4);
    });

    it('stamps coordinatorExpiresAt in the coordinator domain, so measuring a client instant against it throws', () => {
      const { coordinator } = setup();
      const grant = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' }));
      const clientNow = Instant.of(0, 'agent-a');
      expect(grant.coordinatorExpiresAt.domain).toBe('coordinator');
      expect(() => grant.coordinatorExpiresAt.minus(clientNow)).toThrow(ClockDomainError);
      expect(() => clientNow.isBefore(grant.coordinatorExpiresAt)).toThrow(ClockDomainError);
    });

    it('throws ClockDomainError when its clock changes domain under a current lease', () => {
      let domain = 'boot-1';
      const clock: Clock = {
        get domain() {
          return domain;
        },
        now: () => Instant.of(10, domain),
      };
      const coordinator = new LeaseCoordinator({ clock, ttlMillis: 1_000 });
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      domain = 'boot-2';
      expect(() => coordinator.acquire({ resource: 'slot', holderId: 'agent-b', requestId: 'r2' })).toThrow(
        ClockDomainError,
      );
      expect(coordinator.issuedFence).toBe(1);
    });
  });

  describe('renewal semantics', () => {
    it('keeps the fence and extends from the coordinator reading at renewal', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(900);
      const renewed = coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' });
      expect(renewed).toMatchObject({ ok: true, grant: { fence: 1, requestId: 'n1', ttlMillis: 1_000 } });
      expect(renewed.ok && renewed.grant.coordinatorExpiresAt.millis).toBe(1_900);
      clock.advance(950);
      expect(coordinator.acquire({ resource: 'slot', holderId: 'agent-b', requestId: 'r2' })).toMatchObject({
        ok: false,
        reason: 'held',
      });
    });

    it('refuses to renew after expiry even when nobody else took the resource', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(1_000);
      expect(coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' })).toEqual({
        ok: false,
        reason: 'expired',
      });
      expect(coordinator.holder('slot')?.expiresAt.millis).toBe(1_000);
    });

    it('refuses to renew a released generation', () => {
      const { coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 });
      expect(coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' })).toEqual({
        ok: false,
        reason: 'expired',
      });
    });

    it('answers not-holder to another holder presenting the current fence', () => {
      const { coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      expect(coordinator.renew({ resource: 'slot', holderId: 'agent-b', fence: 1, requestId: 'n1' })).toEqual({
        ok: false,
        reason: 'not-holder',
      });
    });

    it('requires a fresh acquisition with a higher fence after an expired renewal', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(1_500);
      coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' });
      expect(grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r2' })).fence).toBe(2);
    });
  });

  describe('release', () => {
    it('answers ok to a retried release (its reply lost), releasing nothing else, even after another holder took the resource', () => {
      // Given agent-a released its lease and agent-b took the resource
      const { coordinator } = setup();
      const first = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' }));
      expect(coordinator.release(first)).toEqual({ ok: true });
      const second = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-b', requestId: 'r2' }));
      // When agent-a retries the same release / Then it is told ok, and agent-b still holds
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: first.fence })).toEqual({ ok: true });
      expect(coordinator.holder('slot')?.fence).toBe(second.fence);
      // And another holder presenting that released fence is still told it has ended
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-c', fence: first.fence })).toEqual({
        ok: false,
        reason: 'expired',
      });
    });

    it('answers not-holder for a token that is not the current generation', () => {
      const { coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-b', fence: 1 })).toEqual({
        ok: false,
        reason: 'not-holder',
      });
      expect(coordinator.holder('slot')?.holderId).toBe('agent-a');
    });

    it('answers expired for a lease past its expiry', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(1_000);
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 })).toEqual({
        ok: false,
        reason: 'expired',
      });
    });

    it('answers expired, like renew, for a lease that expired and was swept', () => {
      // Given agent-a's lease expired and was swept
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(1_000);
      expect(coordinator.expireDue()).toBe(1);
      // When it releases and renews it late / Then both say its generation has ended
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 })).toEqual({
        ok: false,
        reason: 'expired',
      });
      expect(coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' })).toEqual({
        ok: false,
        reason: 'expired',
      });
    });

    it('answers not-holder, like renew, on a resource that was never granted', () => {
      const { coordinator } = setup();
      coordinator.acquire({ resource: 'other', holderId: 'agent-a', requestId: 'r1' });
      expect(coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 })).toEqual({
        ok: false,
        reason: 'not-holder',
      });
      expect(coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' })).toEqual({
        ok: false,
        reason: 'not-holder',
      });
    });
  });

  describe('expireDue', () => {
    it('sweeps only the leases past their expiry', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'a', holderId: 'agent-a', requestId: 'r1', ttlMillis: 100 });
      coordinator.acquire({ resource: 'b', holderId: 'agent-b', requestId: 'r2', ttlMillis: 500 });
      clock.advance(100);
      expect(coordinator.expireDue()).toBe(1);
      expect(coordinator.leases().map((l) => l.resource)).toEqual(['b']);
      expect(coordinator.holder('a')).toBeUndefined();
    });
  });

  describe('idempotent retry', () => {
    it('answers a retried acquire with the same grant while the lease is current', () => {
      const { clock, coordinator } = setup();
      const first = coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(200);
      const retry = coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      expect(retry).toEqual(first);
      expect(coordinator.issuedFence).toBe(1);
    });

    it('answers a retried acquire with the renewed expiry after a renewal', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(500);
      coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' });
      const retry = grantOf(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' }));
      expect([retry.fence, retry.requestId, retry.coordinatorExpiresAt.millis]).toEqual([1, 'r1', 1_500]);
    });

    it('answers a retry that arrives after its lease ended with expired, never a fresh fence', () => {
      const { clock, coordinator } = setup();
      coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' });
      clock.advance(1_000);
      expect(coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r1' })).toEqual({
        ok: false,
        reason: 'expired',
        fence: 1,
      });
      expect(coordinator.issuedFence).toBe(1);
    });

    it('remembers the last 1024 grants: the oldest retry still replays at exactly 1024', () => {
      const { coordinator } = setup();
      for (let i = 0; i < 1024; i += 1)
        coordinator.acquire({ resource: `slot-${i}`, holderId: 'agent-a', requestId: `r${i}` });
      expect(coordinator.acquire({ resource: 'slot-0', holderId: 'agent-a', requestId: 'r0' })).toMatchObject({
        ok: true,
        grant: { fence: 1 },
      });
      expect(coordinator.issuedFence).toBe(1024);
    });

    it('decides a retry evicted after 1024 newer grants as a new acquire, which burns a fence once free', () => {
      // Given 1025 grants: r0's entry is evicted
      const { clock, coordinator } = setup();
      for (let i = 0; i <= 1024; i += 1)
        coordinator.acquire({ resource: `slot-${i}`, holderId: 'agent-a', requestId: `r${i}` });
      // When r0 is retried while its lease is still current
      const whileCurrent = coordinator.acquire({ resource: 'slot-0', holderId: 'agent-a', requestId: 'r0' });
      // Then it is an ordinary second acquisition by the holder
      expect(whileCurrent).toMatchObject({ ok: false, reason: 'already-held', fence: 1 });
      // When it is retried after the lease expired, it is granted anew with a fresh fence
      clock.advance(1_000);
      const afterExpiry = grantOf(coordinator.acquire({ resource: 'slot-0', holderId: 'agent-a', requestId: 'r0' }));
      expect(afterExpiry.fence).toBe(1026);
    });
  });
});
