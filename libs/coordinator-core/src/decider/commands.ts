/**
 * The coordinator's commands (imperative), the outcome each one gets, and the `now` every
 * decision is made at. Commands are plain data; {@link decide} validates what the lease rules
 * do not.
 *
 * @see docs/design.md § "The event-sourced coordinator" (decide/evolve)
 */
import type { AcquireOutcome, Instant, ReleaseOutcome, RenewOutcome } from 'lease-fence';

/**
 * The time a decision is made at: the coordinator's monotonic reading (its `domain` is the boot
 * id, the clock domain of every instant the decision writes) and the wall clock, which is
 * stamped on events for display only and never decides anything.
 */
export interface Now {
  /** Monotonic reading of this boot's clock; `instant.domain` is the boot id. */
  readonly instant: Instant;
  /** Wall-clock epoch milliseconds, display only. Finite, ≥ 0. */
  readonly wallMillis: number;
}

/** A holder asks for a lease on `resource` for `ttlMillis` (ms). A retry reuses `requestId`. */
export interface AcquireLease {
  readonly type: 'AcquireLease';
  readonly resource: string;
  readonly holderId: string;
  readonly requestId: string;
  /** Lease duration in milliseconds, already resolved against the coordinator's default and bounds. */
  readonly ttlMillis: number;
  /**
   * The resource's lock-delay in milliseconds, already resolved from the coordinator's rules
   * (`lockDelayMillisFor`): no new grant until this long after the resource's latest unclean
   * loss (see {@link LockDelayDenial}). Non-negative integer. @defaultValue 0 (no delay)
   */
  readonly lockDelayMillis?: number | undefined;
}

/**
 * Denial of an acquire during a lock-delay: the resource's latest holder was lost uncleanly (its
 * lease expired rather than being released, or a gate refused one of its writes) less than the
 * resource's lock-delay ago, so writes it still has in flight may not have drained yet. No
 * grant, no fence; the only event is the expiry of a lapsed lease the acquire found (which
 * itself starts the delay). Retry after `retryAfterMillis`.
 */
export interface LockDelayDenial {
  readonly ok: false;
  readonly reason: 'lock-delay';
  /** Milliseconds until the delay ends (the coordinator's clock), > 0. */
  readonly retryAfterMillis: number;
}

/**
 * Outcome of an acquire: lease-fence's {@link AcquireOutcome}, a {@link LockDelayDenial}, or, in
 * fence-first mode only, {@link FenceUnavailable} (never an outcome of `AcquireLease` itself).
 */
export type CoordinatorAcquireOutcome = AcquireOutcome | LockDelayDenial | FenceUnavailable;

/** The holder of fence `fence` extends its lease (same fence) by `ttlMillis`, or by its current ttl. */
export interface RenewLease {
  readonly type: 'RenewLease';
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  readonly ttlMillis?: number | undefined;
}

/** The holder of fence `fence` gives the lease back. */
export interface ReleaseLease {
  readonly type: 'ReleaseLease';
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}

/** Sweep: every lease with `now >= expiresAt` expires. Sent by the shell's expiry timer. */
export interface ExpireDueLeases {
  readonly type: 'ExpireDueLeases';
}

/**
 * Latest plausible wall-clock reading a gate may report: 3000-01-01T00:00:00Z in epoch
 * milliseconds (32 503 680 000 000). A `gateWallMillis` above it is refused as implausible.
 */
export const MAX_WALL_MILLIS: number = Date.UTC(3000, 0, 1);

/**
 * A resource's FenceGate reports a refused write. Idempotent by (gateId, resource, seq): the same
 * content again is a duplicate, other content under a recorded key is a `'seq-conflict'`. A report
 * that cannot be true of this coordinator's fences is refused as `'implausible'` (see
 * {@link RecordRejectionOutcome}); nothing is logged for either.
 */
export interface RecordFenceRejection {
  readonly type: 'RecordFenceRejection';
  /** The authenticated gate that reports it. */
  readonly gateId: string;
  readonly resource: string;
  /** The gate's sequence number of the rejection. Non-negative integer. */
  readonly seq: number;
  readonly kind: 'stale' | 'double-grant';
  readonly rejected: { readonly holderId: string; readonly fence: number };
  readonly current: { readonly holderId: string; readonly fence: number };
  /** The gate's wall clock at the refusal (epoch milliseconds, display only). */
  readonly gateWallMillis?: number | undefined;
}

