/**
 * `decide(command, state, now) → { events, outcome }`: what a command does, as events to append
 * and the outcome to return once they are durable. Pure: `now` is a parameter, the state is only
 * read, nothing is thrown for a business denial (a denial is an outcome with no events).
 *
 * The lease rules are `lease-fence`'s (`decideAcquire`, `decideRenew`, `decideRelease`,
 * `decideExpiry`): this file maps each {@link LeaseChange} they return to exactly one event and
 * adds what only an event-sourced coordinator has: recovery's start (grace re-anchoring, burned
 * fences), rejection reports and admits (refused when they cannot be true of this coordinator's
 * fences, judged with lease-fence's `wasFenceIssued`), checkpoints and snapshots.
 *
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve, Recovery)
 */
import type { CarriedLease, CoordinatorEvent } from '@lease-fence/protocol';
import {
  ClockDomainError,
  decideAcquire,
  decideExpiry,
  decideRelease,
  decideRenew,
  Instant,
  ProtocolMisuseError,
  requireCount,
  requireFence,
  requireId,
  wasFenceIssued,
  type LeaseChange,
  type LeaseTable,
} from 'lease-fence';
import {
  MAX_WALL_MILLIS,
  type AdmitFence,
  type CoordinatorCommand,
  type ImplausibleField,
  type ImplausibleReport,
  type LockDelayDenial,
  type Now,
  type OutcomeByCommand,
  type OutcomeOf,
  type RecordFenceRejection,
  type RecordFenceRejections,
  type RecordRejectionItemOutcome,
  type RecordRejectionOutcome,
  type RecordRejectionsOutcome,
  type StartCoordinator,
} from './commands.js';
import {
  burnLeftoverReservations,
  decideActivate,
  decideBurn,
  decideReserve,
  pendingReservationDenial,
} from './fence-first.js';
import { nextExpectedSeq, rejectionContent, rejectionKey, wasRecorded, type CoordinatorState } from './state.js';

/** What {@link decide} returns: the events to append (none for a denial), and the outcome once they are durable. */
export interface Decision<O> {
  readonly events: readonly CoordinatorEvent[];
  readonly outcome: O;
}

/** The stamp every event of a decision carries: boot id (clock domain), monotonic reading, wall time. */
type Stamp = { readonly bootId: string; readonly atMillis: number; readonly wallMillis: number };

/**
 * Decides `command` against `state` at `now`. Never mutates `state`.
 *
 * @param command - A {@link CoordinatorCommand}.
 * @param state - The current state; read only.
 * @param now - The decision's time; `now.instant.domain` must be the current boot's id (for
 *   `StartCoordinator`, a new boot id never used before in this log).
 * @returns the events (in order, to be appended together) and the command's outcome. Gate
 *   reports that cannot be true are denied with `{ ok: false, reason: 'implausible', field, message }`,
 *   a reused rejection seq with other content with `'seq-conflict'`; neither has events. An
 *   acquire inside the resource's lock-delay (`command.lockDelayMillis` after its latest unclean
 *   loss) is denied with `{ ok: false, reason: 'lock-delay', retryAfterMillis }`.
 * @throws TypeError / RangeError for a malformed command or `now`, naming the field and value.
 * @throws {@link ProtocolMisuseError} if the coordinator has not started (no `CoordinatorStarted`
 *   folded yet), if `StartCoordinator` reuses a boot id, or from the lease rules (a requestId
 *   reused for another resource).
 * @throws {@link ClockDomainError} if `now` is in another clock domain than the current boot.
 */
export function decide<C extends CoordinatorCommand>(
  command: C,
  state: CoordinatorState,
  now: Now,
): Decision<OutcomeOf<C>> {
  return decideAny(command, state, now) as Decision<OutcomeOf<C>>;
}

