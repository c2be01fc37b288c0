/**
 * The lease protocol's data: tokens, records, grants, outcomes and changes. Plain, immutable
 * values; business denials are outcomes (`ok: false` with a kebab-case `reason`), never errors.
 *
 * @see docs/design.md § "The library's rules"
 */
import type { Instant } from '../time/instant.js';

/**
 * What a holder shows a resource: which resource, who holds it, and the generation of
 * ownership (`fence`). A {@link FenceGate} admits a token only if its fence is not below
 * the highest it has seen.
 *
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership)
 */
export interface FenceToken {
  /** The resource the lease is on. */
  readonly resource: string;
  /** The holder the lease was granted to. */
  readonly holderId: string;
  /** The generation of ownership: a positive safe integer, strictly higher for every new acquisition. */
  readonly fence: number;
}

/**
 * One generation of ownership, as the coordinator keeps it. Instants are in the
 * coordinator's clock domain. The lease is expired when `now >= expiresAt`.
 *
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership)
 */
export interface LeaseRecord {
  readonly resource: string;
  readonly holderId: string;
  /** Fixed for the whole generation: renewals keep it. */
  readonly fence: number;
  /** Duration of the latest grant or renewal, in milliseconds (positive integer). */
  readonly ttlMillis: number;
  /** The acquire request that started this generation (the replay cache's key, with `holderId`). */
  readonly requestId: string;
  /** When the generation started (coordinator domain). */
  readonly grantedAt: Instant;
  /** When it ends unless renewed (coordinator domain): `now + ttlMillis` at the last grant or renewal. */
  readonly expiresAt: Instant;
}

/**
 * What a coordinator hands out on a successful acquire or renewal. Plain data: send it over the
 * wire and give it to {@link LeaseClient.completeAcquire} / {@link LeaseClient.completeRenewal}.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring)
 */
export interface Grant {
  readonly resource: string;
  readonly holderId: string;
  /** The generation of ownership; a renewal returns the same fence. */
  readonly fence: number;
  /** Lease duration in milliseconds (positive integer), counted by the coordinator from when it decided. */
  readonly ttlMillis: number;
  /** The request this grant answers: the acquire's requestId, or the renewal's. */
  readonly requestId: string;
  /**
   * The coordinator's expiry, in the coordinator's clock domain: for logs and display. Never
   * measure a client deadline against it: comparing it with a client instant throws
   * {@link ClockDomainError}.
   */
  readonly coordinatorExpiresAt: Instant;
}

/**
 * Every reason the lease rules deny a request with: the `reason` of every `ok: false`
 * {@link AcquireOutcome}, {@link RenewOutcome} and {@link ReleaseOutcome}, and nothing else (the
 * type tests in `outcomes.types.spec.ts` hold the two together). The coordinator's wire adds its
 * own reasons to this list (`DENIAL_REASONS` in `@lease-fence/protocol`); it never restates these.
 */
export const LEASE_DENIAL_REASONS = ['held', 'already-held', 'expired', 'not-holder'] as const;

/** One of {@link LEASE_DENIAL_REASONS}: why the lease rules denied an acquire, renewal or release. */
export type LeaseDenialReason = (typeof LEASE_DENIAL_REASONS)[number];

/**
 * Result of an acquire.
 * - `ok: true` — the grant (a new generation, or the existing one for a repeated requestId).
 * - `'held'` — another holder's lease is current; try again after `retryAfterMillis` (ms, rounded up).
 * - `'already-held'` — the same holder already holds it (fence `fence`): never a second fence,
 *   because a higher fence would make the resource refuse the holder's own in-flight writes.
 * - `'expired'` — a repeated requestId whose generation (`fence`) has ended: never a fresh grant
 *   for an old request; acquire again with a new requestId.
 *
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership; Retries are idempotent)
 */
export type AcquireOutcome =
  | { readonly ok: true; readonly grant: Grant }
  | { readonly ok: false; readonly reason: 'held'; readonly heldBy: string; readonly retryAfterMillis: number }
  | {
      readonly ok: false;
      readonly reason: 'already-held';
      readonly heldBy: string;
      readonly fence: number;
      readonly retryAfterMillis: number;
    }
  | { readonly ok: false; readonly reason: 'expired'; readonly fence: number };

/**
 * Result of a renewal.
 * - `ok: true` — same fence, expiry moved to `now + ttlMillis`.
 * - `'expired'` — that generation ended (expired, released or superseded); it is never
 *   resurrected, even when nobody else took the resource. Acquire again.
 * - `'not-holder'` — the fence belongs to another holder, or was never issued for this resource
 *   (above the highest fence ever granted on it, {@link LeaseTable.highestFence}).
 *
 * @see docs/design.md § "The library's rules" (An expired lease is never resurrected)
 */
export type RenewOutcome =
  | { readonly ok: true; readonly grant: Grant }
  | { readonly ok: false; readonly reason: 'expired' }
  | { readonly ok: false; readonly reason: 'not-holder' };

/**
 * Result of a release, judged by the same rule as a renewal ({@link RenewOutcome}):
 * - `ok: true` — released; the next acquire mints a higher fence at once.
 * - `'expired'` — that generation of this resource has ended (past its expiry, released or
 *   superseded): there is nothing left to release.
 * - `'not-holder'` — the fence belongs to another holder, or was never issued for this resource.
 *
 * @see docs/design.md § "The library's rules"
 */
export type ReleaseOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: 'not-holder' | 'expired' };

/**
 * A fact decided by the rules. {@link LeaseTable.apply} folds it into a table; the event-sourced
 * coordinator maps each one to exactly one log event. Instants are in the coordinator's domain.
 *
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve)
 */
export type LeaseChange =
  | { readonly type: 'granted'; readonly lease: LeaseRecord }
  | {
      readonly type: 'renewed';
      readonly resource: string;
      readonly holderId: string;
      readonly fence: number;
      readonly requestId: string;
      readonly ttlMillis: number;
      readonly expiresAt: Instant;
    }
  | { readonly type: 'released'; readonly resource: string; readonly holderId: string; readonly fence: number }
  | { readonly type: 'expired'; readonly resource: string; readonly holderId: string; readonly fence: number };

/**
 * What a decide function returns: the outcome for the caller, and the changes to apply (none for
 * a denial). Apply `changes` in order before acting on `outcome`.
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve)
 */
export interface LeaseDecision<O> {
  readonly outcome: O;
  readonly changes: readonly LeaseChange[];
}

/** An acquire request as {@link decideAcquire} reads it. Extra fields (e.g. a client's `sentAt`) are ignored. @see docs/design.md § "The library's rules" */
export interface AcquireCommand {
  readonly resource: string;
  readonly holderId: string;
  /** Unique per acquisition attempt; a retry reuses it. */
  readonly requestId: string;
  /** Requested duration in milliseconds: positive integer, at most {@link MAX_TTL_MILLIS}. */
  readonly ttlMillis: number;
}

/** A renewal request as {@link decideRenew} reads it. @see docs/design.md § "The library's rules" (Renewal keeps the fence) */
export interface RenewCommand {
  readonly resource: string;
  readonly holderId: string;
  /** The fence of the generation being renewed. */
  readonly fence: number;
  readonly requestId: string;
  /** New duration in milliseconds; absent keeps the lease's current `ttlMillis`. */
  readonly ttlMillis?: number | undefined;
}
