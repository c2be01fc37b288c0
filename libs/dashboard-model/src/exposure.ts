/**
 * Exposure windows: how long, at each handover, an older holder's write would still have been
 * admitted by the resource's gate. The window opens at the `LeaseGranted` of a new generation
 * (fence F) on a resource that had a holder before, and closes at the first evidence in the log
 * that the resource's gate floor reached F (a `FenceAdmitted` with fence ≥ F, a
 * `FenceFloorReported` with floor ≥ F, or a `FenceRejected` whose current fence is ≥ F). A floor
 * already at F when the grant is logged (fence-first) makes it 0. No evidence before the
 * generation ends: unknown, never 0.
 *
 * The fold ({@link evolveView}) keeps each generation's {@link ExposureView} up to date with the
 * transitions here (O(1) per event); the per-resource statistics are derived from it on demand.
 *
 * @see docs/design.md § "Fence-first"
 */
import type { ClockStamp } from './clock-stamp.js';
import type { EventIndex } from './event-index.js';
import { quantileOfSorted } from './rates.js';
import type { ExposureEvidenceKind, ExposureView, Generation, Lane, ViewState } from './view-state.js';

/**
 * The exposure of a new grant, or undefined when the grant is not a handover.
 *
 * @param previousGenerations - How many generations the lane had before this grant (0: the
 *   resource's first grant, not a handover).
 * @param fence - The granted fence F.
 * @param floorFence - The lane's floor evidence so far ({@link Lane.floorFence}).
 * @param granted - The `LeaseGranted` event.
 * @param fenceFirst - Whether the grant activated a fence-first reservation.
 * @returns `closed` at 0 ms when the floor already reached F, else `open`.
 */
export function exposureAtGrant(
  previousGenerations: number,
  fence: number,
  floorFence: number,
  granted: ClockStamp,
  fenceFirst: boolean,
): ExposureView | undefined {
  if (previousGenerations === 0) return undefined;
  if (floorFence >= fence) {
    return {
      status: 'closed',
      fenceFirst,
      evidence: granted,
      evidenceKind: fenceFirst ? 'admitted' : undefined,
      gateId: undefined,
      durationMillis: 0,
      endWallMillis: granted.wallMillis,
    };
  }
  return {
    status: 'open',
    fenceFirst,
    evidence: undefined,
    evidenceKind: undefined,
    gateId: undefined,
    durationMillis: undefined,
    endWallMillis: undefined,
  };
}

/**
 * The exposure of the open generation `g` after a gate event showed the floor at `floorFence`.
 *
 * @returns The closed exposure when `g`'s was open and `floorFence ≥ g.fence`, else `g.exposure` unchanged.
 */
export function exposureOnFloor(
  g: Generation,
  floorFence: number,
  kind: ExposureEvidenceKind,
  evidence: ClockStamp,
  gateId: string,
): ExposureView | undefined {
  const current = g.exposure;
  if (current?.status !== 'open' || floorFence < g.fence || g.granted === undefined) return current;
  return {
    ...current,
    status: 'closed',
    evidence,
    evidenceKind: kind,
    gateId,
    durationMillis: elapsedMillis(g.granted, evidence),
    endWallMillis: evidence.wallMillis,
  };
}

/**
 * The exposure of `g` once it has ended (call after its end and bar interval are set).
 *
 * @returns `unknown`, ending where its bar ends, when it was still open; else unchanged.
 */
export function exposureOnEnd(g: Generation): ExposureView | undefined {
  const current = g.exposure;
  if (current?.status !== 'open') return current;
  return { ...current, status: 'unknown', endWallMillis: g.endWallMillis };
}

/**
 * Milliseconds from `from` to `to`: the coordinator's monotonic readings when both are of one
 * boot (the truth), else wall time (readings of different boots are never compared); at least 0.
 */
export function elapsedMillis(from: ClockStamp, to: ClockStamp): number {
  const millis = from.bootId === to.bootId ? to.atMillis - from.atMillis : to.wallMillis - from.wallMillis;
  return Math.max(0, millis);
}

