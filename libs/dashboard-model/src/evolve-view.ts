/**
 * `evolveView`: the one fold of log events into the dashboard's view state. Live mode, history
 * (time travel from checkpoints) and imported investigations all call it, so they cannot disagree.
 *
 * @see docs/design.md § "The event-sourced coordinator" (evolve; time travel)
 */
import type { CoordinatorEventType, EventOf, RecordedEvent } from '@lease-fence/protocol';
import { projectToWall, stampOf, type ClockStamp } from './clock-stamp.js';
import { isRestart } from './coordinator-start.js';
import { exposureAtGrant, exposureOnEnd, exposureOnFloor } from './exposure.js';
import type { MutableGeneration, MutableHandover, MutableLane, MutableViewState } from './mutable-view-state.js';
import { MAX_ANOMALIES_KEPT, type ExposureEvidenceKind, type GenerationEndKind, type ViewState } from './view-state.js';

/**
 * Folds one recorded event into `state` and returns it.
 *
 * For speed on million-event logs this **updates `state` in place** (the ownership rule: whoever
 * calls `evolveView` owns the state; anything that must keep an earlier state keeps a
 * {@link cloneViewState} copy, as {@link ViewHistory}'s checkpoints do). The result depends only
 * on the events and their order: no clock, no randomness, no I/O.
 *
 * Rules per resource (one lane):
 * - `LeaseGranted` starts a generation; an open one is ended `superseded`.
 * - `LeaseRenewed` extends the open generation with that fence and holder.
 * - `LeaseReleased` / `LeaseExpired` end it (`released` / `expired`).
 * - Fence-first: `FenceReserved` starts a handover (`pending`); `FenceAdmitted` of its fence
 *   makes it `admitted`, its `LeaseGranted` `active` (a grant of a reserved fence is not an
 *   anomaly although the reservation already counted the fence), `FenceBurned` `burned`.
 * - Exposure (see exposure.ts): a `LeaseGranted` on a resource that had a generation before opens
 *   the new generation's exposure window; a gate event showing the floor at or above its fence
 *   (`FenceAdmitted`, `FenceFloorReported`, a `FenceRejected`'s current fence) closes it; the
 *   generation's end without such evidence makes it `unknown`.
 * - `CoordinatorStarted` keeps each carried lease as the same generation (re-anchored expiry in
 *   the new boot) and ends every other open generation `not-carried`. Only a restart
 *   ({@link isRestart}) joins `restarts`; a fresh log's first start is a start.
 * - An event about a generation whose grant is not among the loaded events (a partial log, an
 *   imported slice) starts a generation with `granted: undefined`, when the lane has none open.
 * - Anything else that does not fit (a renewal of an ended generation, a fence that does not
 *   rise) changes no lease and is recorded in `anomalies`.
 *
 * @param state - The state to update; its `position` must be below `recorded.position`.
 * @param recorded - A schema-valid recorded event (parse wire input with the protocol schemas first).
 * @returns `state`, now at `recorded.position`.
 * @throws RangeError if `recorded.position` is not a safe integer above `state.position`
 *   (positions only grow; a repeated event would be counted twice). `state` is then unchanged.
 * @see docs/design.md § "The event-sourced coordinator"
 */
