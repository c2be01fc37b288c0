/**
 * Fence-first handover, the decider's half: an acquire on a fence-first resource reserves its
 * fence (`FenceReserved`) before any gate is asked to admit it; a gate's durable admit activates
 * the lease (`FenceAdmitted` + `LeaseGranted`); no admit in time, or a restart while pending,
 * burns it (`FenceBurned`). The reservation raises the fence counter at once, so a burned fence
 * is never issued again, even when the coordinator crashed between asking the gate and writing
 * the outcome (a gate may already have raised its floor to it). Waiting for the gate is the
 * shell's job; this file is pure.
 *
 * "Transfer is complete only after the durable fence moves; if the resource cannot advance,
 * burn the token."
 *
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve)
 */
import type { CoordinatorEvent } from '@lease-fence/protocol';
import {
  decideAcquire,
  isIntegerInRange,
  type AcquireOutcome,
  type Grant,
  type Instant,
  type LeaseChange,
} from 'lease-fence';
import type {
  ActivateOutcome,
  ActivateReservedLease,
  BurnOutcome,
  BurnReservedFence,
  LockDelayDenial,
  ReserveFence,
  ReserveFenceOutcome,
} from './commands.js';
import type { CoordinatorState, Reservation } from './state.js';

/** The stamp every event of a decision carries (boot id, monotonic reading, wall time). */
type Stamp = { readonly bootId: string; readonly atMillis: number; readonly wallMillis: number };

/** What a fence-first decision returns (the shape of `decide`'s `Decision`). */
interface Decided<O> {
  readonly events: readonly CoordinatorEvent[];
  readonly outcome: O;
}

/**
 * The denial of an acquire on a resource whose fence is reserved and pending: `'held'` by the
 * reserving holder until the reservation's deadline (at least 1 ms). `undefined` when nothing is
 * pending. Applies to plain acquires too: while a fence is pending nobody else is granted.
 */
export function pendingReservationDenial(
  state: CoordinatorState,
  resource: string,
  now: Instant,
): AcquireOutcome | undefined {
  const reserved = state.reservations.get(resource);
  if (reserved === undefined) return undefined;
  return {
    ok: false,
    reason: 'held',
    heldBy: reserved.holderId,
    retryAfterMillis: Math.max(1, Math.ceil(reserved.deadlineMillis - now.millis)),
  };
}

/**
 * Decides a fence-first acquire:
 * - the same holder's same requestId already pending → `ok: 'pending'`, `retried: true`, no event;
 * - another acquire pending on the resource → `'held'` ({@link pendingReservationDenial});
 * - otherwise lease-fence's `decideAcquire`: a denial or a retried requestId's existing grant
 *   is returned as is; a new grant becomes `LeaseExpired` for a lease past expiry (if any) and
 *   `FenceReserved` with deadline `now + timeoutMillis`, outcome `ok: 'pending'`, `retried: false`;
 *   inside the resource's lock-delay (`lockDelay`, the rule `AcquireLease` follows) the grant is
 *   denied instead, keeping the `LeaseExpired` of a lapsed lease.
 * @throws as `decideAcquire`; RangeError for a `timeoutMillis` that is not a positive integer.
 */
export function decideReserve(
  command: ReserveFence,
  state: CoordinatorState,
  now: Instant,
  stamp: Stamp,
  acquireEvents: (outcome: ReturnType<typeof decideAcquire>) => readonly CoordinatorEvent[],
  lockDelay: (changes: readonly LeaseChange[]) => LockDelayDenial | undefined,
): Decided<ReserveFenceOutcome> {
  if (!isIntegerInRange(command.timeoutMillis, 1)) {
    throw new RangeError(
      `decide ReserveFence: timeoutMillis must be a positive integer number of milliseconds, got ${String(command.timeoutMillis)}`,
    );
  }
  const reserved = state.reservations.get(command.resource);
  if (reserved !== undefined && reserved.holderId === command.holderId && reserved.requestId === command.requestId) {
    return { events: [], outcome: { ok: 'pending', reservation: reservationOf(reserved), retried: true } };
  }
  const denial = pendingReservationDenial(state, command.resource, now);
  if (denial !== undefined) return { events: [], outcome: denial };
  const decision = decideAcquire(state.table, command, now);
  const granted = decision.changes.find((change) => change.type === 'granted');
  if (granted === undefined || granted.type !== 'granted')
    return { events: acquireEvents(decision), outcome: decision.outcome };
  const ended = acquireEvents({
    outcome: decision.outcome,
    changes: decision.changes.filter((change) => change.type !== 'granted'),
  });
  const delayed = lockDelay(decision.changes);
  if (delayed !== undefined) return { events: ended, outcome: delayed };
  const { lease } = granted;
  const reservation = {
    resource: lease.resource,
    holderId: lease.holderId,
    fence: lease.fence,
    requestId: lease.requestId,
    ttlMillis: lease.ttlMillis,
  };
  return {
    events: [
      ...ended,
      {
        type: 'FenceReserved',
        version: 1,
        data: { ...stamp, ...reservation, deadlineMillis: now.millis + command.timeoutMillis },
      },
    ],
    outcome: { ok: 'pending', reservation, retried: false },
  };
}

