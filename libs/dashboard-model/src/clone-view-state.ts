/**
 * Copies a view state so that folding more events into the original never changes the copy.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Time travel)
 */
import type { MutableGeneration, MutableLane, MutableViewState } from './mutable-view-state.js';
import type { ViewState } from './view-state.js';

/**
 * A copy of `state` that {@link evolveView} may update without touching `state`, and vice versa.
 *
 * Cheap by construction: the fold only ever changes a lane's open (last) generation, and only
 * appends to arrays, so ended generations, rejections, settled handovers and restarts are
 * shared; each lane's arrays, its open generation and its unsettled handover are copied. Cost is proportional to the number of generations,
 * not to the number of events folded.
 *
 * @param state - Any view state.
 * @returns An independent state equal to `state`.
 */
export function cloneViewState(state: ViewState): ViewState {
  const s = state as MutableViewState;
  const lanes = new Map<string, MutableLane>();
  for (const [resource, lane] of s.lanes) lanes.set(resource, cloneLane(lane));
  const copy: MutableViewState = {
    ...s,
    lanes,
    rejections: s.rejections.slice(),
    missingRejections: s.missingRejections.slice(),
    restarts: s.restarts.slice(),
    counts: { ...s.counts },
    anomalies: s.anomalies.slice(),
  };
  return copy;
}

function cloneLane(lane: MutableLane): MutableLane {
  const generations = lane.generations.slice();
  const lastIndex = generations.length - 1;
  const last = generations[lastIndex];
  if (last !== undefined && last.end === undefined) generations[lastIndex] = cloneGeneration(last);
  const handovers = lane.handovers.slice();
  const lastHandover = handovers[handovers.length - 1];
  if (lastHandover !== undefined && (lastHandover.phase === 'pending' || lastHandover.phase === 'admitted'))
    handovers[handovers.length - 1] = { ...lastHandover };
  return { ...lane, generations, rejections: lane.rejections.slice(), handovers };
}

function cloneGeneration(g: MutableGeneration): MutableGeneration {
  return {
    ...g,
    renewalPositions: g.renewalPositions.slice(),
    renewalWallMillis: g.renewalWallMillis.slice(),
    carried: g.carried.slice(),
  };
}
