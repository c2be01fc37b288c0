/**
 * A business denial on its way to the exception filter. Denials are data in the domain
 * (`{ ok: false, reason }`); the controller hands them to the one filter as this exception so
 * that a single place maps outcome reasons to HTTP statuses (409 / 410).
 * Status codes are decided in one file (this one, with ./api-exception.filter.ts for errors).
 */
import type { DenialReason } from '@lease-fence/protocol';

/** A denied outcome as it goes on the wire: `{ ok: false, reason, ... }`. */
export interface WireDenial {
  readonly ok: false;
  /** One of the protocol's `DENIAL_REASONS`: the status table in ./api-exception.filter.ts has a status for each. */
  readonly reason: DenialReason;
  readonly [field: string]: unknown;
}

/** Carries a denied outcome from a controller to the exception filter, which replies with it as the body. */
export class DeniedOutcome extends Error {
  /** @param denial - The reply body (the outcome in wire form). */
  constructor(readonly denial: WireDenial) {
    super(`denied: ${denial.reason}`);
    this.name = 'DeniedOutcome';
  }
}
