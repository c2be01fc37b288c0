import { describe, expect, it } from 'vitest';
import { ClockDomainError, ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import { LeaseClient } from './lease-client.js';
import type { Grant } from './outcomes.js';

const setup = (clockSkewMillis = 50): { clock: ManualClock; client: LeaseClient } => {
  const clock = createManualClock('agent-a', { start: 10_000 });
  let n = 0;
  const client = new LeaseClient({ clock, holderId: 'agent-a', clockSkewMillis, newRequestId: () => `req-${++n}` });
  return { clock, client };
};

/** A coordinator's grant answering `request`, stamped in the coordinator's domain. */
const grantFor = (
  request: { resource: string; holderId: string; requestId: string },
  overrides: Partial<Grant> = {},
): Grant => ({
  resource: request.resource,
  holderId: request.holderId,
  requestId: request.requestId,
  fence: 7,
  ttlMillis: 1_000,
  coordinatorExpiresAt: Instant.of(51_040, 'coordinator'),
  ...overrides,
});

describe('LeaseClient', () => {
  describe('beginAcquire', () => {
    it('stamps the send instant and a fresh requestId on a plain-data request', () => {
      const { client } = setup();
      const first = client.beginAcquire('slot');
      const second = client.beginAcquire('slot', { ttlMillis: 2_000 });
      expect(first).toEqual({
        kind: 'acquire',
        resource: 'slot',
        holderId: 'agent-a',
        requestId: 'req-1',
        sentAt: Instant.of(10_000, 'agent-a'),
      });
      expect(second).toMatchObject({ requestId: 'req-2', ttlMillis: 2_000 });
    });

    it('uses crypto.randomUUID by default', () => {
      const client = new LeaseClient({ clock: createManualClock('agent-a'), holderId: 'agent-a', clockSkewMillis: 0 });
      const [a, b] = [client.beginAcquire('slot').requestId, client.beginAcquire('slot').requestId];
      expect(a).toMatch(/^[0-9a-f-]{36}$/);
      expect(a).not.toBe(b);
    });
  });

  describe('completeAcquire', () => {
    it('anchors the deadline at the send instant: sentAt + ttl - skew, however late the reply arrives', () => {
      // Arrange
      const { clock, client } = setup(50);
      const request = client.beginAcquire('slot');
      clock.advance(900); // the reply takes 900 ms
      // Act
      const lease = client.completeAcquire(request, grantFor(request));
      // Assert
      expect(lease.deadline).toEqual(Instant.of(10_000 + 1_000 - 50, 'agent-a'));
      expect(lease.sentAt).toBe(request.sentAt);
      expect(lease.token).toEqual({ resource: 'slot', holderId: 'agent-a', fence: 7 });
      expect(lease.remainingMillis()).toBe(50);
    });

    it('keeps the coordinator expiry in the coordinator domain: comparing it with the deadline throws', () => {
      const { client } = setup();
      const request = client.beginAcquire('slot');
      const lease = client.completeAcquire(request, grantFor(request));
      expect(() => lease.deadline.isBefore(lease.coordinatorExpiresAt)).toThrow(ClockDomainError);
      expect(() => lease.coordinatorExpiresAt.minus(lease.sentAt)).toThrow(ClockDomainError);
    });

    it('accepts the JSON form of coordinatorExpiresAt from a grant that crossed the wire', () => {
      const { client } = setup();
      const request = client.beginAcquire('slot');
      const wire = JSON.parse(JSON.stringify(grantFor(request))) as Grant;
      expect(client.completeAcquire(request, wire).coordinatorExpiresAt).toEqual(Instant.of(51_040, 'coordinator'));
    });

    it('throws ProtocolMisuseError when the same request is completed twice', () => {
      const { client } = setup();
      const request = client.beginAcquire('slot');
      client.completeAcquire(request, grantFor(request));
      expect(() => client.completeAcquire(request, grantFor(request))).toThrow(ProtocolMisuseError);
      expect(() => client.completeAcquire(request, grantFor(request))).toThrow(/already completed/);
    });

    it.each([
      ['another requestId', { requestId: 'req-99' }, 'requestId'],
      ['another resource', { resource: 'other-slot' }, 'resource'],
      ['another holder', { holderId: 'agent-b' }, 'holderId'],
    ])('throws ProtocolMisuseError for a grant for %s and leaves the request pending', (_label, overrides, field) => {
      const { client } = setup();
      const request = client.beginAcquire('slot');
      expect(() => client.completeAcquire(request, grantFor(request, overrides))).toThrow(ProtocolMisuseError);
      expect(() => client.completeAcquire(request, grantFor(request, overrides))).toThrow(`grant.${field}`);
      expect(client.completeAcquire(request, grantFor(request)).fence).toBe(7);
    });

    it('throws ProtocolMisuseError for a request another client made', () => {
      const { client } = setup();
      const other = setup().client;
      const request = other.beginAcquire('slot');
      expect(() => client.completeAcquire(request, grantFor(request))).toThrow(ProtocolMisuseError);
    });

    it('throws ProtocolMisuseError for a forged request object', () => {
      const { client } = setup();
      const forged = {
        kind: 'acquire',
        resource: 'slot',
        holderId: 'agent-a',
        requestId: 'x',
        sentAt: Instant.of(0, 'agent-a'),
      } as const;
      expect(() => client.completeAcquire(forged, grantFor(forged))).toThrow(ProtocolMisuseError);
    });

    it('throws RangeError when the granted ttl does not exceed the skew (the lease would be dead on arrival)', () => {
      const { client } = setup(1_000);
      const request = client.beginAcquire('slot');
      expect(() => client.completeAcquire(request, grantFor(request, { ttlMillis: 1_000 }))).toThrow(RangeError);
      expect(() => client.completeAcquire(request, grantFor(request, { ttlMillis: 1_000 }))).toThrow(/clockSkewMillis/);
    });
  });

  describe('renewal', () => {
    it('keeps the fence and re-anchors the deadline at the renewal send instant', () => {
      const { clock, client } = setup(50);
      const acquire = client.beginAcquire('slot');
      const lease = client.completeAcquire(acquire, grantFor(acquire));
      clock.advance(600);
      const renewal = client.beginRenewal(lease, { ttlMillis: 2_000 });
      clock.advance(300);
      const renewed = client.completeRenewal(renewal, grantFor(renewal, { ttlMillis: 2_000 }));
      expect(renewal).toMatchObject({ kind: 'renewal', fence: 7, requestId: 'req-2', ttlMillis: 2_000 });
      expect(renewed.fence).toBe(7);
      expect(renewed.deadline.millis).toBe(10_600 + 2_000 - 50);
    });

    it('throws ProtocolMisuseError for a renewal grant with another fence', () => {
      const { client } = setup();
      const acquire = client.beginAcquire('slot');
      const lease = client.completeAcquire(acquire, grantFor(acquire));
      const renewal = client.beginRenewal(lease);
      expect(() => client.completeRenewal(renewal, grantFor(renewal, { fence: 8 }))).toThrow(ProtocolMisuseError);
    });

    it('throws ProtocolMisuseError when an acquire request is completed as a renewal', () => {
      const { client } = setup();
      const acquire = client.beginAcquire('slot');
      const asRenewal = acquire as unknown as Parameters<LeaseClient['completeRenewal']>[0];
      expect(() => client.completeRenewal(asRenewal, grantFor(acquire))).toThrow(ProtocolMisuseError);
    });

    it('throws ProtocolMisuseError when asked to renew a lease it did not make', () => {
      const { client } = setup();
      const other = setup().client;
      const request = other.beginAcquire('slot');
      const foreign = other.completeAcquire(request, grantFor(request));
      expect(() => client.beginRenewal(foreign)).toThrow(ProtocolMisuseError);
    });
  });

  describe('hasExpired (advisory)', () => {
    it('turns true when the client clock reaches the deadline', () => {
      const { clock, client } = setup(50);
      const request = client.beginAcquire('slot');
      const lease = client.completeAcquire(request, grantFor(request));
      clock.advance(949);
      expect(lease.hasExpired()).toBe(false);
      clock.advance(1);
      expect(lease.hasExpired()).toBe(true);
      expect(lease.remainingMillis()).toBe(0);
    });
  });
});
