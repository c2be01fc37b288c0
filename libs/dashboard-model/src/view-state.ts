/**
 * The dashboard's view state: what the log says about every lease, rejection and restart up to
 * one log position. It is built only by {@link evolveView} (one pure fold shared by live mode,
 * history and imported investigations), so a view at position P is the same however the events
 * arrived.
 *
 * Times: every `*WallMillis` is coordinator wall-clock epoch milliseconds (display only, the one
 * axis shared across boots); monotonic readings keep their boot id beside them ({@link ClockStamp}).
 *
 * @see docs/design.md § "The event-sourced coordinator" (Time travel)
 */
import type { CarriedLease, CoordinatorEventType, HolderFence } from '@lease-fence/protocol';
import type { ClockStamp } from './clock-stamp.js';

/**
 * How a generation of ownership ended:
 * - `released`: the holder gave it back (`LeaseReleased`);
 * - `expired`: its TTL ran out (`LeaseExpired`);
 * - `superseded`: a newer `LeaseGranted` for the resource arrived while the log still showed it open;
 * - `not-carried`: a coordinator restart did not carry it (it had run out before the crash).
 */
export type GenerationEndKind = 'released' | 'expired' | 'superseded' | 'not-carried';

/** The event that ended a generation, and how. */
export interface GenerationEnd {
  readonly kind: GenerationEndKind;
  /** The ending event: `LeaseReleased`, `LeaseExpired`, the next `LeaseGranted`, or `CoordinatorStarted`. */
  readonly stamp: ClockStamp;
}

/** The coordinator's expiry of a generation, as last set by a grant, renewal or restart. */
export interface LeaseExpiry {
  /** Clock domain of `expiresAtMillis`. */
  readonly bootId: string;
  /** The coordinator's expiry, monotonic milliseconds in `bootId`'s domain (the truth). */
  readonly expiresAtMillis: number;
  /** Wall-clock estimate of the expiry, projected from `setBy` (display only). */
  readonly wallMillis: number;
  /** The event that set this expiry. */
  readonly setBy: ClockStamp;
  /** What set it: the grant, a renewal, or a restart that carried the lease (grace deadline). */
  readonly source: 'granted' | 'renewed' | 'carried';
}

/** A restart that carried a generation into a new boot (it stays one generation, one bar). */
export interface CarriedAcross {
  /** The new boot. */
  readonly bootId: string;
  /** Position of that boot's `CoordinatorStarted`. */
  readonly position: number;
}

/**
 * One generation of ownership of a resource: one holder, one fence, from its grant to its end.
 * Renewals keep the fence and extend it. A lease carried across a restart stays one generation.
 */
export interface Generation {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  /** The acquire request that minted it; undefined when its grant is not in the loaded events. */
  readonly requestId: string | undefined;
  /** TTL of the grant or latest renewal, milliseconds; undefined when not logged in the loaded events. */
  readonly ttlMillis: number | undefined;
  /** The `LeaseGranted` event; undefined when the grant is not in the loaded events. */
  readonly granted: ClockStamp | undefined;
  /** The first loaded event that mentions this generation (the grant when known). */
  readonly firstSeen: ClockStamp;
  /** The latest coordinator expiry; undefined when no loaded event stated one. */
  readonly expiry: LeaseExpiry | undefined;
  /** Log positions of its `LeaseRenewed` events, in log order (their full stamps are in the log). */
  readonly renewalPositions: readonly number[];
  /** Coordinator wall time of each renewal, epoch milliseconds, parallel to `renewalPositions`. */
  readonly renewalWallMillis: readonly number[];
  /** Restarts that carried it, in log order. */
  readonly carried: readonly CarriedAcross[];
  /** How it ended; undefined while open. */
  readonly end: GenerationEnd | undefined;
  /** Where its bar starts: wall time of the grant (or of `firstSeen`). */
  readonly startWallMillis: number;
  /**
   * Where its bar ends, wall time: the release, else the projected expiry (capped at the ending
   * event), else — open with unknown expiry — the start. Never below `startWallMillis`.
   */
  readonly endWallMillis: number;
  /**
   * Its exposure window, when its grant is a handover (a `LeaseGranted` on a resource that had a
   * generation before it in the loaded events); undefined for a resource's first grant and for a
   * generation whose grant is not loaded. See {@link ExposureView}.
   */
  readonly exposure: ExposureView | undefined;
}

/**
 * The log event that showed a resource's gate floor at or above a fence:
 * `admitted` (`FenceAdmitted` with that fence or higher), `floor-reported` (`FenceFloorReported`
 * with a floor at or above it), `rejected` (a `FenceRejected` whose current fence is at or above it:
 * the gate refused an older write because it had admitted the new fence).
 */
export type ExposureEvidenceKind = 'admitted' | 'floor-reported' | 'rejected';

