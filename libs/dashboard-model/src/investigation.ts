/**
 * The investigation of one `FenceRejected`, keyed by its log position: both holders'
 * generations on one axis, the gate's floor and who set it, the events around it, and one
 * sentence saying what happened. Built from the view state *as of* that position, so the same
 * position gives the same investigation whenever and wherever it is opened (a fresh browser,
 * after a coordinator restart, or from an exported file).
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
import type { CarriedLease, CoordinatorEventType, RecordedEvent } from '@lease-fence/protocol';
import type { ClockStamp } from './clock-stamp.js';
import type { EventIndex } from './event-index.js';
import { explainRejection, type FloorEvidence } from './explain-rejection.js';
import { exposurePositions } from './exposure.js';
import type { ViewHistory } from './view-history.js';
import type { Generation, Lane, RejectionView } from './view-state.js';

/** Default number of events shown on each side of the rejection. */
export const DEFAULT_CONTEXT_RADIUS = 10;

/**
 * The context window: the rejection and `radius` listed events on each side of it, where an uptime
 * checkpoint (`CoordinatorCheckpointed`) is counted but not listed. A coordinator in its grace period
 * writes one every 100 ms (libs/coordinator-core/src/decider/decide.ts), so listing them would fill
 * an investigation's context with the clock's heartbeat instead of what the leases did.
 */
export interface InvestigationContext {
  /** Listed events, in position order: every loaded event of the span except uptime checkpoints. */
  readonly events: readonly RecordedEvent[];
  /** Uptime checkpoints inside the span, not listed. */
  readonly checkpointsOmitted: number;
  /** First and last position of the span (the rejection's own when the radius is 0). */
  readonly fromPosition: number;
  readonly toPosition: number;
}

/** A restart inside the investigation's span, with what it did to this resource. */
export interface InvestigationRestart {
  readonly stamp: ClockStamp;
  readonly previousBootId: string | undefined;
  readonly recoveredFence: number;
  readonly eventsReplayed: number;
  readonly replayMillis: number;
  readonly fromSnapshot: boolean;
  readonly graceEndWallMillis: number;
  /** The lease of this resource it carried, if any. */
  readonly carried: CarriedLease | undefined;
}

/** Everything the investigation view shows. */
export interface Investigation {
  /** Position of the `FenceRejected`. */
  readonly position: number;
  readonly rejection: RejectionView;
  /** The refused holder's generation (by fence), as of the rejection; undefined when not in the loaded log. */
  readonly rejected: Generation | undefined;
  /** The generation of the gate's floor (by fence), as of the rejection; undefined when not in the loaded log. */
  readonly current: Generation | undefined;
  readonly floor: FloorEvidence;
  /** Restarts between the earlier generation's first event and the rejection. */
  readonly restarts: readonly InvestigationRestart[];
  /** Events shown on each side of the rejection. */
  readonly contextRadius: number;
  /** The events around the rejection: see {@link InvestigationContext}. */
  readonly context: InvestigationContext;
  /** One sentence: what happened. */
  readonly explanation: string;
  /** Wall-time span that shows both generations and the rejection (epoch milliseconds). */
  readonly axis: { readonly fromWallMillis: number; readonly toWallMillis: number };
}

/**
 * Outcome of {@link investigate}: the investigation, or why there is none (data, not thrown).
 * - `not-in-log`: no loaded event has that position (`firstPosition`..`lastPosition` is what is loaded);
 * - `not-a-rejection`: the event there is of another type.
 */
export type InvestigationResult =
  | { readonly ok: true; readonly investigation: Investigation }
  | {
      readonly ok: false;
      readonly reason: 'not-in-log';
      readonly position: number;
      readonly firstPosition: number;
      readonly lastPosition: number;
    }
  | {
      readonly ok: false;
      readonly reason: 'not-a-rejection';
      readonly position: number;
      readonly type: CoordinatorEventType;
    };

/**
 * Investigates the `FenceRejected` at `position`.
 *
 * @param history - The loaded log and its fold.
 * @param position - Log position of a `FenceRejected`.
 * @param contextRadius - Events to show on each side, integer ≥ 0. @defaultValue {@link DEFAULT_CONTEXT_RADIUS}
 * @returns See {@link InvestigationResult}.
 * @throws RangeError if `contextRadius` is negative or not an integer.
 */
