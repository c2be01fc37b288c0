import { describe, expect, it } from 'vitest';
import { ClockDomainError, ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import { decideAcquire, decideExpiry, decideRelease, decideRenew, wasFenceIssued } from './lease-rules.js';
import { LeaseTable } from './lease-table.js';
import type { LeaseChange } from './outcomes.js';

const D = 'coordinator';
const t = (millis: number): Instant => Instant.of(millis, D);

/** A `granted` change: `holderId` got `fence` on `resource` at `at` for `ttlMillis`. */
const granted = (
  resource: string,
  holderId: string,
  fence: number,
  at = 0,
  ttlMillis = 1_000,
  requestId = `req-${fence}`,
): LeaseChange => ({
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
    const { outcome, changes } = decideAcquire(
      given(),
      { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 },
      t(100),
    );
    // Then
    expect(outcome).toEqual({
      ok: true,
      grant: {
        resource: 'slot',
        holderId: 'agent-a',
        fence: 1,
        ttlMillis: 1_000,
        requestId: 'r1',
        coordinatorExpiresAt: t(1_100),
      },
    });
    expect(changes).toEqual([
      {
        type: 'granted',
        lease: {
          resource: 'slot',
          holderId: 'agent-a',
          fence: 1,
          ttlMillis: 1_000,
          requestId: 'r1',
          grantedAt: t(100),
          expiresAt: t(1_100),
        },
      },
    ]);
  });

  it('denies another holder while the lease is current, with the time left rounded up', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const { outcome, changes } = decideAcquire(
      table,
      { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 1_000 },
      t(400.5),
    );
    expect(outcome).toEqual({ ok: false, reason: 'held', heldBy: 'agent-a', retryAfterMillis: 600 });
    expect(changes).toEqual([]);
  });

  it('denies the same holder a second acquisition instead of minting a second fence', () => {
    const table = given(granted('slot', 'agent-a', 1));
    const { outcome, changes } = decideAcquire(
      table,
      { resource: 'slot', holderId: 'agent-a', requestId: 'fresh', ttlMillis: 1_000 },
      t(10),
    );
    expect(outcome).toEqual({ ok: false, reason: 'already-held', heldBy: 'agent-a', fence: 1, retryAfterMillis: 990 });
    expect(changes).toEqual([]);
  });

  it('expires the previous generation and mints a strictly higher fence once it is past expiry', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const { outcome, changes } = decideAcquire(
      table,
      { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 500 },
      t(1_000),
    );
    expect(changes.map((c) => c.type)).toEqual(['expired', 'granted']);
    expect(changes[0]).toEqual({ type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 1 });
    expect(outcome.ok && outcome.grant.fence).toBe(2);
  });

  it('mints fences above every fence ever issued, on any resource', () => {
    const table = given(granted('slot', 'agent-a', 1), granted('other', 'agent-b', 2));
    table.burnFence(9);
    const { outcome } = decideAcquire(
      table,
      { resource: 'third', holderId: 'agent-c', requestId: 'r', ttlMillis: 10 },
      t(0),
    );
    expect(outcome.ok && outcome.grant.fence).toBe(10);
  });

  it('answers a repeated requestId with the existing grant and no changes while that lease is current', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    const { outcome, changes } = decideAcquire(
      table,
      { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 },
      t(300),
    );
    expect(outcome).toEqual({
      ok: true,
      grant: {
        resource: 'slot',
        holderId: 'agent-a',
        fence: 1,
        ttlMillis: 1_000,
        requestId: 'r1',
        coordinatorExpiresAt: t(1_000),
      },
    });
    expect(changes).toEqual([]);
  });

  it('answers a repeated requestId whose generation ended with expired and that fence, never a fresh grant', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    const { outcome, changes } = decideAcquire(
      table,
      { resource: 'slot', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 },
      t(1_000),
    );
    expect(outcome).toEqual({ ok: false, reason: 'expired', fence: 1 });
    expect(changes).toEqual([]);
  });

  it('throws ProtocolMisuseError when a holder reuses a requestId for another resource', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000, 'r1'));
    expect(() =>
      decideAcquire(table, { resource: 'other', holderId: 'agent-a', requestId: 'r1', ttlMillis: 1_000 }, t(1)),
    ).toThrow(ProtocolMisuseError);
  });

  it('never mutates the table it decides on', () => {
    const table = given(granted('slot', 'agent-a', 1, 0, 1_000));
    const before = JSON.stringify(table);
    decideAcquire(table, { resource: 'slot', holderId: 'agent-b', requestId: 'r2', ttlMillis: 1_000 }, t(5_000));
    expect(JSON.stringify(table)).toBe(before);
  });

  it('throws ClockDomainError when now is in another domain than the current lease', () => {
    const table = given(granted('slot', 'agent-a', 1));
    expect(() =>
      decideAcquire(
        table,
        { resource: 'slot', holderId: 'agent-b', requestId: 'r', ttlMillis: 1 },
        Instant.of(5, 'other-boot'),
      ),
    ).toThrow(ClockDomainError);
  });
});

