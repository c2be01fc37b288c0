/**
 * Type-level checks, verified by `tsc` (the typecheck target): the coordinator's denials are the
 * protocol's reasons, so the service's status table (typed by `DenialReason`) covers each.
 */
import type { AcquireReply, DenialReason, ReleaseReply, RenewReply } from '@lease-fence/protocol';
import type { ReleaseOutcome, RenewOutcome } from 'lease-fence';
import { describe, expectTypeOf, it } from 'vitest';
import type { CoordinatorAcquireOutcome, RecordRejectionOutcome } from './commands.js';

type DenialOf<T> = Extract<T, { ok: false; reason: string }>['reason'];

describe('coordinator outcome types', () => {
  it('denies an acquire with the acquire reply reasons, plus fence-unavailable (a 503, not a reply body schema)', () => {
    expectTypeOf<DenialOf<CoordinatorAcquireOutcome>>().toEqualTypeOf<DenialOf<AcquireReply> | 'fence-unavailable'>();
  });

  it('denies renew and release with their reply reasons', () => {
    expectTypeOf<DenialOf<RenewOutcome>>().toEqualTypeOf<DenialOf<RenewReply>>();
    expectTypeOf<DenialOf<ReleaseOutcome>>().toEqualTypeOf<DenialOf<ReleaseReply>>();
  });

  it('denies with listed reasons only, except implausible reports (a 400 naming the field)', () => {
    expectTypeOf<
      Exclude<DenialOf<CoordinatorAcquireOutcome | RecordRejectionOutcome>, 'implausible'>
    >().toExtend<DenialReason>();
  });
});
