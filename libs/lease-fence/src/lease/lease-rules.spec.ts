import { describe, expect, it } from 'vitest';
import { ClockDomainError, ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import { decideAcquire, decideExpiry, decideRelease, decideRenew } from './lease-rules.js';
import { LeaseTable } from './lease-table.js';
import type { LeaseChange } from './outcomes.js';

const D = 'coordinator';
const t = (millis: number): Instant => Instant.of(millis, D);

/** A `granted` change: `holderId` got `fence` on `resource` at `at` for `ttlMillis`. */
const granted = (resource: string, holderId: string, fence: number, at = 0, ttlMillis = 1_000, requestId = `req-${fence}`): LeaseChange => ({
  type: 'granted',
  lease: { resource, holderId, fence, ttlMillis, requestId, grantedAt: t(at), expiresAt: t(at + ttlMillis) },
});

/** Given these past changes, a table. */
const given = (...changes: LeaseChange[]): LeaseTable => {
  const table = new LeaseTable();
  for (const change of changes) table.apply(change);
  return table;
};

describe('decideAcquire', () => {
  it('grants fence 1 on a free resource with expiresAt = now + ttl', () => {
    // Given an empty table / When agent-a acquires at 100
    const { outcome, changes } = decideAcquire(given(), { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 }, t(100));
    // Then
    expect(outcome).toEqual({
      ok: true,
      grant: { resource: 'slot', holderId: 'agent-a', fence: 1, ttlMillis: 1_000, requestId: 'r1', coordinatorExpiresAt: t(1_100) },
    });
    expect(changes).toEqual([
      { type: 'granted', lease: { resource: 'slot', holderId: 'agent-a', fence: 1, ttlMillis: 1_000, requestId: 'r1', grantedAt: t(100), expiresAt: t(1_100) } },
    ]);
  });

  it('denies another holder while the lease is current, with the time left rounded up', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const { outcome, changes } = decideAcquire(table, { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 1_000 }, t(400.5));
    expect(outcome).toEqual({ ok: false, reason: 'held', heldBy: 'agent-a', retryAfterMillis: 600 });
    expect(changes).toEqual([]);
  });

  it('denies the same holder a second acquisition instead of minting a second fence', () => {
    const table = given(granted('slot', 'agent-a', 1));
    const { outcome, changes } = decideAcquire(table, { resource: 'slot', holderId: 'agent-a', requestId: 'fresh', ttlMillis: 1_000 }, t(10));
    expect(outcome).toEqual({ ok: false, reason: 'already-held', heldBy: 'agent-a', fence: 1, retryAfterMillis: 990 });
    expect(changes).toEqual([]);
  });

  it('expires the previous generation and mints a strictly higher fence once it is past expiry', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const { outcome, changes } = decideAcquire(table, { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 500 }, t(1_000));
    expect(changes.map((c) => c.type)).toEqual(['expired', 'granted']);
    expect(changes[0]).toEqual({ type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 1 });
    expect(outcome.ok && outcome.grant.fence).toBe(2);
  });

  it('mints fences above every fence ever issued, on any resource', () => {
    const table = given(granted('slot', 'agent-a', 1), granted('other', 'agent-b', 2));
    table.burnFence(9);
    const { outcome } = decideAcquire(table, { resource: 'third', holderId: 'agent-c', requestId: 'r', ttlMillis: 10 }, t(0));
    expect(outcome.ok && outcome.grant.fence).toBe(10);
  });

  it('answers a repeated requestId with the existing grant and no changes while that lease is current', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    const { outcome, changes } = decideAcquire(table, { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 }, t(300));
    expect(outcome).toEqual({
      ok: true,
      grant: { resource: 'slot', holderId: 'agent-a', fence: 1, ttlMillis: 1_000, requestId: 'r1', coordinatorExpiresAt: t(1_000) },
    });
    expect(changes).toEqual([]);
  });

  it('answers a repeated requestId whose generation ended with expired and that fence, never a fresh grant', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    const { outcome, changes } = decideAcquire(table, { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 }, t(1_000));
    expect(outcome).toEqual({ ok: false, reason: 'expired', fence: 1 });
    expect(changes).toEqual([]);
  });

  it('throws ProtocolMisuseError when a holder reuses a requestId for another resource', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    expect(() => decideAcquire(table, { resource: 'other', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 }, t(1))).toThrow(ProtocolMisuseError);
  });

  it('never mutates the table it decides on', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const before = JSON.stringify(table);
    decideAcquire(table, { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 1_000 }, t(5_000));
    expect(JSON.stringify(table)).toBe(before);
  });

  it('throws ClockDomainError when now is in another domain than the current lease', () => {
    const table = given(granted('slot', 'agent-a', 1));
    expect(() => decideAcquire(table, { resource: 'slot', holderId: 'agent-b', requestId: 'r', ttlMillis: 1 }, Instant.of(5, 'other-boot'))).toThrow(
      ClockDomainError,
    );
  });
});