function decideAny(
  command: CoordinatorCommand,
  state: CoordinatorState,
  now: Now,
): Decision<OutcomeByCommand[CoordinatorCommand['type']]> {
  checkNow(now);
  if (command === null || typeof command !== 'object')
    throw new TypeError(`decide: command must be an object, got ${String(command)}`);
  if (command.type === 'StartCoordinator') return decideStart(command, state, now);

  const stamp = stampOf(state, now);
  const instant = now.instant;
  switch (command.type) {
    case 'AcquireLease': {
      const pending = pendingReservationDenial(state, command.resource, instant);
      if (pending !== undefined) return { events: [], outcome: pending };
      const lockDelayMillis = command.lockDelayMillis ?? 0;
      if (lockDelayMillis !== 0) requireCount('decide AcquireLease', 'lockDelayMillis', lockDelayMillis);
      const { outcome, changes } = decideAcquire(state.table, command, instant);
      const delayed = lockDelayOf(state, command.resource, lockDelayMillis, changes, instant.millis);
      if (delayed !== undefined)
        return {
          events: toEvents(
            changes.filter((change) => change.type !== 'granted'),
            stamp,
          ),
          outcome: delayed,
        };
      return { events: toEvents(changes, stamp), outcome };
    }
    case 'RenewLease': {
      const { outcome, changes } = decideRenew(state.table, command, instant);
      return { events: toEvents(changes, stamp), outcome };
    }
    case 'ReleaseLease': {
      const { outcome, changes } = decideRelease(state.table, command, instant);
      return { events: toEvents(changes, stamp), outcome };
    }
    case 'ExpireDueLeases': {
      const { outcome, changes } = decideExpiry(state.table, instant);
      return { events: toEvents(changes, stamp), outcome: { ok: true, expired: outcome.expired } };
    }
    case 'RecordFenceRejection': {
      checkRejection(command);
      const expectedSeq = nextExpectedSeq(state, command.gateId, command.resource);
      const { events, outcome } = decideRejection(state, command, stamp, expectedSeq);
      return { events, outcome };
    }
    case 'RecordFenceRejections':
      return decideRejections(state, command, stamp);
    case 'AdmitFence': {
      requireId('decide AdmitFence', 'gateId', command.gateId);
      requireId('decide AdmitFence', 'resource', command.resource);
      requireId('decide AdmitFence', 'holderId', command.holderId);
      requireFence('decide AdmitFence', 'fence', command.fence);
      const implausible = implausibleAdmit(state.table, command, state.reservedFences);
      if (implausible !== undefined) return { events: [], outcome: implausible };
      const { gateId, resource, holderId, fence } = command;
      return {
        events: [{ type: 'FenceAdmitted', version: 1, data: { ...stamp, resource, gateId, holderId, fence } }],
        outcome: { ok: true },
      };
    }
    case 'ReserveFence':
      if ((command.lockDelayMillis ?? 0) !== 0)
        requireCount('decide ReserveFence', 'lockDelayMillis', command.lockDelayMillis);
      return decideReserve(
        command,
        state,
        instant,
        stamp,
        ({ changes }) => toEvents(changes, stamp),
        (changes) => lockDelayOf(state, command.resource, command.lockDelayMillis ?? 0, changes, instant.millis),
      );
    case 'ActivateReservedLease':
      requireId('decide ActivateReservedLease', 'gateId', command.gateId);
      requireFence('decide ActivateReservedLease', 'fence', command.fence);
      return decideActivate(command, state, instant, stamp);
    case 'BurnReservedFence':
      requireFence('decide BurnReservedFence', 'fence', command.fence);
      return decideBurn(command, state, stamp);
    case 'Checkpoint': {
      const live = command.evenWithoutLeases === true || state.table.leases().next().done !== true;
      return live
        ? {
            events: [{ type: 'CoordinatorCheckpointed', version: 1, data: { ...stamp } }],
            outcome: { ok: true, checkpointed: true },
          }
        : { events: [], outcome: { ok: true, checkpointed: false } };
    }
    case 'ReportFloor': {
      requireId('decide ReportFloor', 'gateId', command.gateId);
      requireId('decide ReportFloor', 'resource', command.resource);
      requireId('decide ReportFloor', 'holderId', command.holderId);
      requireFence('decide ReportFloor', 'fence', command.fence);
      requireCount('decide ReportFloor', 'marginFences', command.marginFences);
      const { gateId, resource, holderId, fence, marginFences } = command;
      // A floor this log knows of (it issued or reserved that fence, or a higher one, for this
      // resource): nothing to learn. A fence-first fence a gate admitted before its grant is such a
      // floor; taking it for a lost fence would raise the counter by the whole margin.
      if (isKnownFence(state.table, state.reservedFences, resource, fence))
        return { events: [], outcome: { ok: true, raised: false, fenceCounter: state.table.issuedFence } };
      // The raised counter must leave room for at least as many grants as the margin: a floor that
      // would exhaust the fence range (every later acquire failing) is a broken gate, not evidence.
      if (!Number.isSafeInteger(fence + 2 * marginFences + 1)) {
        return {
          events: [],
          outcome: implausible(
            'fence',
            `fence ${fence} plus the margin of ${marginFences} fences leaves fewer than ${marginFences} fences to grant before the largest fence (${Number.MAX_SAFE_INTEGER})`,
          ),
        };
      }
      const raisedTo = Math.max(state.table.issuedFence, fence + marginFences);
      return {
        events: [
          { type: 'FenceFloorReported', version: 1, data: { ...stamp, resource, gateId, holderId, fence, raisedTo } },
        ],
        outcome: { ok: true, raised: true, fenceCounter: raisedTo },
      };
    }
    case 'TakeSnapshot': {
      const coversPosition = state.position + 1;
      return {
        events: [{ type: 'SnapshotTaken', version: 1, data: { ...stamp, coversPosition } }],
        outcome: { ok: true, coversPosition },
      };
    }
    default:
      throw new TypeError(`decide: unknown command type ${JSON.stringify((command as { type?: unknown }).type)}`);
  }
}