/** One refusal of a {@link RecordFenceRejections} batch: a {@link RecordFenceRejection} without what the batch names once. */
export type RejectionReportItem = Omit<RecordFenceRejection, 'type' | 'gateId' | 'resource'>;

/**
 * A resource's FenceGate reports several refusals at once (what waited in its outbox), seqs
 * strictly ascending. Decided as the same reports one after the other would be (duplicates,
 * seq-conflicts per item, `RejectionsMissing` before a gap), with one difference: an item that
 * cannot be true refuses the whole batch and nothing of it is logged (see
 * {@link RecordRejectionsOutcome}). Its events are appended together (one group commit).
 */
export interface RecordFenceRejections {
  readonly type: 'RecordFenceRejections';
  /** The authenticated gate that reports them. */
  readonly gateId: string;
  readonly resource: string;
  /** At least one; `seq` strictly ascending. */
  readonly items: readonly RejectionReportItem[];
}

/**
 * A resource's FenceGate reports it raised its floor to `fence` without a write (handover push).
 * Refused as `'implausible'` if `fence` was never issued for `resource`, or is the resource's
 * current generation but another holder's (see {@link AdmitFenceOutcome}).
 */
export interface AdmitFence {
  readonly type: 'AdmitFence';
  readonly gateId: string;
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}

/**
 * A resource's gate reports its current floor: the highest fence it admitted, and for whom. If
 * the fence is above every fence this log issued for `resource`, the log has lost fences (it was
 * lost or restored from an old backup): the resource's highest fence rises to it, and the fence
 * counter to at least `fence + marginFences`, in one `FenceFloorReported` event. Otherwise nothing
 * is appended. See {@link ReportFloorOutcome}.
 */
export interface ReportFloor {
  readonly type: 'ReportFloor';
  /** The authenticated gate that reports it. */
  readonly gateId: string;
  readonly resource: string;
  /** The holder the gate admitted the floor's fence for. */
  readonly holderId: string;
  /** The gate's floor: positive safe integer. */
  readonly fence: number;
  /**
   * Fences skipped above a floor that raises the counter: room for fences issued before the loss,
   * after the floor, that never reached a gate (a holder that never wrote). Non-negative integer.
   */
  readonly marginFences: number;
}

/**
 * Records this boot's uptime while leases are live, so a later recovery knows how long they
 * were observed. With `evenWithoutLeases`, also when none is live (a heartbeat for a standby).
 */
export interface Checkpoint {
  readonly type: 'Checkpoint';
  /** Record the checkpoint even when no lease is live. @defaultValue false */
  readonly evenWithoutLeases?: boolean;
}

/** Marks the position a snapshot will cover (the `SnapshotTaken` event's own position). */
export interface TakeSnapshot {
  readonly type: 'TakeSnapshot';
}

/**
 * Starts a new boot after replay: carries every current lease into this boot's clock domain
 * with its grace deadline, and raises the fence counter to cover burned fences.
 */
export interface StartCoordinator {
  readonly type: 'StartCoordinator';
  readonly namespace: string;
  /** Events folded by the replay (after the snapshot, if any). */
  readonly eventsReplayed: number;
  readonly fromSnapshot: boolean;
  /** Duration of the recovery so far, in milliseconds (display only). */
  readonly replayMillis: number;
  /**
   * Fences that may have been handed out by appends whose outcome is unknown: the counter is
   * raised to at least this, so none of them is issued again. Non-negative integer; 0 = none.
   */
  readonly burnFencesThrough: number;
}

/**
 * Fence-first acquire: like {@link AcquireLease}, but a grant is only reserved (`FenceReserved`):
 * the lease becomes active once a gate admitted the fence ({@link ActivateReservedLease}), or the
 * fence is burned ({@link BurnReservedFence}).
 */
export interface ReserveFence {
  readonly type: 'ReserveFence';
  readonly resource: string;
  readonly holderId: string;
  readonly requestId: string;
  /** Lease duration in milliseconds once active, already resolved against the coordinator's default and bounds. */
  readonly ttlMillis: number;
  /** How long the coordinator waits for a gate before burning the fence (milliseconds, positive integer). */
  readonly timeoutMillis: number;
  /** The resource's lock-delay, as for {@link AcquireLease} (milliseconds). @defaultValue 0 */
  readonly lockDelayMillis?: number | undefined;
}