export function investigate(
  history: ViewHistory,
  position: number,
  contextRadius: number = DEFAULT_CONTEXT_RADIUS,
): InvestigationResult {
  if (!Number.isSafeInteger(contextRadius) || contextRadius < 0) {
    throw new RangeError(
      `investigate: contextRadius must be a non-negative integer (events), got ${String(contextRadius)}`,
    );
  }
  const { index } = history;
  const recorded = Number.isSafeInteger(position) ? index.at(position) : undefined;
  if (recorded === undefined)
    return {
      ok: false,
      reason: 'not-in-log',
      position,
      firstPosition: index.firstPosition,
      lastPosition: index.lastPosition,
    };
  if (recorded.event.type !== 'FenceRejected')
    return { ok: false, reason: 'not-a-rejection', position, type: recorded.event.type };

  const state = history.stateAt(position);
  const rejection = state.rejections[state.rejections.length - 1] as RejectionView;
  const lane = state.lanes.get(rejection.resource) as Lane;
  const rejected = findGeneration(lane, rejection.rejected.fence, rejection.rejected.holderId);
  const current = findGeneration(lane, rejection.current.fence, rejection.current.holderId);
  const floor: FloorEvidence = {
    ...rejection.current,
    gateId: rejection.gateId,
    admitted: findAdmission(history, rejection, position),
  };
  const fences = new Set([rejection.rejected.fence, rejection.current.fence]);
  const from = spanStart(rejected, current, position);
  const restarts = state.restarts
    .filter((r) => r.stamp.position >= from && r.stamp.position <= position)
    .map((r) => ({
      stamp: r.stamp,
      previousBootId: r.previousBootId,
      recoveredFence: r.recoveredFence,
      eventsReplayed: r.eventsReplayed,
      replayMillis: r.replayMillis,
      fromSnapshot: r.fromSnapshot,
      graceEndWallMillis: r.graceEndWallMillis,
      carried: r.carriedLeases.find((c) => c.resource === rejection.resource && fences.has(c.fence)),
    }));
  const walls = [
    rejection.stamp.wallMillis,
    ...[rejected, current].flatMap((g) => (g === undefined ? [] : [g.startWallMillis, g.endWallMillis])),
  ];
  const lo = Math.min(...walls);
  const hi = Math.max(...walls);
  const pad = Math.max(500, (hi - lo) * 0.08);
  return {
    ok: true,
    investigation: {
      position,
      rejection,
      rejected,
      current,
      floor,
      restarts,
      contextRadius,
      context: contextAround(index, position, contextRadius),
      explanation: explainRejection({ rejection, rejected, current, floor }),
      axis: { fromWallMillis: lo - pad, toWallMillis: hi + pad },
    },
  };
}

/**
 * Positions of every event an exported investigation needs so that {@link investigate} on those
 * events alone gives the same investigation: both generations' events up to the rejection, the
 * events that ended or carried them, the restarts in between, the floor's admission, and the
 * context window.
 */
export function investigationPositions(history: ViewHistory, investigation: Investigation): number[] {
  const { position, rejection } = investigation;
  const { index } = history;
  const fences = new Set([rejection.rejected.fence, rejection.current.fence]);
  const positions = new Set<number>([position]);
  for (const p of index.positionsOf(rejection.resource)) {
    if (p > position) break;
    const { event } = index.at(p) as RecordedEvent;
    if (
      (event.type === 'LeaseGranted' ||
        event.type === 'LeaseRenewed' ||
        event.type === 'LeaseReleased' ||
        event.type === 'LeaseExpired') &&
      fences.has(event.data.fence)
    )
      positions.add(p);
  }
  for (const g of [investigation.rejected, investigation.current]) {
    if (g === undefined) continue;
    positions.add(g.firstSeen.position);
    if (g.end !== undefined) positions.add(g.end.stamp.position);
    for (const c of g.carried) positions.add(c.position);
    for (const p of exposurePositions(index, g)) positions.add(p);
  }
  for (const r of investigation.restarts) positions.add(r.stamp.position);
  if (investigation.floor.admitted !== undefined) positions.add(investigation.floor.admitted.position);
  // The whole span, the omitted checkpoints included, so the export counts the same omissions.
  for (const e of index.between(investigation.context.fromPosition, investigation.context.toPosition))
    positions.add(e.position);
  return [...positions].filter((p) => p <= index.lastPosition && index.at(p) !== undefined).sort((a, b) => a - b);
}

/**
 * The caption of an investigation's event list, the same in the view and the exported Markdown:
 * "Events around it (±10)", and how many uptime checkpoints the span holds but does not list.
 */
export function contextCaption(investigation: Investigation): string {
  const omitted = investigation.context.checkpointsOmitted;
  const note =
    omitted === 0
      ? ''
      : `; ${omitted} uptime checkpoint${omitted === 1 ? '' : 's'} (CoordinatorCheckpointed) in between not listed`;
  return `Events around it (±${investigation.contextRadius}${note})`;
}

/** What the events after the refusal (in an investigation's context) did to one of its generations. */
export interface AfterRefusal {
  readonly position: number;
  /** `renewed`, `released` or `expired` by its holder; `superseded` by a grant of a higher fence on the resource. */
  readonly kind: 'renewed' | 'released' | 'expired' | 'superseded';
}