/**
 * Recovery's start: a new boot carries every current lease into its own clock domain. A lease's
 * grace is what was left of it when the dead boot was last observed alive:
 * `expiresAt(new) = startedAt + max(0, expiresAt(old) - lastReading(dead boot))`. Downtime is not
 * counted (conservative: never earlier than the holder's own deadline). A lease with no grace
 * left is carried with `expiresAt = startedAt` and expires at the first sweep.
 *
 * Only *recorded* uptime shortens the grace: the dead boot's last event. Whatever it lived
 * after that is unknown, and counting it would risk ending the grace before the holder's own
 * deadline. So that a crash loop cannot keep a silent holder's lease alive, a boot that carries
 * a lease in grace records its uptime (`CoordinatorCheckpointed`) after every
 * `graceCheckpointIntervalMillis` of silence (100 ms by default; `DurableCoordinator`'s timer),
 * instead of the usual `checkpointIntervalMillis`. The bound: each boot that dies loses at most
 * one grace checkpoint interval (plus its timer's lag) of its uptime from the record, so a
 * silent holder's carried lease ends after at most its remaining TTL of coordinator uptime plus
 * one grace checkpoint interval per boot. Boots that die within one grace checkpoint interval of
 * their start shorten nothing: a crash loop that fast keeps the lease in grace.
 */
function decideStart(
  command: StartCoordinator,
  state: CoordinatorState,
  now: Now,
): Decision<OutcomeByCommand['StartCoordinator']> {
  requireId('decide StartCoordinator', 'namespace', command.namespace);
  requireCount('decide StartCoordinator', 'eventsReplayed', command.eventsReplayed);
  requireCount('decide StartCoordinator', 'burnFencesThrough', command.burnFencesThrough);
  if (typeof command.fromSnapshot !== 'boolean')
    throw new TypeError(`decide StartCoordinator: fromSnapshot must be a boolean, got ${String(command.fromSnapshot)}`);
  if (typeof command.replayMillis !== 'number' || !Number.isFinite(command.replayMillis) || command.replayMillis < 0) {
    throw new RangeError(
      `decide StartCoordinator: replayMillis must be a finite, non-negative number of milliseconds, got ${String(command.replayMillis)}`,
    );
  }
  if (state.namespace !== undefined && state.namespace !== command.namespace) {
    throw new RangeError(
      `decide StartCoordinator: namespace ${JSON.stringify(command.namespace)} differs from the log's namespace ${JSON.stringify(state.namespace)}`,
    );
  }
  const bootId = now.instant.domain;
  const atMillis = now.instant.millis;
  const dead = state.boot;
  if (dead !== undefined && dead.bootId === bootId) {
    throw new ProtocolMisuseError(
      `decide StartCoordinator: boot id ${JSON.stringify(bootId)} was already used in this log; every boot needs a fresh clock domain`,
    );
  }
  const carriedLeases: CarriedLease[] = [];
  let graceDeadlineMillis = atMillis;
  for (const lease of state.table.leases()) {
    // The lease's instants are in the dead boot's domain, and so is its last reading.
    if (dead === undefined)
      throw new ProtocolMisuseError(
        `decide StartCoordinator: lease on ${JSON.stringify(lease.resource)} exists before any boot started`,
      );
    if (lease.expiresAt.domain !== dead.bootId)
      throw new ClockDomainError(lease.expiresAt.domain, dead.bootId, 'minus');
    const remainingMillis = Math.max(0, lease.expiresAt.millis - dead.lastAtMillis);
    const expiresAtMillis = atMillis + remainingMillis;
    carriedLeases.push({ resource: lease.resource, holderId: lease.holderId, fence: lease.fence, expiresAtMillis });
    graceDeadlineMillis = Math.max(graceDeadlineMillis, expiresAtMillis);
  }
  const recoveredFence = Math.max(state.table.issuedFence, command.burnFencesThrough);
  return {
    events: [
      {
        type: 'CoordinatorStarted',
        version: 1,
        data: {
          bootId,
          atMillis,
          wallMillis: now.wallMillis,
          namespace: command.namespace,
          ...(dead === undefined ? {} : { previousBootId: dead.bootId }),
          recoveredFence,
          eventsReplayed: command.eventsReplayed,
          fromSnapshot: command.fromSnapshot,
          replayMillis: command.replayMillis,
          graceDeadlineMillis,
          carriedLeases,
        },
      },
      ...burnLeftoverReservations(state, { bootId, atMillis, wallMillis: now.wallMillis }),
    ],
    outcome: {
      ok: true,
      recoveredFence,
      graceDeadline: Instant.of(graceDeadlineMillis, bootId),
      carriedLeases: carriedLeases.length,
    },
  };
}