/** A gate (`gateId`) durably admitted the fence reserved on `resource`: the lease becomes active. */
export interface ActivateReservedLease {
  readonly type: 'ActivateReservedLease';
  readonly resource: string;
  readonly fence: number;
  readonly gateId: string;
}

/** No gate admitted the fence reserved on `resource` in time: it is burned, never granted. */
export interface BurnReservedFence {
  readonly type: 'BurnReservedFence';
  readonly resource: string;
  readonly fence: number;
}

/** Every command {@link decide} accepts. */
export type CoordinatorCommand =
  | AcquireLease
  | RenewLease
  | ReleaseLease
  | ExpireDueLeases
  | RecordFenceRejection
  | RecordFenceRejections
  | AdmitFence
  | ReserveFence
  | ActivateReservedLease
  | BurnReservedFence
  | Checkpoint
  | TakeSnapshot
  | StartCoordinator
  | ReportFloor;

/** The field of a gate report that an {@link ImplausibleReport} names (the command's field names). */
export type ImplausibleField =
  'kind' | 'rejected.fence' | 'rejected.holderId' | 'current.fence' | 'gateWallMillis' | 'fence' | 'holderId';

/**
 * Denial of a gate report that cannot be true: it names a fence never issued for its resource
 * (above the highest fence ever granted on it), contradicts its own `kind` (a stale fence not
 * below the floor; a double grant without equal fences and different holders), puts the wall
 * clock past {@link MAX_WALL_MILLIS}, or admits the current fence for another holder.
 * No event is appended: the log keeps only reports that can be true. Not retryable as is.
 */
export interface ImplausibleReport {
  readonly ok: false;
  readonly reason: 'implausible';
  /** The offending field, as the command names it (e.g. `rejected.fence`, `gateWallMillis`). */
  readonly field: ImplausibleField;
  /** For people: what is wrong, with the values received and the coordinator's fences. */
  readonly message: string;
}

/**
 * Denial of a rejection report whose (gateId, resource, seq) was already recorded with other
 * content (kind, holders or fences; the wall time is display only and not compared). The
 * recorded report stands; a gate must never reuse a seq. Not retryable as is.
 */
export interface RejectionSeqConflict {
  readonly ok: false;
  readonly reason: 'seq-conflict';
  /** For people: the key and what was recorded under it. */
  readonly message: string;
}

/**
 * Outcome of `RecordFenceRejection`:
 * - `{ ok: true, duplicate: false }` — recorded (one `FenceRejected` event, preceded by a
 *   `RejectionsMissing` when `seq` is above the next one expected of this gate and resource:
 *   the refusals between were lost);
 * - `{ ok: true, duplicate: true }` — the same report was already recorded under (gate, resource, seq): no event;
 * - {@link RejectionSeqConflict} — that key was recorded with other content: no event;
 * - {@link ImplausibleReport} — the report cannot be true: no event.
 *
 * Idempotency keys are remembered for the last {@link REJECTION_KEYS_KEPT} reports; an older
 * key is decided as a new report.
 */
export type RecordRejectionOutcome =
  { readonly ok: true; readonly duplicate: boolean } | RejectionSeqConflict | ImplausibleReport;

/** What one item of a {@link RecordFenceRejections} batch decided: recorded, duplicate, or {@link RejectionSeqConflict}. */
export type RecordRejectionItemOutcome = { readonly ok: true; readonly duplicate: boolean } | RejectionSeqConflict;

/**
 * Outcome of `RecordFenceRejections`:
 * - `{ ok: true, items }` — one {@link RecordRejectionItemOutcome} per item, in order: the
 *   recorded ones are `FenceRejected` events (each preceded by `RejectionsMissing` before a gap),
 *   a duplicate or seq-conflict item has none, exactly as {@link RecordRejectionOutcome};
 * - {@link ImplausibleReport} with the `index` of the first item that cannot be true: the whole
 *   batch is refused, no event (all or nothing: a gate that sends one impossible report is broken,
 *   and a partly recorded batch would leave it to guess which seqs the log has).
 */
export type RecordRejectionsOutcome =
  | { readonly ok: true; readonly items: readonly RecordRejectionItemOutcome[] }
  | (ImplausibleReport & { readonly index: number });