export function evolveView(state: ViewState, recorded: RecordedEvent): ViewState {
  const s = state as MutableViewState;
  if (!Number.isSafeInteger(recorded.position) || recorded.position <= s.position) {
    throw new RangeError(
      `evolveView: recorded.position must be an integer above the state's position ${s.position} (log positions only grow), got ${String(recorded.position)}`,
    );
  }
  const stamp = stampOf(recorded);
  const { event } = recorded;
  s.position = stamp.position;
  if (s.firstPosition === 0) s.firstPosition = stamp.position;
  s.eventCount += 1;
  s.bootId = stamp.bootId;
  s.lastWallMillis = stamp.wallMillis;
  s.counts[event.type] += 1;
  switch (event.type) {
    case 'CoordinatorStarted':
      onStarted(s, event.data, stamp);
      break;
    case 'LeaseGranted':
      onGranted(s, event.data, stamp);
      break;
    case 'LeaseRenewed':
      onRenewed(s, event.data, stamp);
      break;
    case 'LeaseReleased':
      onEnded(s, event.type, event.data, stamp, 'released');
      break;
    case 'LeaseExpired':
      onEnded(s, event.type, event.data, stamp, 'expired');
      break;
    case 'FenceRejected': {
      const d = event.data;
      const lane = laneFor(s, d.resource, stamp.position);
      const rejection = {
        stamp,
        resource: d.resource,
        gateId: d.gateId,
        seq: d.seq,
        kind: d.kind,
        rejected: { holderId: d.rejected.holderId, fence: d.rejected.fence },
        current: { holderId: d.current.holderId, fence: d.current.fence },
        gateWallMillis: d.gateWallMillis,
      };
      lane.rejections.push(rejection);
      s.rejections.push(rejection);
      onFloorEvidence(lane, d.current.fence, 'rejected', stamp, d.gateId);
      break;
    }
    case 'RejectionsMissing': {
      const d = event.data;
      laneFor(s, d.resource, stamp.position);
      s.missingRejections.push({
        stamp,
        resource: d.resource,
        gateId: d.gateId,
        fromSeq: d.fromSeq,
        throughSeq: d.throughSeq,
        reportedSeq: d.reportedSeq,
      });
      break;
    }
    case 'FenceAdmitted': {
      const lane = laneFor(s, event.data.resource, stamp.position);
      lane.admissions += 1;
      settleHandover(lane, event.data.fence, 'admitted', stamp, { gateId: event.data.gateId });
      onFloorEvidence(lane, event.data.fence, 'admitted', stamp, event.data.gateId);
      break;
    }
    case 'FenceReserved': {
      const d = event.data;
      const lane = laneFor(s, d.resource, stamp.position);
      s.fenceCounter = Math.max(s.fenceCounter, d.fence);
      lane.handovers.push({
        resource: d.resource,
        holderId: d.holderId,
        fence: d.fence,
        requestId: d.requestId,
        phase: 'pending',
        reserved: stamp,
        deadlineWallMillis: projectToWall(stamp, d.deadlineMillis),
        gateId: undefined,
        settled: undefined,
        burnReason: undefined,
      });
      break;
    }
    case 'FenceBurned':
      settleHandover(laneFor(s, event.data.resource, stamp.position), event.data.fence, 'burned', stamp, {
        burnReason: event.data.reason,
      });
      break;
    case 'FenceFloorReported':
      // A gate's floor above the log's fences (the log lost them): later grants go above raisedTo.
      s.fenceCounter = Math.max(s.fenceCounter, event.data.raisedTo);
      onFloorEvidence(
        laneFor(s, event.data.resource, stamp.position),
        event.data.fence,
        'floor-reported',
        stamp,
        event.data.gateId,
      );
      break;
    case 'SnapshotTaken':
    case 'CoordinatorCheckpointed':
      break;
  }
  return state;
}

function onGranted(s: MutableViewState, d: EventOf<'LeaseGranted'>['data'], stamp: ClockStamp): void {
  const lane = laneFor(s, d.resource, stamp.position);
  const open = openOf(lane);
  if (open !== undefined) endGeneration(open, 'superseded', stamp);
  const activated = settleHandover(lane, d.fence, 'active', stamp, {});
  const exposure = exposureAtGrant(lane.generations.length, d.fence, lane.floorFence, stamp, activated);
  if (!activated && d.fence <= s.fenceCounter) {
    anomaly(
      s,
      stamp.position,
      'LeaseGranted',
      `${d.resource}: granted fence ${d.fence} is not above the highest fence issued so far (${s.fenceCounter})`,
    );
  }
  const generation: MutableGeneration = {
    resource: d.resource,
    holderId: d.holderId,
    fence: d.fence,
    requestId: d.requestId,
    ttlMillis: d.ttlMillis,
    granted: stamp,
    firstSeen: stamp,
    expiry: {
      bootId: stamp.bootId,
      expiresAtMillis: d.expiresAtMillis,
      wallMillis: projectToWall(stamp, d.expiresAtMillis),
      setBy: stamp,
      source: 'granted',
    },
    renewalPositions: [],
    renewalWallMillis: [],
    carried: [],
    end: undefined,
    startWallMillis: 0,
    endWallMillis: 0,
    exposure,
  };
  addGeneration(s, lane, generation);
}

