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

/**
 * Carries a denied outcome from a controller to the exception filter, which replies with it as the
 * body. A denial is not exceptional (every contended acquire is one), so it is built without a
 * stack trace: capturing one costs more than the rest of the denial's reply.
 */
export class DeniedOutcome extends Error {
  /** The reply body (the outcome in wire form). */
  readonly denial: WireDenial;

  /** @param denial - The reply body (the outcome in wire form). */
  constructor(denial: WireDenial) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0; // read by the Error constructor only: no frames captured
    super(`denied: ${denial.reason}`);
    Error.stackTraceLimit = stackTraceLimit;
    this.denial = denial;
    this.name = 'DeniedOutcome';
  }
}
