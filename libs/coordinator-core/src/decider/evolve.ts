/**
 * `evolve(state, event) → state`: folds one log event into the coordinator's state. The same
 * function serves live operation (after each decision) and recovery (replay), so the two cannot
 * disagree. Lease changes go through the `LeaseTable` (`grant`, `renew`, `end`: `LeaseTable.apply`'s
 * rules, the library's one copy of how a change updates the table, given numbers instead of
 * Instants); this file only translates events back into those changes and keeps the
 * coordinator's own bookkeeping (boot, grace, rejections).
 *
 * Deterministic: reads no clock, no randomness, no I/O. Updates `state` in place and returns
 * it; the caller hands over ownership of `state`. An event that contradicts the state (a
 * renewal of a lease that is not current, a fence that goes backwards, an event of a boot other
 * than the current one) throws {@link EventLogCorruptError} naming the position it would have
 * had, and leaves `state` unchanged.
 *
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve, Recovery)
 */
import type { CoordinatorEvent, CoordinatorStarted, EventOf } from '@lease-fence/protocol';
import { Instant } from 'lease-fence';
import { EventLogCorruptError } from '../ports/event-log-errors.js';
import { REJECTIONS_KEPT, gateResourceKey, rejectionContent, rejectionKey, type CoordinatorState } from './state.js';

/**
 * Folds `event` into `state` (in place) and returns it.
 * @throws {@link EventLogCorruptError} with `position = state.position + 1` if the event
 *   contradicts the state; `state` is then unchanged.
 */
export function evolve(state: CoordinatorState, event: CoordinatorEvent): CoordinatorState {
  // Called once per event of a replay (a million times for a long log without a snapshot): no
  // closure, change object or Instant is made per event; errors are built only when thrown.
  const position = state.position + 1;
  if (event.type === 'CoordinatorStarted') {
    start(state, event, position);
  } else {
    const boot = state.boot;
    if (boot === undefined) throw corrupt(position, event, 'the log does not begin with CoordinatorStarted');
    if (event.data.bootId !== boot.bootId)
      throw corrupt(
        position,
        event,
        `written by boot ${JSON.stringify(event.data.bootId)} after boot ${JSON.stringify(boot.bootId)} started`,
      );
    if (event.data.atMillis < boot.lastAtMillis)
      throw corrupt(
        position,
        event,
        `reading ${event.data.atMillis} ms is before the boot's previous reading ${boot.lastAtMillis} ms`,
      );
    applyEvent(state, event, position);
    boot.lastAtMillis = event.data.atMillis;
  }
  state.position = position;
  return state;
}

/** The error of an `event` at `position` that contradicts the state. */
const corrupt = (position: number, event: CoordinatorEvent, message: string, cause?: unknown): EventLogCorruptError =>
  new EventLogCorruptError({ position, issues: [{ path: '', message: `${event.type}: ${message}` }], cause });