function onRenewed(s: MutableViewState, d: EventOf<'LeaseRenewed'>['data'], stamp: ClockStamp): void {
  const lane = laneFor(s, d.resource, stamp.position);
  const open = openOf(lane);
  const expiry = {
    bootId: stamp.bootId,
    expiresAtMillis: d.expiresAtMillis,
    wallMillis: projectToWall(stamp, d.expiresAtMillis),
    setBy: stamp,
    source: 'renewed' as const,
  };
  if (open !== undefined && open.fence === d.fence && open.holderId === d.holderId) {
    open.renewalPositions.push(stamp.position);
    open.renewalWallMillis.push(stamp.wallMillis);
    open.ttlMillis = d.ttlMillis;
    open.expiry = expiry;
    refreshInterval(open);
  } else if (open === undefined && !hasFence(lane, d.fence)) {
    addGeneration(s, lane, {
      resource: d.resource,
      holderId: d.holderId,
      fence: d.fence,
      requestId: undefined,
      ttlMillis: d.ttlMillis,
      granted: undefined,
      firstSeen: stamp,
      expiry,
      renewalPositions: [stamp.position],
      renewalWallMillis: [stamp.wallMillis],
      carried: [],
      end: undefined,
      startWallMillis: 0,
      endWallMillis: 0,
      exposure: undefined,
    });
  } else {
    anomaly(
      s,
      stamp.position,
      'LeaseRenewed',
      `${d.resource}: renewal of fence ${d.fence} by ${d.holderId}, which is not the resource's open generation`,
    );
  }
}

function onEnded(
  s: MutableViewState,
  type: CoordinatorEventType,
  d: EventOf<'LeaseReleased'>['data'],
  stamp: ClockStamp,
  kind: 'released' | 'expired',
): void {
  const lane = laneFor(s, d.resource, stamp.position);
  const open = openOf(lane);
  if (open !== undefined && open.fence === d.fence && open.holderId === d.holderId) {
    endGeneration(open, kind, stamp);
    return;
  }
  const known = findFence(lane, d.fence);
  if (open === undefined && known === undefined) {
    addGeneration(s, lane, {
      resource: d.resource,
      holderId: d.holderId,
      fence: d.fence,
      requestId: undefined,
      ttlMillis: undefined,
      granted: undefined,
      firstSeen: stamp,
      expiry: undefined,
      renewalPositions: [],
      renewalWallMillis: [],
      carried: [],
      end: { kind, stamp },
      startWallMillis: 0,
      endWallMillis: 0,
      exposure: undefined,
    });
    return;
  }
  // The coordinator's sweep may log the expiry of a lease a restart already dropped: nothing to explain.
  if (kind === 'expired' && known !== undefined && known.end?.kind === 'not-carried') return;
  anomaly(
    s,
    stamp.position,
    type,
    `${d.resource}: ${kind === 'released' ? 'release' : 'expiry'} of fence ${d.fence} by ${d.holderId}, which is not the resource's open generation`,
  );
}

function onStarted(s: MutableViewState, d: EventOf<'CoordinatorStarted'>['data'], stamp: ClockStamp): void {
  s.namespace = d.namespace;
  s.fenceCounter = Math.max(s.fenceCounter, d.recoveredFence);
  const carriedByResource = new Map(d.carriedLeases.map((c) => [c.resource, c]));
  const droppedLeases: { resource: string; holderId: string; fence: number }[] = [];
  for (const lane of s.lanes.values()) {
    const open = openOf(lane);
    if (open === undefined) continue;
    const carried = carriedByResource.get(lane.resource);
    if (carried !== undefined && carried.fence === open.fence && carried.holderId === open.holderId) continue;
    endGeneration(open, 'not-carried', stamp);
    droppedLeases.push({ resource: lane.resource, holderId: open.holderId, fence: open.fence });
  }
  for (const c of d.carriedLeases) {
    const lane = laneFor(s, c.resource, stamp.position);
    const open = openOf(lane);
    const expiry = {
      bootId: stamp.bootId,
      expiresAtMillis: c.expiresAtMillis,
      wallMillis: projectToWall(stamp, c.expiresAtMillis),
      setBy: stamp,
      source: 'carried' as const,
    };
    const across = { bootId: stamp.bootId, position: stamp.position };
    if (open !== undefined && open.fence === c.fence && open.holderId === c.holderId) {
      open.carried.push(across);
      open.expiry = expiry;
      refreshInterval(open);
    } else if (open === undefined && !hasFence(lane, c.fence)) {
      addGeneration(s, lane, {
        resource: c.resource,
        holderId: c.holderId,
        fence: c.fence,
        requestId: undefined,
        ttlMillis: undefined,
        granted: undefined,
        firstSeen: stamp,
        expiry,
        renewalPositions: [],
        renewalWallMillis: [],
        carried: [across],
        end: undefined,
        startWallMillis: 0,
        endWallMillis: 0,
        exposure: undefined,
      });
    } else {
      anomaly(
        s,
        stamp.position,
        'CoordinatorStarted',
        `${c.resource}: carried fence ${c.fence} of ${c.holderId} is not the resource's open generation`,
      );
    }
  }
  if (!isRestart(d)) return;
  s.restarts.push({
    stamp,
    namespace: d.namespace,
    previousBootId: d.previousBootId,
    recoveredFence: d.recoveredFence,
    eventsReplayed: d.eventsReplayed,
    fromSnapshot: d.fromSnapshot,
    replayMillis: d.replayMillis,
    graceDeadlineMillis: d.graceDeadlineMillis,
    graceEndWallMillis: projectToWall(stamp, d.graceDeadlineMillis),
    carriedLeases: d.carriedLeases.map((c) => ({ ...c })),
    droppedLeases,
  });
}

