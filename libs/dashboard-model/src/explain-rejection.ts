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
 * One sentence that says what happened, naming both holders, both fences, the gate and the
 * times (coordinator wall clock, UTC). Pure.
 *
 * @param facts - See {@link RejectionFacts}.
 * @returns A sentence ending with a full stop.
 */
export function explainRejection(facts: RejectionFacts): string {
  const { rejection, rejected, current, floor } = facts;
  const r = rejection.rejected;
  const c = rejection.current;
  const at = formatWallTime(rejection.stamp.wallMillis);
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
    return `${r.holderId} presented fence ${r.fence} for ${rejection.resource} at ${at}, but ${ownerText}: the same fence from two holders is evidence of a double grant, so gate ${rejection.gateId} refused the write.`;
  }
  const held =
    current === undefined
      ? `${c.holderId} held fence ${c.fence} (its grant is not in the loaded log)`
      : `${c.holderId} had held fence ${c.fence} since ${formatWallTime(current.startWallMillis)}`;
  if (rejected === undefined) {
    return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence} at ${at}, a generation that is not in the loaded log; ${held} and gate ${rejection.gateId}'s floor was ${c.fence} (${floorSource}), so the stale write was refused.`;
  }
  const carried =
    rejected.carried.length > 0
      ? ` (carried across the restart into boot ${shortBootId(rejected.carried[rejected.carried.length - 1]?.bootId ?? '')})`
      : '';
  if (rejected.end === undefined || rejected.end.stamp.position > rejection.stamp.position) {
    return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence} at ${at} while the log still shows its lease${carried} open until ${formatWallTime(rejected.endWallMillis)}; gate ${rejection.gateId}'s floor was already ${c.fence} (${c.holderId}), which the loaded log does not explain, so check the gate's floor store and look for a double grant.`;
  }
  const late = rejection.stamp.wallMillis - rejected.endWallMillis;
  const how = endPhrase(rejected);
  return `${r.holderId} wrote to ${rejection.resource} with fence ${r.fence} ${formatDuration(Math.max(0, late))} after its lease${carried} ${how} at ${formatWallTime(rejected.endWallMillis)}; ${held} and gate ${rejection.gateId}'s floor was ${c.fence} (${floorSource}), so the stale write was refused at ${at}.`;
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
