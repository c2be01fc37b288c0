/**
 * The lease rules: the one copy. Pure functions of (table, request, now) that return an outcome
 * and the changes to apply; they never mutate the table and never read a clock. Used by the
 * in-memory {@link LeaseCoordinator} and by the event-sourced coordinator's decide/evolve, so both
 * follow the same rules.
 *
 * @see docs/design.md § "The library's rules"
 */
import { ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import { describeValue, requireFence, requireId, requireObject, requireTtlMillis } from '../validate.js';
import type { LeaseTable } from './lease-table.js';
import type {
  AcquireCommand,
  AcquireOutcome,
  FenceToken,
  Grant,
  LeaseChange,
  LeaseDecision,
  LeaseRecord,
  ReleaseOutcome,
  RenewCommand,
  RenewOutcome,
} from './outcomes.js';

const NO_CHANGES: readonly LeaseChange[] = Object.freeze([]);

const deny = <O>(outcome: O): LeaseDecision<O> => ({ outcome: Object.freeze(outcome), changes: NO_CHANGES });

function requireNow(api: string, now: unknown): asserts now is Instant {
  if (!(now instanceof Instant)) throw new TypeError(`${api}: now must be an Instant, got ${describeValue(now)}`);
}

/** The grant that describes `lease` as it stands, answering `requestId`. */
const grantOf = (lease: LeaseRecord, requestId: string): Grant =>
  Object.freeze({
    resource: lease.resource,
    holderId: lease.holderId,
    fence: lease.fence,
    ttlMillis: lease.ttlMillis,
    requestId,
    coordinatorExpiresAt: lease.expiresAt,
  });

/**
 * Whether `fence` can have been issued for `resource`: it is at most the highest fence ever
 * granted on `resource` ({@link LeaseTable.highestFence}; 0 for a resource never granted). A
 * fence above it was never issued for this resource — not by anyone, or only for another
 * resource. Fences are not remembered one by one (the table keeps one number per resource), so
 * a fence below that highest one that went to another resource counts as issued here.
 *
 * The one rule behind `'not-holder'` versus `'expired'` in {@link decideRenew} and
 * {@link decideRelease}, and behind the event-sourced coordinator's refusal of gate reports
 * naming fences it never issued.
 *
 * @param table - Read only.
 * @param resource - The resource the fence is presented for.
 * @param fence - A positive safe integer (not validated here: the callers validate first).
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership)
 */
export function wasFenceIssued(table: LeaseTable, resource: string, fence: number): boolean {
  return fence <= table.highestFence(resource);
}

/**
 * Where a token stands, for renew and release (one rule for both):
 * - the current generation of `resource` with that fence and holder, `now < expiresAt` → that lease;
 * - that fence is the current generation's but another holder's → `'not-holder'`;
 * - that fence is the current generation's, past its expiry → `'expired'`;
 * - a fence never issued for this resource ({@link wasFenceIssued}) → `'not-holder'`;
 * - otherwise a generation of this resource that has ended (expired, released, superseded) → `'expired'`.
 */
function standingOf(table: LeaseTable, token: FenceToken, now: Instant): LeaseRecord | 'expired' | 'not-holder' {
  const current = table.lease(token.resource);
  if (current !== undefined && current.fence === token.fence) {
    if (current.holderId !== token.holderId) return 'not-holder';
    return now.isBefore(current.expiresAt) ? current : 'expired';
  }
  return wasFenceIssued(table, token.resource, token.fence) ? 'expired' : 'not-holder';
}

/** Milliseconds until `expiresAt`, rounded up so retrying after it is never too early. */
const retryAfter = (expiresAt: Instant, now: Instant): number => Math.ceil(expiresAt.minus(now));

/**
 * Decides an acquire at coordinator time `now`:
 * 1. A repeated (holderId, requestId) still in the replay cache: if that fence is still the
 *    resource's current, unexpired lease → `ok` with the existing grant (current expiry), no
 *    changes; otherwise `{ ok: false, reason: 'expired', fence }`, no changes.
 * 2. The current lease is unexpired (`now < expiresAt`): same holder → `'already-held'` (never a
 *    second fence); another holder → `'held'` with `retryAfterMillis = ceil(expiresAt - now)`.
 * 3. Otherwise (free, or the current lease is past expiry): changes are `expired` for that lease
 *    if present, then `granted` with `fence = issuedFence + 1`, `expiresAt = now + ttlMillis`.
 *
 * @param table - Read only.
 * @param request - `resource`, `holderId`, `requestId` (non-empty), `ttlMillis` (ms, integer in
 *   [1, {@link MAX_TTL_MILLIS}]).
 * @param now - The coordinator's reading, in the domain of the table's instants.
 * @throws TypeError / RangeError on a malformed request (nothing decided, no fence burned).
 * @throws {@link ProtocolMisuseError} if the requestId was already used by this holder for another resource.
 * @throws {@link ClockDomainError} if `now` is in another domain than the current lease.
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership; Retries are idempotent)
 */
export function decideAcquire(table: LeaseTable, request: AcquireCommand, now: Instant): LeaseDecision<AcquireOutcome> {
  const api = 'decideAcquire';
  requireObject(api, 'request', request);
  requireId(api, 'request.resource', request.resource);
  requireId(api, 'request.holderId', request.holderId);
  requireId(api, 'request.requestId', request.requestId);
  requireTtlMillis(api, 'request.ttlMillis', request.ttlMillis);
  return decideCheckedAcquire(table, request, now);
}

/**
 * {@link decideAcquire} for a request already checked by a public entry point of this package
 * (`LeaseCoordinator`): checks only `now` (a reading of the caller's clock, which no entry point checks).
 * @internal not exported from the package.
 */
export function decideCheckedAcquire(
  table: LeaseTable,
  request: AcquireCommand,
  now: Instant,
): LeaseDecision<AcquireOutcome> {
  const api = 'decideAcquire';
  requireNow(api, now);
  const { resource, holderId, requestId, ttlMillis } = request;
  const current = table.lease(resource);

  const replayed = table.replayed(holderId, requestId);
  if (replayed !== undefined) {
    if (replayed.resource !== resource) {
      throw new ProtocolMisuseError(
        `${api}: requestId ${JSON.stringify(requestId)} of holder ${JSON.stringify(holderId)} was used for resource ` +
          `${JSON.stringify(replayed.resource)}, not ${JSON.stringify(resource)}; use a fresh requestId per acquisition`,
      );
    }
    if (current !== undefined && current.fence === replayed.fence && now.isBefore(current.expiresAt)) {
      return deny({ ok: true, grant: grantOf(current, current.requestId) });
    }
    return deny({ ok: false, reason: 'expired', fence: replayed.fence });
  }

  if (current !== undefined && now.isBefore(current.expiresAt)) {
    const retryAfterMillis = retryAfter(current.expiresAt, now);
    return current.holderId === holderId
      ? deny({ ok: false, reason: 'already-held', heldBy: holderId, fence: current.fence, retryAfterMillis })
      : deny({ ok: false, reason: 'held', heldBy: current.holderId, retryAfterMillis });
  }

  const fence = table.issuedFence + 1;
  if (!Number.isSafeInteger(fence))
    throw new RangeError(`${api}: the fence counter is exhausted at ${table.issuedFence}`);
  const lease: LeaseRecord = Object.freeze({
    resource,
    holderId,
    fence,
    ttlMillis,
    requestId,
    grantedAt: now,
    expiresAt: now.plus(ttlMillis),
  });
  const changes: LeaseChange[] = [];
  if (current !== undefined) {
    changes.push(Object.freeze({ type: 'expired', resource, holderId: current.holderId, fence: current.fence }));
  }
  changes.push(Object.freeze({ type: 'granted', lease }));
  return { outcome: Object.freeze({ ok: true, grant: grantOf(lease, requestId) }), changes: Object.freeze(changes) };
}

/**
 * Decides a renewal at coordinator time `now`:
 * - a retry: this holder's requestId is remembered ({@link LeaseTable.replayedRenewal}) as a
 *   renewal of this same lease (resource and fence) → no changes, and the grant as that lease
 *   stands now (its current expiry, never earlier than what the first attempt produced) while
 *   it is current and unexpired, else the denial below (`'expired'`, …). So a retried renewal
 *   never pushes the expiry out again. The last `replayCacheSize` renewals are remembered,
 *   oldest evicted first; a requestId remembered for another lease is decided as a new renewal;
 * - the current lease has this fence and holder and `now < expiresAt` → `renewed`: same fence,
 *   `expiresAt = max(lease.expiresAt, now + (request.ttlMillis ?? lease.ttlMillis))`. A renewal
 *   never moves the expiry earlier: a holder whose shortening renewal is late or lost still acts
 *   on its previous deadline, which must stay inside the coordinator's window;
 * - the current lease has this fence but another holder, or the fence was never issued for this
 *   resource ({@link wasFenceIssued}: above the highest fence ever granted on it) → `'not-holder'`;
 * - otherwise — a generation of this resource that has ended (expired, released or superseded),
 *   or is past its expiry even if nobody took it — → `'expired'`: never resurrected.
 * Denials have no changes. {@link decideRelease} judges the token by the same rule.
 *
 * @param request - `resource`, `holderId`, `requestId` (non-empty), `fence` (positive safe
 *   integer), optional `ttlMillis` (ms, integer in [1, {@link MAX_TTL_MILLIS}]).
 * @param now - The coordinator's reading.
 * @throws TypeError / RangeError on a malformed request; {@link ClockDomainError} on a domain mismatch.
 * @see docs/design.md § "The library's rules" (Renewal keeps the fence; an expired lease is never resurrected)
 */
export function decideRenew(table: LeaseTable, request: RenewCommand, now: Instant): LeaseDecision<RenewOutcome> {
  const api = 'decideRenew';
  requireObject(api, 'request', request);
  requireId(api, 'request.resource', request.resource);
  requireId(api, 'request.holderId', request.holderId);
  requireId(api, 'request.requestId', request.requestId);
  requireFence(api, 'request.fence', request.fence);
  if (request.ttlMillis !== undefined) requireTtlMillis(api, 'request.ttlMillis', request.ttlMillis);
  return decideCheckedRenew(table, request, now);
}

/**
 * {@link decideRenew} for a request already checked by a public entry point of this package
 * (`LeaseCoordinator`): checks only `now` (a reading of the caller's clock, which no entry point checks).
 * @internal not exported from the package.
 */
export function decideCheckedRenew(
  table: LeaseTable,
  request: RenewCommand,
  now: Instant,
): LeaseDecision<RenewOutcome> {
  const api = 'decideRenew';
  requireNow(api, now);
  const { resource, holderId, fence, requestId } = request;
  const current = standingOf(table, request, now);
  if (typeof current === 'string') return deny({ ok: false, reason: current });
  const replayed = table.replayedRenewal(holderId, requestId);
  if (replayed !== undefined && replayed.resource === resource && replayed.fence === fence) {
    return deny({ ok: true, grant: grantOf(current, requestId) });
  }
  const ttlMillis = request.ttlMillis ?? current.ttlMillis;
  // Never earlier: the holder may still act on the deadline of its previous grant (this renewal's
  // reply can be late or lost), and that deadline lies inside the expiry it was granted with.
  const requested = now.plus(ttlMillis);
  const expiresAt = requested.isBefore(current.expiresAt) ? current.expiresAt : requested;
  const renewed = { ...current, ttlMillis, expiresAt };
  return {
    outcome: Object.freeze({ ok: true, grant: grantOf(renewed, requestId) }),
    changes: Object.freeze([
      Object.freeze({ type: 'renewed', resource, holderId, fence, requestId, ttlMillis, expiresAt } as const),
    ]),
  };
}

/**
 * Decides a release at coordinator time `now`, judging the token exactly as {@link decideRenew} does:
 * - the current lease with this fence and holder, unexpired → `released`;
 * - a retry: a generation this same holder already released ({@link LeaseTable.releasedBy}: the
 *   same resource, fence and holder) → `ok`, no changes (no second event), whatever happened to
 *   the resource since;
 * - the current lease's fence with another holder, or a fence never issued for this resource
 *   ({@link wasFenceIssued}) → `'not-holder'`;
 * - that lease past its expiry, or a generation of this resource that has ended otherwise
 *   (expired — swept or not —, superseded, released by another holder, or released longer ago
 *   than the last `replayCacheSize` releases) → `'expired'`.
 * Denials have no changes.
 *
 * A retry is recognised by the release's own fields, not by a requestId: a fence names one
 * generation of one resource and a generation is released at most once, so (resource, fence)
 * identifies the release, and the holder must match. So a retry from any client is idempotent —
 * the SDK after reconnecting, over the agent link or HTTP, or `curl` sending the same body —
 * with no field added to the protocol, the SDK or the `LeaseReleased` event, and none for a
 * caller to get wrong (a requestId made fresh per attempt would not be recognised).
 *
 * @param token - `resource`, `holderId` (non-empty), `fence` (positive safe integer).
 * @throws TypeError / RangeError on a malformed token; {@link ClockDomainError} on a domain mismatch.
 * @see docs/design.md § "The library's rules"
 */
export function decideRelease(table: LeaseTable, token: FenceToken, now: Instant): LeaseDecision<ReleaseOutcome> {
  const api = 'decideRelease';
  requireObject(api, 'token', token);
  requireId(api, 'token.resource', token.resource);
  requireId(api, 'token.holderId', token.holderId);
  requireFence(api, 'token.fence', token.fence);
  return decideCheckedRelease(table, token, now);
}

/**
 * {@link decideRelease} for a request already checked by a public entry point of this package
 * (`LeaseCoordinator`): checks only `now` (a reading of the caller's clock, which no entry point checks).
 * @internal not exported from the package.
 */
export function decideCheckedRelease(
  table: LeaseTable,
  token: FenceToken,
  now: Instant,
): LeaseDecision<ReleaseOutcome> {
  const api = 'decideRelease';
  requireNow(api, now);
  const { resource, holderId, fence } = token;
  const current = standingOf(table, token, now);
  if (typeof current === 'string') {
    // Only an ended generation can have been released (standingOf answers 'expired' for it).
    if (table.releasedBy(resource, fence) === holderId) return deny({ ok: true });
    return deny({ ok: false, reason: current });
  }
  return {
    outcome: Object.freeze({ ok: true }),
    changes: Object.freeze([Object.freeze({ type: 'released', resource, holderId, fence } as const)]),
  };
}

/**
 * Sweeps expiries at coordinator time `now`: one `expired` change per current lease with
 * `now >= expiresAt`, in table order. Sweeping is optional for safety (acquire treats a lease
 * past expiry as free) but keeps the table and the log honest about who holds what.
 *
 * @throws {@link ClockDomainError} if `now` is in another domain than a lease.
 * @see docs/design.md § "The library's rules"
 */
export function decideExpiry(table: LeaseTable, now: Instant): LeaseDecision<{ readonly expired: number }> {
  requireNow('decideExpiry', now);
  const changes: LeaseChange[] = [];
  for (const lease of table.leases()) {
    if (now.isAtOrAfter(lease.expiresAt)) {
      changes.push(
        Object.freeze({ type: 'expired', resource: lease.resource, holderId: lease.holderId, fence: lease.fence }),
      );
    }
  }
  return { outcome: Object.freeze({ expired: changes.length }), changes: Object.freeze(changes) };
}