/**
 * The exposure window of one handover: from the grant of fence F until the first evidence in the
 * log that the resource's gate floor reached F. Inside it an older holder's write would still
 * have been admitted by the gate. Values of {@link ExposureView.status}:
 * - `closed`: evidence arrived while the generation was open; `durationMillis` is known. A floor
 *   already at F when the grant was logged (fence-first: `FenceReserved` → `FenceAdmitted` →
 *   `LeaseGranted`) closes it at the grant: 0 ms.
 * - `open`: the generation is still open and no evidence has arrived yet (as of this position).
 * - `unknown`: the generation ended before any evidence (no gate reported for the resource):
 *   the exposure is not known, and is never shown as 0.
 *
 * Immutable: the fold replaces a generation's exposure rather than changing it, so a cloned view
 * state keeps the one it had.
 */
export interface ExposureView {
  readonly status: 'closed' | 'open' | 'unknown';
  /** The grant activated a fence-first reservation (a gate admitted the fence before the grant). */
  readonly fenceFirst: boolean;
  /** The evidence event (`closed`); the grant itself when the floor was already there. */
  readonly evidence: ClockStamp | undefined;
  /** What the evidence was (`closed` only). */
  readonly evidenceKind: ExposureEvidenceKind | undefined;
  /** The gate whose event was the evidence (`closed` by a gate event only). */
  readonly gateId: string | undefined;
  /**
   * Grant to evidence, milliseconds (`closed` only): the coordinator's monotonic readings when both
   * events are of one boot, else wall time; never below 0.
   */
  readonly durationMillis: number | undefined;
  /**
   * Where the window ends on the wall-time axis, epoch milliseconds: the evidence (`closed`) or the
   * generation's end (`unknown`); undefined while `open` (it runs to "now").
   */
  readonly endWallMillis: number | undefined;
}

/** A `FenceRejected` event: a resource's FenceGate refused a write. */
export interface RejectionView {
  /** The coordinator's recording of the gate's report (position and both clocks). */
  readonly stamp: ClockStamp;
  readonly resource: string;
  /** The gate that refused the write and reported it. */
  readonly gateId: string;
  /** The gate's own sequence number. */
  readonly seq: number;
  /** `stale`: fence below the floor; `double-grant`: same fence, another holder. */
  readonly kind: 'stale' | 'double-grant';
  /** The refused holder and fence. */
  readonly rejected: HolderFence;
  /** The gate's floor at the refusal: the holder and fence it had admitted. */
  readonly current: HolderFence;
  /** The refusal time by the gate's own wall clock (epoch milliseconds), when reported. */
  readonly gateWallMillis: number | undefined;
}

/**
 * A `RejectionsMissing` event: evidence that a gate refused writes whose reports never reached
 * the log (the gate's report `reportedSeq` skipped seqs `fromSeq` to `throughSeq`).
 */
export interface MissingRejectionsView {
  /** The coordinator's recording of the gap (position and both clocks). */
  readonly stamp: ClockStamp;
  readonly resource: string;
  /** The gate whose refusals are missing. */
  readonly gateId: string;
  /** First missing seq. */
  readonly fromSeq: number;
  /** Last missing seq (inclusive). */
  readonly throughSeq: number;
  /** The seq of the report that revealed the gap. */
  readonly reportedSeq: number;
}

/** A restart's `CoordinatorStarted` event: a boot that recovered an earlier boot's log (`isRestart`, coordinator-start.ts). */
export interface RestartView {
  readonly stamp: ClockStamp;
  readonly namespace: string;
  /** Boot id of the previous writer; undefined on a fresh log. */
  readonly previousBootId: string | undefined;
  /** Highest fence ever issued, as recovered. */
  readonly recoveredFence: number;
  readonly eventsReplayed: number;
  readonly fromSnapshot: boolean;
  /** Recovery time, wall milliseconds. */
  readonly replayMillis: number;
  /** Latest grace deadline, monotonic milliseconds in `stamp.bootId`'s domain. */
  readonly graceDeadlineMillis: number;
  /** The grace deadline projected to wall time (display only). */
  readonly graceEndWallMillis: number;
  /** Leases honoured across the restart, with their grace deadline in the new boot's domain. */
  readonly carriedLeases: readonly CarriedLease[];
  /** Generations open in the fold that this restart did not carry (ended `not-carried`). */
  readonly droppedLeases: readonly (HolderFence & { readonly resource: string })[];
}

/**
 * Where a fence-first handover stands on its lane: `pending` (fence reserved, a gate is being
 * asked) → `admitted` (a gate durably raised its floor to it) → `active` (the lease is granted),
 * or `burned` (no gate admitted it in time, or the coordinator restarted while it was pending).
 */
export type HandoverPhase = 'pending' | 'admitted' | 'active' | 'burned';

/** One fence-first handover (`FenceReserved` and what followed it). */
export interface HandoverView {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  readonly phase: HandoverPhase;
  /** The `FenceReserved` event. */
  readonly reserved: ClockStamp;
  /** When the coordinator stops waiting for a gate, projected to wall time (display only). */
  readonly deadlineWallMillis: number;
  /** The gate that admitted it (`admitted` / `active`). */
  readonly gateId: string | undefined;
  /** The event that moved it to its current phase; `undefined` while pending. */
  readonly settled: ClockStamp | undefined;
  /** Why it was burned (`burned` only). */
  readonly burnReason: 'fence-unavailable' | 'coordinator-restarted' | undefined;
}