/**
 * Activates the lease of the fence reserved on `resource` once gate `gateId` durably admitted it:
 * `FenceAdmitted` then `LeaseGranted` (same fence, holder and requestId; expiry `now + ttlMillis`:
 * the TTL counts from activation). `'not-pending'` with no event when that fence is not the
 * resource's pending reservation (already activated or burned, or never reserved).
 */
export function decideActivate(
  command: ActivateReservedLease,
  state: CoordinatorState,
  now: Instant,
  stamp: Stamp,
): Decided<ActivateOutcome> {
  const reserved = state.reservations.get(command.resource);
  if (reserved === undefined || reserved.fence !== command.fence)
    return { events: [], outcome: { ok: false, reason: 'not-pending', fence: command.fence } };
  const expiresAt = now.plus(reserved.ttlMillis);
  const { resource, holderId, fence, requestId, ttlMillis } = reserved;
  const grant: Grant = { resource, holderId, fence, ttlMillis, requestId, coordinatorExpiresAt: expiresAt };
  return {
    events: [
      { type: 'FenceAdmitted', version: 1, data: { ...stamp, resource, gateId: command.gateId, holderId, fence } },
      {
        type: 'LeaseGranted',
        version: 1,
        data: { ...stamp, resource, holderId, fence, requestId, ttlMillis, expiresAtMillis: expiresAt.millis },
      },
    ],
    outcome: { ok: true, grant },
  };
}

/** Burns the fence reserved on `resource` (`FenceBurned`; outcome `fence-unavailable`, the acquire's answer), or `'not-pending'` with no event. */
export function decideBurn(command: BurnReservedFence, state: CoordinatorState, stamp: Stamp): Decided<BurnOutcome> {
  const reserved = state.reservations.get(command.resource);
  if (reserved === undefined || reserved.fence !== command.fence)
    return { events: [], outcome: { ok: false, reason: 'not-pending', fence: command.fence } };
  return {
    events: [burned(reserved, stamp, 'fence-unavailable')],
    outcome: { ok: false, reason: 'fence-unavailable', fence: reserved.fence },
  };
}

/**
 * Recovery's half: every reservation left pending by the dead boot is burned
 * (`coordinator-restarted`). A gate may already have raised its floor to it, so it is never granted.
 * @param stamp - The new boot's stamp; these events follow its `CoordinatorStarted`.
 */
export const burnLeftoverReservations = (state: CoordinatorState, stamp: Stamp): CoordinatorEvent[] =>
  [...state.reservations.values()].map((reserved) => burned(reserved, stamp, 'coordinator-restarted'));

const burned = (
  reserved: Reservation,
  stamp: Stamp,
  reason: 'fence-unavailable' | 'coordinator-restarted',
): CoordinatorEvent => ({
  type: 'FenceBurned',
  version: 1,
  data: {
    ...stamp,
    resource: reserved.resource,
    holderId: reserved.holderId,
    fence: reserved.fence,
    requestId: reserved.requestId,
    reason,
  },
});

const reservationOf = (reserved: Reservation) => ({
  resource: reserved.resource,
  holderId: reserved.holderId,
  fence: reserved.fence,
  requestId: reserved.requestId,
  ttlMillis: reserved.ttlMillis,
});