describe('decideRenew', () => {
  it('renews the current holder with the same fence and expiresAt = now + ttl', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome, changes } = decideRenew(
      table,
      { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' },
      t(600),
    );
    expect(outcome).toEqual({
      ok: true,
      grant: {
        resource: 'slot',
        holderId: 'agent-a',
        fence: 3,
        ttlMillis: 1_000,
        requestId: 'n1',
        coordinatorExpiresAt: t(1_600),
      },
    });
    expect(changes).toEqual([
      {
        type: 'renewed',
        resource: 'slot',
        holderId: 'agent-a',
        fence: 3,
        requestId: 'n1',
        ttlMillis: 1_000,
        expiresAt: t(1_600),
      },
    ]);
  });

  describe('a retried renewal (same holder and requestId, same lease)', () => {
    /** Given agent-a's fence 3 and its renewal n1 at 600, applied. */
    const renewedOnce = (): LeaseTable => {
      const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
      for (const change of decideRenew(
        table,
        { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' },
        t(600),
      ).changes)
        table.apply(change);
      return table;
    };

    it('returns the grant the first attempt produced and changes nothing, so the expiry is not pushed out again', () => {
      // When the retry of n1 arrives later
      const { outcome, changes } = decideRenew(
        renewedOnce(),
        { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' },
        t(900),
      );
      // Then
      expect(outcome).toEqual({
        ok: true,
        grant: {
          resource: 'slot',
          holderId: 'agent-a',
          fence: 3,
          ttlMillis: 1_000,
          requestId: 'n1',
          coordinatorExpiresAt: t(1_600),
        },
      });
      expect(changes).toEqual([]);
    });

    it('answers with the lease as it stands after a later renewal, and expired once it has ended', () => {
      // Given a later renewal n2 at 1 200
      const table = renewedOnce();
      for (const change of decideRenew(
        table,
        { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n2' },
        t(1_200),
      ).changes)
        table.apply(change);
      // When n1 is retried before and after the lease's end
      const before = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' }, t(1_300));
      const after = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' }, t(2_200));
      // Then
      expect(before).toEqual({
        outcome: { ok: true, grant: expect.objectContaining({ requestId: 'n1', coordinatorExpiresAt: t(2_200) }) },
        changes: [],
      });
      expect(after).toEqual({ outcome: { ok: false, reason: 'expired' }, changes: [] });
    });

    it('renews as new when the requestId was remembered for another lease', () => {
      // Given n1 renewed fence 3, which was released; agent-a holds fence 4 now
      const table = renewedOnce();
      table.apply({ type: 'released', resource: 'slot', holderId: 'agent-a', fence: 3 });
      table.apply(granted('slot', 'agent-a', 4, 700, 1_000));
      // When n1 comes for fence 4
      const { changes } = decideRenew(
        table,
        { resource: 'slot', holderId: 'agent-a', fence: 4, requestId: 'n1' },
        t(800),
      );
      // Then it is a renewal of its own
      expect(changes).toEqual([
        expect.objectContaining({ type: 'renewed', fence: 4, requestId: 'n1', expiresAt: t(1_800) }),
      ]);
    });

    it('is remembered for the last replayCacheSize renewals only, oldest evicted first', () => {
      // Given a cache of 2 and three renewals n1, n2, n3
      const table = new LeaseTable({ replayCacheSize: 2 });
      table.apply(granted('slot', 'agent-a', 1, 0, 1_000));
      for (const [index, requestId] of ['n1', 'n2', 'n3'].entries()) {
        for (const change of decideRenew(
          table,
          { resource: 'slot', holderId: 'agent-a', fence: 1, requestId },
          t(100 * (index + 1)),
        ).changes)
          table.apply(change);
      }
      // Then n1 is forgotten (a retry renews again), n2 and n3 are not
      expect(['n1', 'n2', 'n3'].map((requestId) => table.replayedRenewal('agent-a', requestId))).toEqual([
        undefined,
        { holderId: 'agent-a', requestId: 'n2', resource: 'slot', fence: 1 },
        { holderId: 'agent-a', requestId: 'n3', resource: 'slot', fence: 1 },
      ]);
      expect(
        decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n1' }, t(400)).changes,
      ).toHaveLength(1);
    });
  });

  it('uses the requested ttl when one is given', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome } = decideRenew(
      table,
      { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1', ttlMillis: 5_000 },
      t(600),
    );
    expect(outcome.ok && outcome.grant.coordinatorExpiresAt.millis).toBe(5_600);
  });

  it('never resurrects a lease past its expiry, even when nobody else took it', () => {
    const table = given(granted('slot', 'agent-a', 3, 0, 1_000));
    const { outcome, changes } = decideRenew(
      table,
      { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n1' },
      t(1_000),
    );
    expect(outcome).toEqual({ ok: false, reason: 'expired' });
    expect(changes).toEqual([]);
  });

  it('answers expired for a generation that was superseded', () => {
    const table = given(
      granted('slot', 'agent-a', 1, 0, 100),
      { type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 1 },
      granted('slot', 'agent-b', 2, 200),
    );
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

  it('answers not-holder on a resource that was never granted, even with a fence issued for another resource', () => {
    // Given fence 3 went to another resource
    const table = given(granted('other', 'agent-a', 3));
    // When agent-a presents it (or a lower fence) on 'slot'
    const renewals = [3, 1].map((fence) =>
      decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence, requestId: 'n' }, t(1)),
    );
    // Then neither is an ended generation of 'slot'
    expect(renewals.map((r) => r.outcome)).toEqual([
      { ok: false, reason: 'not-holder' },
      { ok: false, reason: 'not-holder' },
    ]);
    expect(renewals.flatMap((r) => r.changes)).toEqual([]);
  });

  it('answers not-holder for a fence above the highest ever granted on this resource, though below issuedFence', () => {
    const table = given(
      granted('slot', 'agent-a', 1, 0, 100),
      { type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 },
      granted('other', 'agent-b', 5),
    );
    const { outcome } = decideRenew(table, { resource: 'slot', holderId: 'agent-a', fence: 3, requestId: 'n' }, t(50));
    expect(outcome).toEqual({ ok: false, reason: 'not-holder' });
  });
});

describe('renew and release judge a token by one rule', () => {
  // Each scenario: the table, the token presented on 'slot' at t(500), and the denial both must give.
  const scenarios: readonly [
    name: string,
    table: () => LeaseTable,
    token: { holderId: string; fence: number },
    reason: 'expired' | 'not-holder',
  ][] = [
    [
      'the current lease past its expiry, not swept',
      () => given(granted('slot', 'agent-a', 1, 0, 100)),
      { holderId: 'agent-a', fence: 1 },
      'expired',
    ],
    [
      'a generation that expired and was swept',
      () =>
        given(granted('slot', 'agent-a', 1, 0, 100), {
          type: 'expired',
          resource: 'slot',
          holderId: 'agent-a',
          fence: 1,
        }),
      { holderId: 'agent-a', fence: 1 },
      'expired',
    ],
    [
      'a generation another holder released',
      () => given(granted('slot', 'agent-a', 1), { type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 }),
      { holderId: 'agent-b', fence: 1 },
      'expired',
    ],
    [
      'a superseded generation',
      () =>
        given(
          granted('slot', 'agent-a', 1, 0, 100),
          { type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 1 },
          granted('slot', 'agent-b', 2, 200),
        ),
      { holderId: 'agent-a', fence: 1 },
      'expired',
    ],
    [
      'the current fence presented by another holder',
      () => given(granted('slot', 'agent-a', 1)),
      { holderId: 'agent-b', fence: 1 },
      'not-holder',
    ],
    ['a resource that was never granted', () => given(), { holderId: 'agent-a', fence: 1 }, 'not-holder'],
    [
      'a fence issued for another resource only',
      () =>
        given(
          granted('slot', 'agent-a', 1),
          { type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 },
          granted('other', 'agent-a', 2),
        ),
      { holderId: 'agent-a', fence: 2 },
      'not-holder',
    ],
    [
      'a fence never issued at all',
      () => given(granted('slot', 'agent-a', 1)),
      { holderId: 'agent-a', fence: 9 },
      'not-holder',
    ],
  ];

  it.each(scenarios)('answers %s the same way, with no changes', (_name, table, token, reason) => {
    // Arrange
    const state = table();
    // Act
    const renewal = decideRenew(state, { resource: 'slot', ...token, requestId: 'n' }, t(500));
    const release = decideRelease(state, { resource: 'slot', ...token }, t(500));
    // Assert
    expect(renewal).toEqual({ outcome: { ok: false, reason }, changes: [] });
    expect(release).toEqual({ outcome: { ok: false, reason }, changes: [] });
  });
});

describe('wasFenceIssued', () => {
  it('is true up to the highest fence ever granted on the resource, also after that generation ended', () => {
    const table = given(
      granted('slot', 'agent-a', 2),
      { type: 'released', resource: 'slot', holderId: 'agent-a', fence: 2 },
      granted('other', 'agent-b', 7),
    );
    expect([1, 2, 3, 7].map((fence) => wasFenceIssued(table, 'slot', fence))).toEqual([true, true, false, false]);
    expect(wasFenceIssued(table, 'never-granted', 1)).toBe(false);
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
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(1_000)).outcome).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('answers not-holder for another holder or another fence', () => {
    const table = given(granted('slot', 'agent-a', 1));
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-b', fence: 1 }, t(1)).outcome).toEqual({
      ok: false,
      reason: 'not-holder',
    });
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 2 }, t(1)).outcome).toEqual({
      ok: false,
      reason: 'not-holder',
    });
  });

  it('answers expired, not not-holder, for a lease that expired and was swept', () => {
    // Given agent-a's lease expired and the sweep removed it
    const table = given(granted('slot', 'agent-a', 1, 0, 100), {
      type: 'expired',
      resource: 'slot',
      holderId: 'agent-a',
      fence: 1,
    });
    // When agent-a releases it late / Then its generation has ended
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(200))).toEqual({
      outcome: { ok: false, reason: 'expired' },
      changes: [],
    });
  });

  /** agent-a's release of fence 1 on 'slot', decided at 10 and applied. */
  const releasedByA = (): LeaseTable => {
    const table = given(granted('slot', 'agent-a', 1));
    for (const change of decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(10)).changes) {
      table.apply(change);
    }
    return table;
  };

  it('answers ok, with no changes, to a retried release of a generation that same holder released', () => {
    // Given agent-a released fence 1 (its reply was lost) / When it sends the same release again
    const retry = decideRelease(releasedByA(), { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(20));
    // Then it is told the release happened, and nothing is released a second time
    expect(retry).toEqual({ outcome: { ok: true }, changes: [] });
  });

  it('answers ok to the retry after the resource was granted again and that lease expired', () => {
    const table = releasedByA();
    table.apply(granted('slot', 'agent-b', 2, 20, 100));
    expect(decideRelease(table, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(5_000))).toEqual({
      outcome: { ok: true },
      changes: [],
    });
  });

  it('still answers expired to the release of a generation that was released by another holder, or expired first', () => {
    expect(decideRelease(releasedByA(), { resource: 'slot', holderId: 'agent-b', fence: 1 }, t(20)).outcome).toEqual({
      ok: false,
      reason: 'expired',
    });
    const expiredFirst = given(granted('slot', 'agent-a', 1, 0, 100), {
      type: 'expired',
      resource: 'slot',
      holderId: 'agent-a',
      fence: 1,
    });
    expect(decideRelease(expiredFirst, { resource: 'slot', holderId: 'agent-a', fence: 1 }, t(200)).outcome).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('does not let a remembered release answer a renewal: a released generation is never renewed', () => {
    expect(
      decideRenew(releasedByA(), { resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'n' }, t(20)).outcome,
    ).toEqual({ ok: false, reason: 'expired' });
  });

  it('forgets a release after replayCacheSize newer ones, and then answers expired', () => {
    // Given a table remembering 2 releases, and agent-a's release of fence 1 followed by two more
    const table = new LeaseTable({ replayCacheSize: 2 });
    for (const fence of [1, 2, 3]) {
      table.apply(granted(`r-${fence}`, 'agent-a', fence));
      table.apply({ type: 'released', resource: `r-${fence}`, holderId: 'agent-a', fence });
    }
    const retry = (fence: number) =>
      decideRelease(table, { resource: `r-${fence}`, holderId: 'agent-a', fence }, t(20)).outcome;
    // Then the oldest is forgotten, the last two are still answered
    expect(retry(1)).toEqual({ ok: false, reason: 'expired' });
    expect(retry(2)).toEqual({ ok: true });
    expect(retry(3)).toEqual({ ok: true });
  });
});

describe('decideExpiry', () => {
  it('emits one expired change per lease at or past its expiry, and nothing for the rest', () => {
    const table = given(
      granted('a', 'agent-a', 1, 0, 100),
      granted('b', 'agent-b', 2, 0, 200),
      granted('c', 'agent-c', 3, 0, 300),
    );
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