function applyEvent(
  state: CoordinatorState,
  event: Exclude<CoordinatorEvent, CoordinatorStarted>,
  position: number,
): void {
  switch (event.type) {
    case 'LeaseGranted':
    case 'LeaseRenewed':
    case 'LeaseReleased':
    case 'LeaseExpired': {
      const { data } = event;
      // A fence-first grant activates the fence its FenceReserved already counted as issued.
      const activates = event.type === 'LeaseGranted' && isReservedFor(state, event.data);
      if (event.type === 'LeaseGranted') {
        if (!activates && data.fence <= state.table.issuedFence) {
          throw corrupt(
            position,
            event,
            `fence ${data.fence} is not above the fences already issued (${state.table.issuedFence}): a fence would be issued twice`,
          );
        }
        if (state.table.hasLease(data.resource)) {
          throw corrupt(
            position,
            event,
            `resource ${JSON.stringify(data.resource)} still has a current lease; it must end (LeaseExpired/LeaseReleased) first`,
          );
        }
      }
      try {
        applyLeaseChange(state, event);
      } catch (error) {
        throw corrupt(position, event, error instanceof Error ? error.message : String(error), error);
      }
      // Each of these maps is empty through nearly all of a replay (carried leases end early in a
      // boot; reservations and lock delays are rare): a size test spares a lookup per event.
      if (state.carried.size !== 0) state.carried.delete(data.resource);
      noteLockDelay(state, event);
      if (activates) state.reservations.delete(event.data.resource);
      return;
    }
    case 'FenceReserved': {
      const { data } = event;
      if (data.fence <= state.table.issuedFence) {
        throw corrupt(
          position,
          event,
          `fence ${data.fence} is not above the fences already issued (${state.table.issuedFence}): a fence would be issued twice`,
        );
      }
      if (state.table.lease(data.resource) !== undefined)
        throw corrupt(
          position,
          event,
          `resource ${JSON.stringify(data.resource)} still has a current lease; it must end first`,
        );
      if (state.reservations.has(data.resource))
        throw corrupt(position, event, `resource ${JSON.stringify(data.resource)} already has a pending reservation`);
      state.table.burnFence(data.fence);
      state.reservedFences.set(data.resource, data.fence);
      state.reservations.set(data.resource, {
        resource: data.resource,
        holderId: data.holderId,
        fence: data.fence,
        requestId: data.requestId,
        ttlMillis: data.ttlMillis,
        deadlineMillis: data.deadlineMillis,
      });
      return;
    }
    case 'FenceBurned': {
      const { data } = event;
      const reserved = state.reservations.get(data.resource);
      if (reserved === undefined || reserved.fence !== data.fence)
        throw corrupt(
          position,
          event,
          `fence ${data.fence} is not pending on resource ${JSON.stringify(data.resource)}`,
        );
      state.reservations.delete(data.resource);
      return;
    }
    case 'FenceRejected': {
      const { data } = event;
      state.rejectionKeys.set(rejectionKey(data.gateId, data.resource, data.seq), rejectionContent(data));
      raiseRejectionSeq(state, data.gateId, data.resource, data.seq);
      fillMissingSeq(state, data.gateId, data.resource, data.seq);
      state.rejections.push({ ...data, rejected: { ...data.rejected }, current: { ...data.current }, position });
      if (state.rejections.length > REJECTIONS_KEPT)
        state.rejections.splice(0, state.rejections.length - REJECTIONS_KEPT);
      noteLockDelay(state, event);
      return;
    }
    case 'RejectionsMissing': {
      const { data } = event;
      if (data.fromSeq > data.throughSeq || data.throughSeq >= data.reportedSeq) {
        throw corrupt(
          position,
          event,
          `the missing range ${data.fromSeq}..${data.throughSeq} must be non-empty and below the reported seq ${data.reportedSeq}`,
        );
      }
      raiseRejectionSeq(state, data.gateId, data.resource, data.throughSeq);
      state.rejectionSeqs
        .get(gateResourceKey(data.gateId, data.resource))
        ?.missing.push([data.fromSeq, data.throughSeq]);
      return;
    }
    case 'SnapshotTaken':
      if (event.data.coversPosition !== position)
        throw corrupt(position, event, `covers position ${event.data.coversPosition} but is at position ${position}`);
      state.lastSnapshotPosition = position;
      return;
    case 'FenceFloorReported':
      if (event.data.raisedTo < event.data.fence)
        throw corrupt(
          position,
          event,
          `raisedTo ${event.data.raisedTo} is below the reported fence ${event.data.fence}`,
        );
      state.table.observeFence(event.data.resource, event.data.fence);
      state.table.burnFence(event.data.raisedTo);
      return;
    case 'FenceAdmitted':
    case 'CoordinatorCheckpointed':
      return;
  }
}

/**
 * A new boot: check it against the state, raise the fence counter, move every current lease
 * into the new clock domain at the deadline the event lists.
 */
function start(state: CoordinatorState, event: CoordinatorStarted, position: number): void {
  const { data } = event;
  if (state.namespace !== undefined && data.namespace !== state.namespace) {
    throw corrupt(
      position,
      event,
      `namespace ${JSON.stringify(data.namespace)} differs from the log's ${JSON.stringify(state.namespace)}`,
    );
  }
  if (state.boot !== undefined) {
    if (data.bootId === state.boot.bootId)
      throw corrupt(
        position,
        event,
        `boot id ${JSON.stringify(data.bootId)} is reused; every boot needs a fresh clock domain`,
      );
    if (data.previousBootId !== state.boot.bootId) {
      throw corrupt(
        position,
        event,
        `previousBootId ${JSON.stringify(data.previousBootId)} is not the boot that wrote the log before it (${JSON.stringify(state.boot.bootId)})`,
      );
    }
  }
  if (data.recoveredFence < state.table.issuedFence) {
    throw corrupt(
      position,
      event,
      `recoveredFence ${data.recoveredFence} is below the fences already issued (${state.table.issuedFence}): fences would go backwards`,
    );
  }
  const carried = new Map(data.carriedLeases.map((lease) => [lease.resource, lease]));
  if (carried.size !== data.carriedLeases.length)
    throw corrupt(position, event, 'carriedLeases lists a resource twice');
  for (const lease of state.table.leases()) {
    const entry = carried.get(lease.resource);
    if (entry === undefined || entry.fence !== lease.fence || entry.holderId !== lease.holderId) {
      throw corrupt(
        position,
        event,
        `the current lease on ${JSON.stringify(lease.resource)} (fence ${lease.fence}, holder ${JSON.stringify(lease.holderId)}) is not carried into the new boot`,
      );
    }
  }
  if (carried.size !== countLeases(state))
    throw corrupt(position, event, 'carriedLeases lists a lease that is not current');

  const startedAt = Instant.of(data.atMillis, data.bootId);
  reanchorLockDelays(state, data.atMillis);
  state.table.burnFence(data.recoveredFence);
  state.carried.clear();
  for (const lease of data.carriedLeases) {
    state.table.reanchor(lease.resource, Instant.of(lease.expiresAtMillis, data.bootId), startedAt);
    if (lease.expiresAtMillis > data.atMillis) state.carried.set(lease.resource, lease.fence);
  }
  state.namespace = data.namespace;
  state.boot = {
    bootId: data.bootId,
    startedAtMillis: data.atMillis,
    lastAtMillis: data.atMillis,
    graceDeadlineMillis: data.graceDeadlineMillis,
  };
}