/** Outcome of `AdmitFence`: recorded (one `FenceAdmitted` event), or {@link ImplausibleReport} with no event. */
export type AdmitFenceOutcome = { readonly ok: true } | ImplausibleReport;

/**
 * Outcome of `ReportFloor`: `raised` when the floor was above every fence the log had issued for
 * the resource (one `FenceFloorReported` event, durable before this resolves); `fenceCounter` is
 * the fence counter after it (the next grant gets more). {@link ImplausibleReport} naming `fence`
 * when the raised counter would leave fewer than `marginFences` fences to grant before
 * `Number.MAX_SAFE_INTEGER` (a floor that would exhaust the range is a broken gate): no event.
 */
export type ReportFloorOutcome =
  { readonly ok: true; readonly raised: boolean; readonly fenceCounter: number } | ImplausibleReport;
/** What a fence-first reservation says to the shell that waits for a gate. */
export interface ReservedFence {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  readonly ttlMillis: number;
}

/**
 * Outcome of `ReserveFence`: what `AcquireLease` would answer when no fence is minted (a denial,
 * or the existing grant of a retried requestId), or `ok: 'pending'` with the reserved fence:
 * `retried: false` when this command reserved it (one `FenceReserved` event), `true` when it is
 * the same holder's same requestId already pending (no event: wait for the first one's outcome).
 */
export type ReserveFenceOutcome =
  | CoordinatorAcquireOutcome
  | { readonly ok: 'pending'; readonly reservation: ReservedFence; readonly retried: boolean };

/**
 * Outcome of `ActivateReservedLease` and `BurnReservedFence`: the grant (activation), `burned`
 * (burn), or `not-pending` when that fence is no longer pending on the resource (it was
 * activated or burned before, or never reserved): no event.
 */
export type ActivateOutcome =
  AcquireOutcome | { readonly ok: false; readonly reason: 'not-pending'; readonly fence: number };
/**
 * The acquire denial of fence-first mode: no gate of the resource admitted `fence` in time, so it
 * was burned (never granted, never issued again). Retryable: a retry, even with the same
 * requestId, is a new attempt and reserves a higher fence. Answered 503 over HTTP.
 */
export interface FenceUnavailable {
  readonly ok: false;
  readonly reason: 'fence-unavailable';
  /** The burned fence. */
  readonly fence: number;
}

/**
 * Outcome of `BurnReservedFence`: the burn is the acquire's answer, {@link FenceUnavailable}
 * (one `FenceBurned` event; counted as a denial by the metrics hooks), or `'not-pending'` with no
 * event; see {@link ActivateOutcome}.
 */
export type BurnOutcome =
  FenceUnavailable | { readonly ok: false; readonly reason: 'not-pending'; readonly fence: number };

/** Outcome of `StartCoordinator`. */
export interface StartOutcome {
  readonly ok: true;
  /** The fence counter after recovery: the next grant gets `recoveredFence + 1`. */
  readonly recoveredFence: number;
  /** The latest grace deadline among carried leases (this boot's domain); the start instant when none. */
  readonly graceDeadline: Instant;
  /** Leases carried into this boot (including those with no grace left, which expire at the first sweep). */
  readonly carriedLeases: number;
}

/** The outcome type of each command type. */
export interface OutcomeByCommand {
  readonly AcquireLease: CoordinatorAcquireOutcome;
  readonly RenewLease: RenewOutcome;
  readonly ReleaseLease: ReleaseOutcome;
  readonly ExpireDueLeases: { readonly ok: true; readonly expired: number };
  readonly RecordFenceRejection: RecordRejectionOutcome;
  readonly RecordFenceRejections: RecordRejectionsOutcome;
  readonly AdmitFence: AdmitFenceOutcome;
  readonly ReserveFence: ReserveFenceOutcome;
  readonly ActivateReservedLease: ActivateOutcome;
  readonly BurnReservedFence: BurnOutcome;
  readonly Checkpoint: { readonly ok: true; readonly checkpointed: boolean };
  readonly TakeSnapshot: { readonly ok: true; readonly coversPosition: number };
  readonly StartCoordinator: StartOutcome;
  readonly ReportFloor: ReportFloorOutcome;
}

/** The outcome of command `C`. */
export type OutcomeOf<C extends CoordinatorCommand> = OutcomeByCommand[C['type']];