function laneFor(s: MutableViewState, resource: string, position: number): MutableLane {
  let lane = s.lanes.get(resource);
  if (lane === undefined) {
    lane = {
      resource,
      generations: [],
      rejections: [],
      admissions: 0,
      handovers: [],
      firstPosition: position,
      lastPosition: position,
      maxFence: 0,
      floorFence: 0,
    };
    s.lanes.set(resource, lane);
  }
  lane.lastPosition = position;
  return lane;
}

/**
 * Moves the lane's unsettled handover of `fence` to `phase` (pending → admitted → active, or →
 * burned). @returns whether there was one to move.
 */
function settleHandover(
  lane: MutableLane,
  fence: number,
  phase: 'admitted' | 'active' | 'burned',
  stamp: ClockStamp,
  details: { readonly gateId?: string; readonly burnReason?: MutableHandover['burnReason'] },
): boolean {
  const last = lane.handovers[lane.handovers.length - 1];
  if (last === undefined || last.fence !== fence || last.phase === 'active' || last.phase === 'burned') return false;
  last.phase = phase;
  last.settled = stamp;
  if (details.gateId !== undefined) last.gateId = details.gateId;
  if (details.burnReason !== undefined) last.burnReason = details.burnReason;
  return true;
}

function openOf(lane: MutableLane): MutableGeneration | undefined {
  const last = lane.generations[lane.generations.length - 1];
  return last !== undefined && last.end === undefined ? last : undefined;
}

function findFence(lane: MutableLane, fence: number): MutableGeneration | undefined {
  for (let i = lane.generations.length - 1; i >= 0; i -= 1) {
    const g = lane.generations[i];
    if (g !== undefined && g.fence === fence) return g;
  }
  return undefined;
}

function hasFence(lane: MutableLane, fence: number): boolean {
  return findFence(lane, fence) !== undefined;
}

function addGeneration(s: MutableViewState, lane: MutableLane, generation: MutableGeneration): void {
  refreshInterval(generation);
  lane.generations.push(generation);
  lane.maxFence = Math.max(lane.maxFence, generation.fence);
  s.fenceCounter = Math.max(s.fenceCounter, generation.fence);
}

function endGeneration(generation: MutableGeneration, kind: GenerationEndKind, stamp: ClockStamp): void {
  generation.end = { kind, stamp };
  refreshInterval(generation);
  generation.exposure = exposureOnEnd(generation);
}

/** A gate event showed the resource's floor at `fence`: raise the lane's floor, close the open generation's exposure. */
function onFloorEvidence(
  lane: MutableLane,
  fence: number,
  kind: ExposureEvidenceKind,
  stamp: ClockStamp,
  gateId: string,
): void {
  lane.floorFence = Math.max(lane.floorFence, fence);
  const open = openOf(lane);
  if (open !== undefined) open.exposure = exposureOnFloor(open, fence, kind, stamp, gateId);
}

/** The one rule for where a generation's bar starts and ends (see {@link Generation.endWallMillis}). */
function refreshInterval(g: MutableGeneration): void {
  const start = (g.granted ?? g.firstSeen).wallMillis;
  let end: number;
  if (g.end === undefined) end = g.expiry?.wallMillis ?? start;
  else if (g.end.kind === 'released' || g.expiry === undefined) end = g.end.stamp.wallMillis;
  else end = Math.min(g.expiry.wallMillis, g.end.stamp.wallMillis);
  g.startWallMillis = start;
  g.endWallMillis = Math.max(start, end);
}

function anomaly(s: MutableViewState, position: number, type: CoordinatorEventType, message: string): void {
  s.anomalyCount += 1;
  if (s.anomalies.length < MAX_ANOMALIES_KEPT) s.anomalies.push({ position, type, message });
}
