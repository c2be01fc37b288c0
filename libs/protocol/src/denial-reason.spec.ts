import {
  LEASE_DENIAL_REASONS,
  type AcquireOutcome,
  type LeaseDenialReason,
  type ReleaseOutcome,
  type RenewOutcome,
} from 'lease-fence';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { DENIAL_REASONS, DenialReasonSchema, type DenialReason } from './denial-reason.js';
import type { AcquireReply, ReleaseReply, RenewReply } from './http.js';

type DenialOf<T> = Extract<T, { ok: false; reason: string }>['reason'];

describe('DenialReason', () => {
  it("contains every lease-rule reason, then the coordinator's own, once each", () => {
    expect(DENIAL_REASONS.slice(0, LEASE_DENIAL_REASONS.length)).toEqual([...LEASE_DENIAL_REASONS]);
    expect(new Set(DENIAL_REASONS).size).toBe(DENIAL_REASONS.length);
  });

  it('parses every listed reason and refuses any other', () => {
    for (const reason of DENIAL_REASONS) expect(DenialReasonSchema.parse(reason)).toBe(reason);
    expect(DenialReasonSchema.safeParse('busy').success).toBe(false);
  });

  it("types every denial reply by the library's outcomes plus the coordinator's reasons", () => {
    expectTypeOf<LeaseDenialReason>().toExtend<DenialReason>();
    expectTypeOf<DenialOf<AcquireReply>>().toEqualTypeOf<DenialOf<AcquireOutcome> | 'lock-delay'>();
    expectTypeOf<DenialOf<RenewReply>>().toEqualTypeOf<DenialOf<RenewOutcome>>();
    expectTypeOf<DenialOf<ReleaseReply>>().toEqualTypeOf<DenialOf<ReleaseOutcome>>();
    expectTypeOf<DenialOf<AcquireReply | RenewReply | ReleaseReply>>().toExtend<DenialReason>();
  });
});