const implausible = (field: ImplausibleField, message: string): ImplausibleReport => ({
  ok: false,
  reason: 'implausible',
  field,
  message,
});

/**
 * Whether this log knows `fence` for `resource`: it granted that fence or a higher one there
 * (lease-fence's `wasFenceIssued`), or fence-first handover reserved it or a higher one there
 * (granted, pending or burned: a gate may hold it as its floor). The one rule both the
 * plausibility checks of gate reports and `ReportFloor` keep.
 */
const isKnownFence = (
  table: LeaseTable,
  reserved: ReadonlyMap<string, number>,
  resource: string,
  fence: number,
): boolean => wasFenceIssued(table, resource, fence) || fence <= (reserved.get(resource) ?? 0);

/**
 * Why `fence` cannot have been issued for `resource`, or undefined if it can (lease-fence's
 * `wasFenceIssued`). A fence reserved for the resource by fence-first handover counts as issued
 * even if it was never granted (pending or burned): a gate may have raised its floor to it.
 */
const neverIssued = (
  table: LeaseTable,
  reserved: ReadonlyMap<string, number>,
  field: ImplausibleField,
  resource: string,
  fence: number,
): ImplausibleReport | undefined =>
  isKnownFence(table, reserved, resource, fence)
    ? undefined
    : implausible(
        field,
        `${field} ${fence} was never issued for resource ${JSON.stringify(resource)} (the highest fence granted on it is ${table.highestFence(resource)})`,
      );

/**
 * One rejection report against `state`, the next seq expected of its gate and resource being
 * `expectedSeq`: a duplicate (same content, or recorded so long ago its content is no longer
 * kept), a seq-conflict, implausible, or recorded (`RejectionsMissing` first when `seq` is above
 * `expectedSeq`). The one copy of these rules, for a single report and each item of a batch.
 */
