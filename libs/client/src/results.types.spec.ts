/**
 * Type-level checks, verified by `tsc` (the typecheck target): the SDK's results deny with
 * exactly the reasons the protocol's replies carry, plus the SDK's own `dead-on-arrival`.
 */
import type { AcquireReply, DenialReason, ReleaseReply, RenewReply } from '@lease-fence/protocol';
import { describe, expectTypeOf, it } from 'vitest';
import type { AcquireResult, ReleaseResult, RenewResult } from './results.js';

type DenialOf<T> = Extract<T, { ok: false; reason: string }>['reason'];

describe('result types', () => {
  it('denies acquire, renew and release with the protocol reply reasons, plus dead-on-arrival', () => {
    expectTypeOf<DenialOf<AcquireResult>>().toEqualTypeOf<DenialOf<AcquireReply> | 'dead-on-arrival'>();
    expectTypeOf<DenialOf<RenewResult>>().toEqualTypeOf<DenialOf<RenewReply> | 'dead-on-arrival'>();
    expectTypeOf<DenialOf<ReleaseResult>>().toEqualTypeOf<DenialOf<ReleaseReply>>();
  });

  it('adds no coordinator reason the protocol does not list', () => {
    expectTypeOf<
      Exclude<DenialOf<AcquireResult | RenewResult | ReleaseResult>, 'dead-on-arrival'>
    >().toExtend<DenialReason>();
  });
});
