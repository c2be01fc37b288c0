/**
 * The one list of denial reasons on the wire: the lease rules' own (lease-fence's
 * `LEASE_DENIAL_REASONS`, not restated here) and the coordinator's. Every `reason` of an
 * `ok: false` reply, the coordinator's status table and the SDK's results are typed by
 * {@link DenialReason}; the type tests in `denial-reason.spec.ts` and in the client hold them
 * together.
 */
import { LEASE_DENIAL_REASONS } from 'lease-fence';
import { z } from 'zod';

/**
 * Every reason the coordinator denies a request with, in its reply body's `reason`:
 * - the lease rules' (`held`, `already-held`, `expired`, `not-holder`);
 * - `lock-delay`: the resource's previous holder was lost uncleanly less than its lock-delay ago;
 * - `fence-unavailable`: fence-first, no gate admitted the new fence in time (it was burned);
 * - `seq-conflict`: a gate's rejection report reuses a seq recorded with other content.
 */
export const DENIAL_REASONS = [...LEASE_DENIAL_REASONS, 'lock-delay', 'fence-unavailable', 'seq-conflict'] as const;

/** One of {@link DENIAL_REASONS}. */
export type DenialReason = (typeof DENIAL_REASONS)[number];

/** A {@link DenialReason}, parsed. */
export const DenialReasonSchema = z.enum(DENIAL_REASONS);