/** Everything the fold knows about one resource: one lane of the timeline. */
export interface Lane {
  readonly resource: string;
  /** Generations in log order; only the last one can be open. */
  readonly generations: readonly Generation[];
  /** Rejections reported for this resource, in log order. */
  readonly rejections: readonly RejectionView[];
  /** `FenceAdmitted` events for this resource. */
  readonly admissions: number;
  /** Fence-first handovers on this resource, in log order; only the last can be unsettled. */
  readonly handovers: readonly HandoverView[];
  /** Position of the first event that mentioned the resource. */
  readonly firstPosition: number;
  /** Position of the latest event that mentioned the resource. */
  readonly lastPosition: number;
  /** Highest fence of its generations; 0 when none. */
  readonly maxFence: number;
  /**
   * Highest fence the log shows a gate of this resource at or above (its floor): the max of
   * `FenceAdmitted` fences, `FenceFloorReported` floors and `FenceRejected` current fences; 0 when none.
   */
  readonly floorFence: number;
}

/** An event the fold could not place (e.g. a renewal of an ended generation); it changed nothing. */
export interface Anomaly {
  readonly position: number;
  readonly type: CoordinatorEventType;
  readonly message: string;
}

/** Most anomalies kept in {@link ViewState.anomalies}; the rest are only counted. */
export const MAX_ANOMALIES_KEPT = 100;

/**
 * The view state after folding every loaded event up to {@link ViewState.position}.
 * Read-only for every consumer; only {@link evolveView} changes it.
 */
export interface ViewState {
  /** Position of the last folded event; 0 before the first. */
  readonly position: number;
  /** Position of the first folded event; 0 before the first. */
  readonly firstPosition: number;
  readonly eventCount: number;
  /** Boot id of the last folded event. */
  readonly bootId: string | undefined;
  readonly namespace: string | undefined;
  /** Coordinator wall time of the last folded event, epoch milliseconds. */
  readonly lastWallMillis: number | undefined;
  /** Highest fence issued so far: max of every fence seen and every recovered fence counter. */
  readonly fenceCounter: number;
  /** One lane per resource, in order of first appearance. */
  readonly lanes: ReadonlyMap<string, Lane>;
  /** Every rejection, in log order. */
  readonly rejections: readonly RejectionView[];
  /** Every `RejectionsMissing` (refusals a gate lost before reporting them), in log order. */
  readonly missingRejections: readonly MissingRejectionsView[];
  /** Every restart's `CoordinatorStarted`, in log order; a fresh log's first start is not a restart (`isRestart`, coordinator-start.ts). */
  readonly restarts: readonly RestartView[];
  /** Events folded, by type. */
  readonly counts: Readonly<Record<CoordinatorEventType, number>>;
  /** The first {@link MAX_ANOMALIES_KEPT} anomalies. */
  readonly anomalies: readonly Anomaly[];
  readonly anomalyCount: number;
}

/**
 * The empty view state, before any event.
 *
 * @returns A fresh state, safe to hand to {@link evolveView}.
 */
export function createViewState(): ViewState {
  return {
    position: 0,
    firstPosition: 0,
    eventCount: 0,
    bootId: undefined,
    namespace: undefined,
    lastWallMillis: undefined,
    fenceCounter: 0,
    lanes: new Map(),
    rejections: [],
    missingRejections: [],
    restarts: [],
    counts: {
      CoordinatorStarted: 0,
      LeaseGranted: 0,
      LeaseRenewed: 0,
      LeaseReleased: 0,
      LeaseExpired: 0,
      FenceRejected: 0,
      RejectionsMissing: 0,
      FenceAdmitted: 0,
      SnapshotTaken: 0,
      CoordinatorCheckpointed: 0,
      FenceFloorReported: 0,
      FenceReserved: 0,
      FenceBurned: 0,
    },
    anomalies: [],
    anomalyCount: 0,
  };
}

/**
 * The open generation of a lane: its last generation when that has not ended.
 *
 * @param lane - A lane of a view state.
 * @returns The open generation, or undefined when the lane is free (as far as the log says).
 */
export function openGeneration(lane: Lane): Generation | undefined {
  const last = lane.generations[lane.generations.length - 1];
  return last !== undefined && last.end === undefined ? last : undefined;
}

/**
 * Whether the fold has seen any lease or fence activity: a grant, renewal, release, expiry,
 * rejection or admission. A log holding only the coordinator's own events (`CoordinatorStarted`,
 * `CoordinatorCheckpointed`, `SnapshotTaken`) has none: a coordinator is running, no agent has
 * asked for a lease yet.
 *
 * @param state - A view state (usually the head: the whole loaded log).
 */
export function hasLeaseActivity(state: ViewState): boolean {
  const c = state.counts;
  return c.LeaseGranted + c.LeaseRenewed + c.LeaseReleased + c.LeaseExpired + c.FenceRejected + c.FenceAdmitted > 0;
}
