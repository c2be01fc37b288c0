/**
 * The one-sentence explanation of a `FenceRejected`, for the investigation view and tickets.
 *
 * @see docs/design.md § "The library's rules" (FenceGate: stale fence, double grant)
 */
import { formatDuration, formatWallTime, shortBootId } from './format.js';
import type { ClockStamp } from './clock-stamp.js';
import type { Generation, RejectionView } from './view-state.js';

/** The gate's floor at the refusal, and who set it. */
export interface FloorEvidence {
  readonly gateId: string;
  readonly fence: number;
  readonly holderId: string;
  /** The `FenceAdmitted` that pushed this floor to the gate, when it is logged at or before the rejection. */
  readonly admitted: ClockStamp | undefined;
}

/** What {@link explainRejection} needs: the rejection, both generations as of it, and the floor. */
export interface RejectionFacts {
  readonly rejection: RejectionView;
  readonly rejected: Generation | undefined;
  readonly current: Generation | undefined;
  readonly floor: FloorEvidence;
}

/**
 * How far the coordinator's record of a refusal may trail the gate's own clock reading of it,
 * milliseconds, before the explanation says the report came late (a gate's outbox delivers the
 * refusals it made while the coordinator was unreachable once it is back). The two readings are of
 * different clocks, so this only decides whether both are stated; nothing is computed across them.
 */
export const LATE_REPORT_NOTE_MILLIS = 1_000;

/**
 * Whether a gate reported this refusal late: the coordinator recorded it more than
 * {@link LATE_REPORT_NOTE_MILLIS} after the gate's own clock reading of it (a refusal its outbox
 * delivered once the coordinator was back). The explanation then states both readings, and the lanes
 * draw its marker hollow at the record's time (apps/dashboard/src/timeline/draw-timeline.ts). Pure.
 *
 * @param rejection - A rejection; one without a gate reading (`gateWallMillis`) is never late.
 */
export function reportedLate(rejection: RejectionView): boolean {
  return isLateReport(rejection.stamp.wallMillis, rejection.gateWallMillis);
}

/**
 * The rule of {@link reportedLate} on the two readings alone, for views that hold a rejection as
 * the API gives it (`GET /v1/rejections`, the CLI's `rejections` table) rather than a
 * {@link RejectionView}. Pure.
 *
 * @param recordedWallMillis - The coordinator's wall clock when it recorded the refusal (epoch ms).
 * @param gateWallMillis - The gate's own wall clock at the refusal (epoch ms), when the gate sent it.
 * @returns Whether the record trails the gate's reading by more than {@link LATE_REPORT_NOTE_MILLIS}.
 */
export function isLateReport(recordedWallMillis: number, gateWallMillis: number | undefined): boolean {
  return gateWallMillis !== undefined && recordedWallMillis - gateWallMillis > LATE_REPORT_NOTE_MILLIS;
}

/**
 * One sentence that says what happened, naming both holders, both fences, the gate and the
 * times (coordinator wall clock, UTC), and a second one when the gate reported the refusal late
 * ({@link LATE_REPORT_NOTE_MILLIS}): then the refusal's time by the gate's clock and the record's
 * by the coordinator's are both given, and no duration is computed from the late record. Pure.
 *
 * @param facts - See {@link RejectionFacts}.
 * @returns A sentence ending with a full stop.
 */
export function explainRejection(facts: RejectionFacts): string {
  const { rejection, rejected, current, floor } = facts;
  const r = rejection.rejected;
  const c = rejection.current;
  const recordedAt = formatWallTime(rejection.stamp.wallMillis);
  const late = reportedLate(rejection);
  // A late record's time is not when the write was made: the sentence then gives no time, and the note both.
  const atText = late ? '' : ` at ${recordedAt}`;
  const lateNote = late
    ? ` By gate ${rejection.gateId}'s own clock it refused the write at ${formatWallTime(rejection.gateWallMillis!)}; the coordinator recorded the refusal at ${recordedAt}, when the gate's outbox delivered it (a gate keeps the refusals it makes while the coordinator is unreachable and reports them once it is back).`
    : '';
  const floorSource =
    floor.admitted !== undefined
      ? `pushed to the gate by FenceAdmitted at position ${floor.admitted.position}`
      : `not admitted in the log, so set by a write of ${c.holderId} with fence ${c.fence}`;
  if (rejection.kind === 'double-grant') {
    const owner = current ?? rejected;
    const ownerText =
      owner === undefined
        ? `fence ${c.fence} also belongs to ${c.holderId}`
        : `the log gives fence ${owner.fence} to ${owner.holderId} (${owner.granted === undefined ? 'grant not loaded' : `granted ${formatWallTime(owner.granted.wallMillis)}`})`;
    return `${r.holderId} presented fence ${r.fence} for ${rejection.resource}${atText}, but ${ownerText}: the same fence from two holders is evidence of a double grant, so gate ${rejection.gateId} refused the write.${lateNote}`;
  }
  const held =
    current === undefined
      ? `${c.holderId} held fence ${c.fence} (its grant is not in the loaded log)`
      : `${c.holderId} had held fence ${c.fence} since ${formatWallTime(current.startWallMillis)}`;
  if (rejected === undefined) {
    return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence}${atText}, a generation that is not in the loaded log; ${held} and gate ${rejection.gateId}'s floor was ${c.fence} (${floorSource}), so the stale write was refused.${lateNote}`;
  }
  const carried =
    rejected.carried.length > 0
      ? ` (carried across the restart into boot ${shortBootId(rejected.carried[rejected.carried.length - 1]?.bootId ?? '')})`
      : '';
  if (rejected.end === undefined || rejected.end.stamp.position > rejection.stamp.position) {
    return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence}${atText} while the log still shows its lease${carried} open until ${formatWallTime(rejected.endWallMillis)}; gate ${rejection.gateId}'s floor was already ${c.fence} (${c.holderId}), which the loaded log does not explain, so check the gate's floor store and look for a double grant.${lateNote}`;
  }
  const how = endPhrase(rejected);
  const after = late
    ? 'after'
    : `${formatDuration(Math.max(0, rejection.stamp.wallMillis - rejected.endWallMillis))} after`;
  return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence} ${after} its lease${carried} ${how} at ${formatWallTime(rejected.endWallMillis)}; ${held} and gate ${rejection.gateId}'s floor was ${c.fence} (${floorSource}), so the stale write was refused${atText}.${lateNote}`;
}

function endPhrase(rejected: Generation): string {
  switch (rejected.end?.kind) {
    case 'released':
      return 'was released';
    case 'superseded':
      return 'was superseded by a newer grant';
    case 'not-carried':
      return 'was dropped by a coordinator restart';
    default:
      return 'expired';
  }
}
