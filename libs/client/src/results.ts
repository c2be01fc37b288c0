/**
 * What the agent SDK's calls resolve to. Business denials are data (`ok: false` with a
 * kebab-case `reason`), exactly as the coordinator decides them, plus one the SDK adds on the
 * holder's side: `'dead-on-arrival'`, a grant whose send-anchored deadline had already passed
 * when its reply arrived.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring; Fence = generation of ownership)
 */
import type { Lease as LibraryLease } from 'lease-fence';
import type { Lease } from './signed-lease.js';

/**
 * A grant that arrived after the deadline it would have set (`sentAt + ttlMillis -
 * clockSkewMillis`, client clock), for example after slow retries through lost replies. It is
 * never handed out as a live lease: the SDK released it (`released: true` when the coordinator
 * confirmed) and reports it here.
 */
export interface DeadOnArrival {
  readonly ok: false;
  readonly reason: 'dead-on-arrival';
  /** The fence the dead grant carried. */
  readonly fence: number;
  /** How far past its deadline the grant arrived, in milliseconds (client clock, ≥ 0). */
  readonly lateByMillis: number;
  /** Whether the coordinator confirmed the release of the dead grant. */
  readonly released: boolean;
}

/**
 * Result of {@link LeaseFenceClient.acquire}.
 * - `ok: true` — a live lease whose `deadline` is anchored at the first send of this intent, with
 *   the coordinator's `signedToken` for the resource's gate.
 * - `'held'` — another holder has it; `retryAfterMillis` is the coordinator's hint (ms).
 * - `'already-held'` — this holder already holds it under `fence` (an earlier intent): never a
 *   second fence. Release that fence, or wait for it to expire.
 * - `'expired'` — the grant owed to this intent (same requestId, after a lost reply) has already
 *   ended; acquire again.
 * - `'lock-delay'` — the resource's previous holder was lost uncleanly (its lease expired, or a
 *   gate refused one of its writes) and the coordinator's `LEASE_FENCE_LOCK_DELAY` for this
 *   resource has not passed yet: nobody gets it until then. Retry after `retryAfterMillis` (ms).
 * - `'dead-on-arrival'` — see {@link DeadOnArrival}.
 */
export type AcquireResult<L extends LibraryLease = Lease> =
  | { readonly ok: true; readonly lease: L }
  | { readonly ok: false; readonly reason: 'held'; readonly heldBy: string; readonly retryAfterMillis: number }
  | {
      readonly ok: false;
      readonly reason: 'already-held';
      readonly heldBy: string;
      readonly fence: number;
      readonly retryAfterMillis: number;
    }
  | { readonly ok: false; readonly reason: 'expired'; readonly fence?: number }
  | { readonly ok: false; readonly reason: 'lock-delay'; readonly retryAfterMillis: number }
  | DeadOnArrival;

/**
 * Result of {@link LeaseFenceClient.renew} (`L`: the kind of lease, the SDK's signed one by default).
 * - `ok: true` — the renewed lease: same fence, deadline anchored at this renewal's first send.
 * - `'expired'` — that generation ended; it is never resurrected. Acquire again.
 * - `'not-holder'` — the fence is not this holder's.
 * - `'dead-on-arrival'` — the renewal's grant arrived after the deadline it would have set; released.
 */
export type RenewResult<L extends LibraryLease = Lease> =
  | { readonly ok: true; readonly lease: L }
  | { readonly ok: false; readonly reason: 'expired' }
  | { readonly ok: false; readonly reason: 'not-holder' }
  | DeadOnArrival;

/**
 * Result of {@link LeaseFenceClient.release}: `ok: true`, or `'expired'` (already past the
 * coordinator's expiry) or `'not-holder'` (that generation is not current: already released,
 * expired and taken, or never this holder's). A release retried after a lost reply may answer
 * `'not-holder'` because the first attempt already released it.
 */
export type ReleaseResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'not-holder' | 'expired' };

/** A denial of {@link LeaseFenceClient.acquire}: every {@link AcquireResult} but the live lease. */
export type AcquireDenial = Exclude<AcquireResult, { readonly ok: true }>;
