/**
 * Domain values → their wire form (the protocol's reply shapes). Instants travel as
 * `{ millis, domain }`: the coordinator's clock domain, for display only.
 */
import type { WireGrant, WireLease } from '@lease-fence/protocol';
import type { CoordinatorAcquireOutcome } from '@lease-fence/coordinator-core';
import type { Grant, LeaseRecord, ReleaseOutcome, RenewOutcome } from 'lease-fence';
import type { WireDenial } from '../http/denied-outcome.js';

/** A grant on the wire, with its `signedToken` (see `signing/grant-signer.ts`). */
export function toWireGrant(grant: Grant, signedToken: string): WireGrant {
  return {
    resource: grant.resource,
    holderId: grant.holderId,
    fence: grant.fence,
    ttlMillis: grant.ttlMillis,
    requestId: grant.requestId,
    coordinatorExpiresAt: grant.coordinatorExpiresAt.toJSON(),
    signedToken,
  };
}

/** A current holder on the wire. */
export function toWireLease(lease: LeaseRecord & { readonly inGrace: boolean }): WireLease {
  return {
    resource: lease.resource,
    holderId: lease.holderId,
    fence: lease.fence,
    ttlMillis: lease.ttlMillis,
    requestId: lease.requestId,
    coordinatorExpiresAt: lease.expiresAt.toJSON(),
    inGrace: lease.inGrace,
  };
}

/** Milliseconds to wait before retrying, rounded up to a whole millisecond so a retry never comes early. */
const retryAfter = (millis: number): number => Math.max(0, Math.ceil(millis));

/** A denied outcome of acquire, renew or release on the wire (`ok: false`, `reason`, and the reason's fields). */
export function toWireDenial(
  outcome: Exclude<CoordinatorAcquireOutcome | RenewOutcome | ReleaseOutcome, { ok: true }>,
): WireDenial {
  switch (outcome.reason) {
    case 'fence-unavailable':
      return {
        ok: false,
        reason: 'fence-unavailable',
        error: 'fence-unavailable',
        fence: outcome.fence,
        retryable: true,
        message: `no gate of this resource admitted fence ${outcome.fence} in time; the fence is burned (never granted, never issued again); retry, and the next attempt gets a higher fence`,
      };
    case 'held':
      return {
        ok: false,
        reason: 'held',
        heldBy: outcome.heldBy,
        retryAfterMillis: retryAfter(outcome.retryAfterMillis),
      };
    case 'already-held':
      return {
        ok: false,
        reason: 'already-held',
        heldBy: outcome.heldBy,
        fence: outcome.fence,
        retryAfterMillis: retryAfter(outcome.retryAfterMillis),
      };
    case 'lock-delay':
      return { ok: false, reason: 'lock-delay', retryAfterMillis: retryAfter(outcome.retryAfterMillis) };
    case 'expired':
      return 'fence' in outcome
        ? { ok: false, reason: 'expired', fence: outcome.fence }
        : { ok: false, reason: 'expired' };
    case 'not-holder':
      return { ok: false, reason: 'not-holder' };
  }
}