/**
 * The investigation describes both generations **as of the refusal** (its position); the events
 * listed around it may go further. This is what those later events (positions after the refusal,
 * within `context`) did to one of the generations, in log order, up to and including its end, so
 * a view or an export can say so beside the as-of description instead of contradicting its own
 * event list. Pure.
 *
 * @param investigation - An investigation.
 * @param generation - `investigation.rejected` or `investigation.current` (undefined gives none).
 * @returns The renewals and the end, in position order; empty when the generation had ended by the refusal.
 */
export function afterRefusal(investigation: Investigation, generation: Generation | undefined): AfterRefusal[] {
  if (generation === undefined || generation.end !== undefined) return [];
  const out: AfterRefusal[] = [];
  for (const { position, event } of investigation.context.events) {
    if (position <= investigation.position || !('resource' in event.data)) continue;
    if (event.data.resource !== investigation.rejection.resource) continue;
    let kind: AfterRefusal['kind'] | undefined;
    switch (event.type) {
      case 'LeaseRenewed':
      case 'LeaseReleased':
      case 'LeaseExpired':
        if (event.data.fence === generation.fence && event.data.holderId === generation.holderId)
          kind = event.type === 'LeaseRenewed' ? 'renewed' : event.type === 'LeaseReleased' ? 'released' : 'expired';
        break;
      case 'LeaseGranted':
        if (event.data.fence > generation.fence) kind = 'superseded';
        break;
      default:
        break;
    }
    if (kind === undefined) continue;
    out.push({ position, kind });
    if (kind !== 'renewed') break;
  }
  return out;
}

/**
 * {@link afterRefusal} as one phrase ("renewed at 41, 44; released at 47"), or undefined when
 * there is nothing after the refusal.
 */
export function describeAfterRefusal(after: readonly AfterRefusal[]): string | undefined {
  if (after.length === 0) return undefined;
  const renewals = after.filter((a) => a.kind === 'renewed').map((a) => a.position);
  const end = after.find((a) => a.kind !== 'renewed');
  const parts = [
    ...(renewals.length === 0 ? [] : [`renewed at position${renewals.length > 1 ? 's' : ''} ${renewals.join(', ')}`]),
    ...(end === undefined ? [] : [`${end.kind} at position ${end.position}`]),
  ];
  return parts.join('; ');
}

function contextAround(index: EventIndex, position: number, radius: number): InvestigationContext {
  const events = index.events();
  const at = index.indexOf(position);
  let lo = at;
  let hi = at;
  for (let listed = 0; listed < radius && lo > 0;) {
    lo -= 1;
    if (events[lo]?.event.type !== 'CoordinatorCheckpointed') listed += 1;
  }
  for (let listed = 0; listed < radius && hi < events.length - 1;) {
    hi += 1;
    if (events[hi]?.event.type !== 'CoordinatorCheckpointed') listed += 1;
  }
  const span = events.slice(lo, hi + 1);
  const listed = span.filter((e) => e.event.type !== 'CoordinatorCheckpointed');
  return {
    events: listed,
    checkpointsOmitted: span.length - listed.length,
    fromPosition: (span[0] as RecordedEvent).position,
    toPosition: (span[span.length - 1] as RecordedEvent).position,
  };
}

function findGeneration(lane: Lane, fence: number, holderId: string): Generation | undefined {
  let byFence: Generation | undefined;
  for (let i = lane.generations.length - 1; i >= 0; i -= 1) {
    const g = lane.generations[i];
    if (g === undefined || g.fence !== fence) continue;
    if (g.holderId === holderId) return g;
    byFence ??= g;
  }
  return byFence;
}

function findAdmission(history: ViewHistory, rejection: RejectionView, position: number): ClockStamp | undefined {
  const positions = history.index.positionsOf(rejection.resource);
  for (let i = positions.length - 1; i >= 0; i -= 1) {
    const p = positions[i] as number;
    if (p >= position) continue;
    const recorded = history.index.at(p);
    if (recorded?.event.type !== 'FenceAdmitted') continue;
    const d = recorded.event.data;
    if (
      d.gateId === rejection.gateId &&
      d.fence === rejection.current.fence &&
      d.holderId === rejection.current.holderId
    ) {
      return { position: p, wallMillis: d.wallMillis, bootId: d.bootId, atMillis: d.atMillis };
    }
  }
  return undefined;
}

function spanStart(rejected: Generation | undefined, current: Generation | undefined, position: number): number {
  const starts = [rejected, current].flatMap((g) => (g === undefined ? [] : [g.firstSeen.position]));
  return starts.length === 0 ? position : Math.min(...starts);
}
