import type { Clock } from '../time/clock.js';
import type { Instant } from '../time/instant.js';
import type { FenceToken } from './outcomes.js';

/**
 * A holder's view of one granted (or renewed) lease, made only by
 * {@link LeaseClient.completeAcquire} / {@link LeaseClient.completeRenewal}. Immutable: a renewal
 * makes a new `Lease` with the same fence and a later deadline.
 *
 * `deadline` is anchored at the instant the request was sent, not when the reply arrived:
 * `deadline = request.sentAt + grant.ttlMillis - clockSkewMillis` (client domain), so the holder's
 * window always ends before the coordinator's.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring)
 */
export interface Lease {
  readonly resource: string;
  readonly holderId: string;
  /** The generation of ownership; show it to the resource through {@link FenceGate.commit}. */
  readonly fence: number;
  /** Lease duration granted, in milliseconds. */
  readonly ttlMillis: number;
  /** The send instant the deadline is anchored at (client domain). */
  readonly sentAt: Instant;
  /** When this holder must consider the lease lost (client domain). */
  readonly deadline: Instant;
  /** What to show the resource: `{ resource, holderId, fence }`. */
  readonly token: FenceToken;
  /** The coordinator's expiry (coordinator domain): for logs; comparing it with `deadline` throws {@link ClockDomainError}. */
  readonly coordinatorExpiresAt: Instant;
  /**
   * Advisory: `true` once this client's clock has reached `deadline`. Unsafe to branch a write on:
   * a stall between this check and the write (a GC pause, a model call) is exactly the failure
   * fencing exists for. Write through {@link FenceGate.commit}, which refuses a stale fence.
   * Reads the client clock once.
   */
  hasExpired(): boolean;
  /**
   * Advisory: milliseconds until `deadline` on this client's clock; negative once passed. Same
   * caveat as {@link Lease.hasExpired}: use it to schedule renewals, never to gate writes.
   */
  remainingMillis(): number;
}

/** @internal Builds a frozen {@link Lease}; only LeaseClient calls it. */
export const createLease = (fields: Omit<Lease, 'hasExpired' | 'remainingMillis' | 'token'>, clock: Clock): Lease => {
  const token: FenceToken = Object.freeze({
    resource: fields.resource,
    holderId: fields.holderId,
    fence: fields.fence,
  });
  const { deadline } = fields;
  return Object.freeze({
    ...fields,
    token,
    hasExpired: (): boolean => clock.now().isAtOrAfter(deadline),
    remainingMillis: (): number => deadline.minus(clock.now()),
  });
};
