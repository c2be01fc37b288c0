/**
 * Type-level checks of the public API: these assertions are verified by `tsc` (the typecheck
 * target), and a wrong type makes the typecheck fail. `@ts-expect-error` lines must stay errors.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  Instant,
  type LeaseClient,
  type LeaseCoordinator,
  type StaleFenceError,
  type AcquireOutcome,
  type AcquireRequest,
  type FenceToken,
  type Grant,
  type Lease,
  type LeaseChange,
  type ReleaseOutcome,
  type RenewOutcome,
  type RejectionRecord,
  type LeaseDenialReason,
  LEASE_DENIAL_REASONS,
} from '../index.js';

describe('outcome types', () => {
  it('narrows an acquire outcome to its grant when ok is true', () => {
    expectTypeOf<Extract<AcquireOutcome, { ok: true }>>().toEqualTypeOf<{ readonly ok: true; readonly grant: Grant }>();
  });

  it('lists exactly the acquire denial reasons', () => {
    expectTypeOf<Extract<AcquireOutcome, { ok: false }>['reason']>().toEqualTypeOf<
      'held' | 'already-held' | 'expired'
    >();
  });

  it('gives held denials the holder and the wait in milliseconds', () => {
    expectTypeOf<Extract<AcquireOutcome, { reason: 'held' }>>().toHaveProperty('heldBy').toEqualTypeOf<string>();
    expectTypeOf<Extract<AcquireOutcome, { reason: 'held' }>>()
      .toHaveProperty('retryAfterMillis')
      .toEqualTypeOf<number>();
  });

  it('gives already-held and replayed-expired denials the fence', () => {
    expectTypeOf<Extract<AcquireOutcome, { reason: 'already-held' }>>().toHaveProperty('fence').toEqualTypeOf<number>();
    expectTypeOf<Extract<AcquireOutcome, { reason: 'expired' }>>().toHaveProperty('fence').toEqualTypeOf<number>();
  });

  it('lists exactly the renewal and release denial reasons', () => {
    expectTypeOf<Extract<RenewOutcome, { ok: false }>['reason']>().toEqualTypeOf<'expired' | 'not-holder'>();
    expectTypeOf<Extract<ReleaseOutcome, { ok: false }>['reason']>().toEqualTypeOf<'expired' | 'not-holder'>();
  });

  it('lists in LEASE_DENIAL_REASONS exactly the reasons the rules deny with', () => {
    type RuleDenials = Extract<AcquireOutcome | RenewOutcome | ReleaseOutcome, { ok: false }>;
    expectTypeOf<RuleDenials['reason']>().toEqualTypeOf<LeaseDenialReason>();
    expectTypeOf(LEASE_DENIAL_REASONS).toEqualTypeOf<readonly ['held', 'already-held', 'expired', 'not-holder']>();
  });

  it('refuses to read a denial field before narrowing', () => {
    const read = (outcome: AcquireOutcome): unknown =>
      // @ts-expect-error heldBy exists only on 'held' / 'already-held' denials
      outcome.heldBy;
    expectTypeOf(read).returns.toEqualTypeOf<unknown>();
  });

  it('keeps grants and tokens read-only', () => {
    const mutate = (grant: Grant, token: FenceToken): void => {
      // @ts-expect-error a grant's fence is readonly
      grant.fence = 2;
      // @ts-expect-error a token's fence is readonly
      token.fence = 2;
    };
    expectTypeOf(mutate).parameters.toEqualTypeOf<[Grant, FenceToken]>();
  });

  it('stamps instants, not numbers, on grants and leases', () => {
    expectTypeOf<Grant['coordinatorExpiresAt']>().toEqualTypeOf<Instant>();
    expectTypeOf<Lease['deadline']>().toEqualTypeOf<Instant>();
    expectTypeOf<AcquireRequest['sentAt']>().toEqualTypeOf<Instant>();
  });

  it('discriminates lease changes by type', () => {
    expectTypeOf<LeaseChange['type']>().toEqualTypeOf<'granted' | 'renewed' | 'released' | 'expired'>();
  });
});

describe('API surface types', () => {
  it('accepts a client request where the coordinator expects one', () => {
    expectTypeOf<AcquireRequest>().toExtend<Parameters<LeaseCoordinator['acquire']>[0]>();
  });

  it('makes leases only through the client: Lease is an interface and Instant has no public constructor', () => {
    expectTypeOf<ReturnType<LeaseClient['completeAcquire']>>().toEqualTypeOf<Lease>();
    // @ts-expect-error Instant's constructor is private; use Instant.of
    const make = (): Instant => new Instant(1, 'a');
    expectTypeOf(make).returns.toEqualTypeOf<Instant>();
  });

  it('types FenceGate errors with the rejection record', () => {
    expectTypeOf<StaleFenceError['rejection']>().toEqualTypeOf<RejectionRecord>();
    expectTypeOf<StaleFenceError['code']>().toEqualTypeOf<'stale-fence'>();
    expectTypeOf<RejectionRecord['kind']>().toEqualTypeOf<'stale' | 'double-grant'>();
  });
});