/** Exposure statistics of one resource (one row of the exposure panel). */
export interface ExposureSummary {
  readonly resource: string;
  /** Grants that were handovers (the resource had a holder before). */
  readonly handovers: number;
  /** Handovers whose window closed (evidence arrived), fence-first ones included. */
  readonly measured: number;
  /** Handovers whose generation ended with no evidence: exposure unknown. */
  readonly unknown: number;
  /** Handovers still open with no evidence yet (as of the state's position). */
  readonly open: number;
  /** Handovers that activated a fence-first reservation. */
  readonly fenceFirst: number;
  /** Median of the measured windows (nearest rank), milliseconds; undefined when none measured. */
  readonly p50Millis: number | undefined;
  /** 99th percentile of the measured windows (nearest rank), milliseconds; undefined when none. */
  readonly p99Millis: number | undefined;
  /** Longest measured window, milliseconds; undefined when none measured. */
  readonly maxMillis: number | undefined;
}

/**
 * The exposure statistics of one lane, from its generations' {@link ExposureView}s.
 *
 * @param lane - A lane of a view state.
 * @returns Its counts and p50 / p99 / max of the closed windows (durations in milliseconds).
 */
export function summarizeExposures(lane: Lane): ExposureSummary {
  let handovers = 0;
  let unknown = 0;
  let open = 0;
  let fenceFirst = 0;
  let measured = 0;
  for (const g of lane.generations) {
    const e = g.exposure;
    if (e === undefined) continue;
    handovers += 1;
    if (e.fenceFirst) fenceFirst += 1;
    if (e.status === 'unknown') unknown += 1;
    else if (e.status === 'open') open += 1;
    else measured += 1;
  }
  // A typed array sorts numerically without a comparator call per pair.
  const durations = new Float64Array(measured);
  let n = 0;
  for (const g of lane.generations) {
    const millis = g.exposure?.durationMillis;
    if (millis !== undefined) durations[n++] = millis;
  }
  durations.sort();
  return {
    resource: lane.resource,
    handovers,
    measured,
    unknown,
    open,
    fenceFirst,
    p50Millis: quantileOfSorted(durations, 0.5),
    p99Millis: quantileOfSorted(durations, 0.99),
    maxMillis: durations.length === 0 ? undefined : durations[durations.length - 1],
  };
}

/**
 * The exposure statistics of every resource with at least one handover, worst first (see
 * {@link compareExposureWorstFirst}).
 *
 * @param state - A view state (the head, or a time-travel position: the figures are as of it).
 */
export function exposureSummaries(state: ViewState): ExposureSummary[] {
  const rows: ExposureSummary[] = [];
  for (const lane of state.lanes.values()) {
    const summary = summarizeExposures(lane);
    if (summary.handovers > 0) rows.push(summary);
  }
  return rows.sort(compareExposureWorstFirst);
}

/**
 * Worst first: the longest measured window, then the most unknown, then the most still open,
 * then the resource name. A resource with no measured window sorts after every measured one.
 */
export function compareExposureWorstFirst(a: ExposureSummary, b: ExposureSummary): number {
  return (
    (b.maxMillis ?? -1) - (a.maxMillis ?? -1) ||
    b.unknown - a.unknown ||
    b.open - a.open ||
    (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0)
  );
}

/**
 * The log positions a slice of the log needs to fold `g`'s exposure as the whole log did (for an
 * exported investigation): an earlier lease event of the resource (so the grant is a handover)
 * and the evidence that closed the window (the floor event before the grant, when it closed at 0).
 *
 * @param index - The loaded events.
 * @param g - A generation folded from them.
 * @returns Positions in increasing order; empty when `g` has no exposure.
 */
export function exposurePositions(index: EventIndex, g: Generation): number[] {
  const exposure = g.exposure;
  if (exposure === undefined || g.granted === undefined) return [];
  const grantedAt = g.granted.position;
  const positions: number[] = [];
  let floorBefore: number | undefined;
  for (const p of index.positionsOf(g.resource)) {
    if (p >= grantedAt) break;
    const event = index.at(p)?.event;
    if (event === undefined) continue;
    if (
      positions.length === 0 &&
      (event.type === 'LeaseGranted' ||
        event.type === 'LeaseRenewed' ||
        event.type === 'LeaseReleased' ||
        event.type === 'LeaseExpired')
    )
      positions.push(p);
    const floor =
      event.type === 'FenceAdmitted' || event.type === 'FenceFloorReported'
        ? event.data.fence
        : event.type === 'FenceRejected'
          ? event.data.current.fence
          : 0;
    if (floor >= g.fence) floorBefore = p;
  }
  const evidence = exposure.evidence?.position;
  if (evidence !== undefined && evidence > grantedAt) positions.push(evidence);
  else if (exposure.status === 'closed' && floorBefore !== undefined) positions.push(floorBefore);
  return positions.sort((a, b) => a - b);
}