function decideRejection(
  state: CoordinatorState,
  command: RecordFenceRejection,
  stamp: Stamp,
  expectedSeq: number,
): Decision<RecordRejectionOutcome> {
  const content = rejectionContent(command);
  const recorded = state.rejectionKeys.get(rejectionKey(command.gateId, command.resource, command.seq));
  if (recorded === content) return { events: [], outcome: { ok: true, duplicate: true } };
  // Recorded so long ago that its content is no longer kept: a resend (its reply was lost); recording it again would count one refusal twice.
  if (recorded === undefined && wasRecorded(state, command.gateId, command.resource, command.seq))
    return { events: [], outcome: { ok: true, duplicate: true } };
  if (recorded !== undefined) {
    return {
      events: [],
      outcome: {
        ok: false,
        reason: 'seq-conflict',
        message:
          `seq ${command.seq} of gate ${JSON.stringify(command.gateId)} on resource ${JSON.stringify(command.resource)} was already recorded ` +
          `as ${describeContent(recorded)}, not ${describeContent(content)}; a gate must never reuse a seq`,
      },
    };
  }
  const implausible = implausibleRejection(state.table, command, state.reservedFences);
  if (implausible !== undefined) return { events: [], outcome: implausible };
  const { gateId, resource, seq, kind, rejected, current, gateWallMillis } = command;
  // A gate numbers its refusals of a resource from 1 without gaps and reports them in order:
  // a seq above the next expected one means the ones between were lost. Say so in the log.
  const missing: CoordinatorEvent[] =
    seq > expectedSeq
      ? [
          {
            type: 'RejectionsMissing',
            version: 1,
            data: { ...stamp, resource, gateId, fromSeq: expectedSeq, throughSeq: seq - 1, reportedSeq: seq },
          },
        ]
      : [];
  return {
    events: [
      ...missing,
      {
        type: 'FenceRejected',
        version: 1,
        data: {
          ...stamp,
          resource,
          gateId,
          seq,
          kind,
          rejected: { holderId: rejected.holderId, fence: rejected.fence },
          current: { holderId: current.holderId, fence: current.fence },
          ...(gateWallMillis === undefined ? {} : { gateWallMillis }),
        },
      },
    ],
    outcome: { ok: true, duplicate: false },
  };
}

/**
 * A batch of one gate's reports of one resource, seqs strictly ascending: each item decided by
 * {@link decideRejection} as if the earlier items' events were folded. That needs no fold: an
 * item's key, {@link wasRecorded} and plausibility do not depend on the earlier items (their
 * seqs are lower, and `FenceRejected` changes no fence), only the seq expected next does, and it
 * is carried along. The first implausible item refuses the whole batch (no event).
 */
function decideRejections(
  state: CoordinatorState,
  command: RecordFenceRejections,
  stamp: Stamp,
): Decision<RecordRejectionsOutcome> {
  const api = 'decide RecordFenceRejections';
  requireId(api, 'gateId', command.gateId);
  requireId(api, 'resource', command.resource);
  if (!Array.isArray(command.items) || command.items.length === 0)
    throw new RangeError(`${api}: items must be a non-empty array, got ${String(command.items)}`);
  const { gateId, resource } = command;
  let expectedSeq = nextExpectedSeq(state, gateId, resource);
  const events: CoordinatorEvent[] = [];
  const items: RecordRejectionItemOutcome[] = [];
  for (const [index, item] of command.items.entries()) {
    const report: RecordFenceRejection = { ...item, type: 'RecordFenceRejection', gateId, resource };
    checkRejection(report, `items[${index}].`);
    const previous = command.items[index - 1];
    if (previous !== undefined && item.seq <= previous.seq)
      throw new RangeError(
        `${api}: items[${index}].seq must be above items[${index - 1}].seq ${previous.seq} (seqs strictly ascending), got ${item.seq}`,
      );
    const decided = decideRejection(state, report, stamp, expectedSeq);
    if (decided.outcome.ok === false && decided.outcome.reason === 'implausible')
      return { events: [], outcome: { ...decided.outcome, index } };
    items.push(decided.outcome as RecordRejectionItemOutcome);
    events.push(...decided.events);
    if (decided.events.length > 0) expectedSeq = Math.max(expectedSeq, item.seq + 1);
  }
  return { events, outcome: { ok: true, items } };
}

/**
 * Why a rejection report cannot be true, or undefined if it can (checked in this order, the
 * report alone first, then against the coordinator's fences). A gate's rejection compares two
 * tokens of one resource, both minted by this coordinator:
 * - `stale`: the rejected fence is below the floor (`rejected.fence < current.fence`); the same
 *   holder on both sides is fine (its old in-flight write under its previous fence);
 * - `double-grant`: equal fences, different holders;
 * - the gate's wall time, when given, is at most {@link MAX_WALL_MILLIS};
 * - both fences were issued for this resource ({@link wasFenceIssued}).
 */