describe('decideRenew', () => {
  it('renews the current holder with the same fence and expiresAt = now + ttl', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome, changes } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' }, t(600));
    expect(outcome).toEqual({
      ok: true,
      grant: { resource: 'slot', holderId: 'agent-a', fence: 3, ttlMillis: 1_000, requestId: 'n1', coordinatorExpiresAt: t(1_600) },
    });
    expect(changes).toEqual([{ type: 'renewed', resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1', ttlMillis: 1_000, expiresAt: t(1_600) }]);
  });

  it('uses the requested ttl when one is given', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1', ttlMillis: 5_000 }, t(600));
    expect(outcome.ok && outcome.grant.coordinatorExpiresAt.millis).toBe(5_600);
  });

  it('never resurrects a lease past its expiry, even when nobody else took it', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome, changes } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' }, t(1_000));
    expect(outcome).toEqual({ ok: false, reason: 'expired' });
    expect(changes).toEqual([]);
  });

  it('answers expired for a generation that was superseded', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 100), { type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 1 }, granted('slot', 'agent-b', 2, 200));
    const { outcome } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n' }, t(250));
    expect(outcome).toEqual({ ok: false, reason: 'expired' });
  });

  it('answers not-holder when the fence belongs to another holder', () => {
    const table = given(granted('slot', 'agent-a', 3));
    const { outcome } = decideRenew(table, { resource: 'slot', holderId: 'agent-b', fence: 3, requestId: 'n' }, t(1));
    expect(outcome).toEqual({ ok: false, reason: 'not-holder' });
  });

  it('answers not-holder for a fence that was never issued', () => {
    const table = given(granted('slot', 'agent-a', 3));
    const { outcome } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 4, requestId: 'n' }, t(1));
    expect(outcome).toEqual({ ok: false, reason: 'not-holder' });
  });
});

describe('decideRelease', () => {
  it('releases the current, unexpired lease of that holder and fence', () => {
    const table = given(granted('slot', 'agent-a', 1));
    const { outcome, changes } = decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(10));
    expect(outcome).toEqual({ ok: true });
    expect(changes).toEqual([{ type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 }]);
  });

  it('answers expired for the current lease past its expiry', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(1_000)).outcome).toEqual({ ok: false, reason: 'expired' });
  });

  it('answers not-holder for another holder or another fence', () => {
    const table = given(granted('slot', 'agent-a', 1));
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-b', fence: 1 }, t(1)).outcome).toEqual({ ok: false, reason: 'not-holder' });
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 2 }, t(1)).outcome).toEqual({ ok: false, reason: 'not-holder' });
  });
});

describe('decideExpiry', () => {
  it('emits one expired change per lease at or past its expiry, and nothing for the rest', () => {
    const table = given(granted('a', 'agent-a', 1, 0, 100), granted('b', 'agent-b', 2, 0, 200), granted('c', 'agent-c', 3, 0, 300));
    const { outcome, changes } = decideExpiry(table, t(200));
    expect(outcome).toEqual({ expired: 2 });
    expect(changes).toEqual([
      { type: 'expired', resource: 'a', holderId: 'agent-a', fence: 1 },
      { type: 'expired', resource: 'b', holderId: 'agent-b', fence: 2 },
    ]);
  });

  it('refuses a now that is not an Instant', () => {
    expect(() => decideExpiry(given(), 5 as unknown as Instant)).toThrow(TypeError);
  });
});