/** Whether `lease` is the grant of the fence-first reservation pending on its resource (same fence, holder and request). */
const isReservedFor = (
  state: CoordinatorState,
  lease: { readonly resource: string; readonly holderId: string; readonly fence: number; readonly requestId: string },
): boolean => {
  if (state.reservations.size === 0) return false; // spares a lookup per grant (see applyEvent)
  const reserved = state.reservations.get(lease.resource);
  return (
    reserved !== undefined &&
    reserved.fence === lease.fence &&
    reserved.holderId === lease.holderId &&
    reserved.requestId === lease.requestId
  );
};
/**
 * Lock-delay bookkeeping of one event: an unclean loss (`LeaseExpired`; `FenceRejected`, a write
 * of a lost holder that still arrives) anchors the resource's delay at the event's reading; a
 * grant ends it (the coordinator granted only once the delay was over). Releases and renewals
 * leave it as it is.
 */
function noteLockDelay(
  state: CoordinatorState,
  event: EventOf<'LeaseGranted' | 'LeaseRenewed' | 'LeaseReleased' | 'LeaseExpired' | 'FenceRejected'>,
): void {
  if (event.type === 'LeaseGranted') {
    if (state.lostAtMillis.size !== 0) state.lostAtMillis.delete(event.data.resource);
  } else if (event.type === 'LeaseExpired' || event.type === 'FenceRejected')
    state.lostAtMillis.set(event.data.resource, event.data.atMillis);
}

/**
 * Moves every lock-delay anchor into the new boot's domain by the rule of carried leases
 * (`decide.ts`, recovery's start): only the time the dead boot observed after the loss counts,
 * never the downtime, so a restart never shortens a delay: `lostAt(new) = startedAt -
 * (lastReading(dead boot) - lostAt(old))`.
 */
function reanchorLockDelays(state: CoordinatorState, startedAtMillis: number): void {
  const dead = state.boot;
  if (dead === undefined) return; // a fresh log: nothing was lost yet
  for (const [resource, lostAtMillis] of state.lostAtMillis) {
    state.lostAtMillis.set(resource, startedAtMillis - Math.max(0, dead.lastAtMillis - lostAtMillis));
  }
}

const countLeases = (state: CoordinatorState): number => {
  let count = 0;
  for (const _lease of state.table.leases()) count += 1;
  return count;
};

/**
 * Applies the lease change an event records (the inverse of `decide`'s change → event mapping)
 * through the table's one rule per change ({@link LeaseTable.grant} and the others are
 * `LeaseTable.apply` of that change given as numbers): the event's data is handed over as it
 * is, instants as milliseconds in the boot's domain.
 * @throws what the table throws when the change does not fit it.
 */
function applyLeaseChange(
  state: CoordinatorState,
  event: EventOf<'LeaseGranted' | 'LeaseRenewed' | 'LeaseReleased' | 'LeaseExpired'>,
): void {
  switch (event.type) {
    case 'LeaseGranted':
      state.table.grant(event.data, event.data.bootId);
      return;
    case 'LeaseRenewed':
      state.table.renew(event.data, event.data.bootId);
      return;
    case 'LeaseReleased':
      state.table.end('released', event.data.resource, event.data.holderId, event.data.fence);
      return;
    case 'LeaseExpired':
      state.table.end('expired', event.data.resource, event.data.holderId, event.data.fence);
      return;
  }
}

/** Raises the highest rejection seq known of (gate, resource) to `seq`; never lowers it (a late report below it fills a gap). */
function raiseRejectionSeq(state: CoordinatorState, gateId: string, resource: string, seq: number): void {
  const key = gateResourceKey(gateId, resource);
  const seqs = state.rejectionSeqs.get(key);
  if (seqs === undefined) state.rejectionSeqs.set(key, { gateId, resource, highestSeq: seq, missing: [] });
  else seqs.highestSeq = Math.max(seqs.highestSeq, seq);
}

/** A late report of a seq declared missing: takes it out of its missing range (splitting the range), so it counts as recorded. */
function fillMissingSeq(state: CoordinatorState, gateId: string, resource: string, seq: number): void {
  const missing = state.rejectionSeqs.get(gateResourceKey(gateId, resource))?.missing;
  const index = missing?.findIndex(([fromSeq, throughSeq]) => fromSeq <= seq && seq <= throughSeq) ?? -1;
  if (missing === undefined || index < 0) return;
  const [fromSeq, throughSeq] = missing[index]!;
  const rest: [number, number][] = [];
  if (fromSeq < seq) rest.push([fromSeq, seq - 1]);
  if (seq < throughSeq) rest.push([seq + 1, throughSeq]);
  missing.splice(index, 1, ...rest);
}