function implausibleRejection(
  table: LeaseTable,
  report: RecordFenceRejection,
  reserved: ReadonlyMap<string, number>,
): ImplausibleReport | undefined {
  const { kind, rejected, current, resource, gateWallMillis } = report;
  if (kind === 'stale' && rejected.fence >= current.fence) {
    return implausible(
      'rejected.fence',
      `rejected.fence ${rejected.fence} is not below current.fence ${current.fence}, but a stale rejection's fence is below the gate's floor`,
    );
  }
  if (kind === 'double-grant' && rejected.fence !== current.fence) {
    return implausible(
      'rejected.fence',
      `rejected.fence ${rejected.fence} differs from current.fence ${current.fence}, but a double grant is two holders with the same fence`,
    );
  }
  if (kind === 'double-grant' && rejected.holderId === current.holderId) {
    return implausible(
      'rejected.holderId',
      `rejected.holderId and current.holderId are both ${JSON.stringify(rejected.holderId)}, but a double grant is two different holders with the same fence`,
    );
  }
  if (gateWallMillis !== undefined && gateWallMillis > MAX_WALL_MILLIS) {
    return implausible(
      'gateWallMillis',
      `gateWallMillis must be epoch milliseconds no later than the year 3000 (${MAX_WALL_MILLIS}), got ${gateWallMillis}`,
    );
  }
  return (
    neverIssued(table, reserved, 'rejected.fence', resource, rejected.fence) ??
    neverIssued(table, reserved, 'current.fence', resource, current.fence)
  );
}

/**
 * The lock-delay denial of an acquire the lease rules would grant, or undefined. The delay runs
 * from the resource's latest unclean loss: the anchor `evolve` keeps, or now when this very
 * acquire expires a lapsed lease (its `LeaseExpired` is appended with the denial, and anchors
 * the delay at this reading, as evolve will fold it). A retried requestId is answered by the
 * lease rules before this: its grant, or `'expired'`.
 */
function lockDelayOf(
  state: CoordinatorState,
  resource: string,
  lockDelayMillis: number,
  changes: readonly LeaseChange[],
  nowMillis: number,
): LockDelayDenial | undefined {
  if (lockDelayMillis === 0 || !changes.some((change) => change.type === 'granted')) return undefined;
  const lostAtMillis = changes.some((change) => change.type === 'expired')
    ? nowMillis
    : state.lostAtMillis.get(resource);
  if (lostAtMillis === undefined) return undefined;
  const retryAfterMillis = lostAtMillis + lockDelayMillis - nowMillis;
  return retryAfterMillis > 0 ? { ok: false, reason: 'lock-delay', retryAfterMillis } : undefined;
}

/** Why an admit cannot be true, or undefined if it can: a fence never issued for the resource, or its current fence for another holder. */
function implausibleAdmit(
  table: LeaseTable,
  admit: AdmitFence,
  reserved: ReadonlyMap<string, number>,
): ImplausibleReport | undefined {
  const unissued = neverIssued(table, reserved, 'fence', admit.resource, admit.fence);
  if (unissued !== undefined) return unissued;
  const lease = table.lease(admit.resource);
  if (lease !== undefined && lease.fence === admit.fence && lease.holderId !== admit.holderId) {
    return implausible(
      'holderId',
      `holderId ${JSON.stringify(admit.holderId)} does not hold fence ${admit.fence} on resource ${JSON.stringify(admit.resource)}: it was issued to ${JSON.stringify(lease.holderId)}`,
    );
  }
  return undefined;
}

/** A {@link rejectionContent} for people: `stale, rejected "agent-b" fence 3, current "agent-a" fence 4`. */
function describeContent(content: string): string {
  const [kind, rejectedHolder, rejectedFence, currentHolder, currentFence] = JSON.parse(content) as [
    string,
    string,
    number,
    string,
    number,
  ];
  return `${kind}, rejected ${JSON.stringify(rejectedHolder)} fence ${rejectedFence}, current ${JSON.stringify(currentHolder)} fence ${currentFence}`;
}

/**
 * Each lease change as exactly one event, stamped with the decision's time. The stamp's three
 * fields are written out, in the stamp's order (so the stored JSON is the same), rather than
 * spread: on Node 20 an object spread followed by more fields took 20–70 µs per event in a
 * scratch loop against 0.1–1.5 µs written out, and this runs for every lease event the
 * coordinator decides (the figures of the service are in BENCHMARKS.md, issue 18 §1).
 */
function toEvents(changes: readonly LeaseChange[], stamp: Stamp): CoordinatorEvent[] {
  return changes.map((change): CoordinatorEvent => {
    switch (change.type) {
      case 'granted': {
        const { lease } = change;
        return {
          type: 'LeaseGranted',
          version: 1,
          data: {
            bootId: stamp.bootId,
            atMillis: stamp.atMillis,
            wallMillis: stamp.wallMillis,
            resource: lease.resource,
            holderId: lease.holderId,
            fence: lease.fence,
            requestId: lease.requestId,
            ttlMillis: lease.ttlMillis,
            expiresAtMillis: inBoot(lease.expiresAt, stamp),
          },
        };
      }
      case 'renewed':
        return {
          type: 'LeaseRenewed',
          version: 1,
          data: {
            bootId: stamp.bootId,
            atMillis: stamp.atMillis,
            wallMillis: stamp.wallMillis,
            resource: change.resource,
            holderId: change.holderId,
            fence: change.fence,
            requestId: change.requestId,
            ttlMillis: change.ttlMillis,
            expiresAtMillis: inBoot(change.expiresAt, stamp),
          },
        };
      case 'released':
        return {
          type: 'LeaseReleased',
          version: 1,
          data: {
            bootId: stamp.bootId,
            atMillis: stamp.atMillis,
            wallMillis: stamp.wallMillis,
            resource: change.resource,
            holderId: change.holderId,
            fence: change.fence,
          },
        };
      case 'expired':
        return {
          type: 'LeaseExpired',
          version: 1,
          data: {
            bootId: stamp.bootId,
            atMillis: stamp.atMillis,
            wallMillis: stamp.wallMillis,
            resource: change.resource,
            holderId: change.holderId,
            fence: change.fence,
          },
        };
    }
  });
}

/** The milliseconds of an instant the rules produced, checked to be in the decision's boot domain. */
const inBoot = (instant: Instant, stamp: Stamp): number => {
  if (instant.domain !== stamp.bootId) throw new ClockDomainError(instant.domain, stamp.bootId, 'minus');
  return instant.millis;
};

function stampOf(state: CoordinatorState, now: Now): Stamp {
  if (state.boot === undefined)
    throw new ProtocolMisuseError(
      'decide: the coordinator has not started (no CoordinatorStarted folded); decide StartCoordinator first',
    );
  if (now.instant.domain !== state.boot.bootId)
    throw new ClockDomainError(now.instant.domain, state.boot.bootId, 'decide');
  return { bootId: now.instant.domain, atMillis: now.instant.millis, wallMillis: now.wallMillis };
}

function checkNow(now: Now): void {
  if (now === null || typeof now !== 'object' || !(now.instant instanceof Instant)) {
    throw new TypeError(`decide: now.instant must be an Instant, got ${String((now as Partial<Now> | null)?.instant)}`);
  }
  if (typeof now.wallMillis !== 'number' || !Number.isFinite(now.wallMillis) || now.wallMillis < 0) {
    throw new RangeError(
      `decide: now.wallMillis must be finite, non-negative epoch milliseconds, got ${String(now.wallMillis)}`,
    );
  }
}

/** Throws for a malformed report; `prefix` names an item of a batch (`items[2].`). */
function checkRejection(command: RecordFenceRejection, prefix = ''): void {
  const api = 'RecordFenceRejection';
  requireId(`decide ${api}`, 'gateId', command.gateId);
  requireId(`decide ${api}`, 'resource', command.resource);
  requireCount(`decide ${api}`, `${prefix}seq`, command.seq);
  if (command.kind !== 'stale' && command.kind !== 'double-grant') {
    throw new RangeError(
      `decide ${api}: ${prefix}kind must be 'stale' or 'double-grant', got ${JSON.stringify(command.kind)}`,
    );
  }
  for (const side of ['rejected', 'current'] as const) {
    const value = command[side];
    if (value === null || typeof value !== 'object')
      throw new TypeError(
        `decide ${api}: ${prefix}${side} must be an object { holderId, fence }, got ${String(value)}`,
      );
    requireId(`decide ${api}`, `${prefix}${side}.holderId`, value.holderId);
    requireFence(`decide ${api}`, `${prefix}${side}.fence`, value.fence);
  }
  if (
    command.gateWallMillis !== undefined &&
    (typeof command.gateWallMillis !== 'number' ||
      !Number.isFinite(command.gateWallMillis) ||
      command.gateWallMillis < 0)
  ) {
    throw new RangeError(
      `decide ${api}: gateWallMillis must be finite, non-negative epoch milliseconds, got ${String(command.gateWallMillis)}`,
    );
  }
}
