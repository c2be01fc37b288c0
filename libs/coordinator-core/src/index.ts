/**
 * `@lease-fence/coordinator-core`: the event-sourced lease coordinator. The EventLog port, its
 * typed errors and its in-memory reference implementation (`createMemoryEventLog`, the one
 * memory log of the workspace), the codec (the one place records are decoded), the decider (pure decide/evolve,
 * lease rules delegated to `lease-fence`), recovery, the DurableCoordinator shell, and the
 * StandbyCoordinator that follows a log and takes it over when its writer falls silent, and the
 * CoordinatorSupervisor that keeps one coordinator serving (re-open with backoff, fence burning
 * after a failed append, standby takeover).
 *
 * @see docs/design.md § "The event-sourced coordinator"
 * @packageDocumentation
 */
/** The EventLog port: the append/read/subscribe/snapshot contract every adapter implements, and its record shapes. */
export type {
  AppendOptions,
  AppendResult,
  CoordinatorEvent,
  EventLog,
  ReadRange,
  RecordedEvent,
  Snapshot,
  Subscription,
} from './ports/event-log.js';
/** The EventLog port's typed errors, which adapters translate their vendor's errors into. */
export {
  EventLogClosedError,
  EventLogCorruptError,
  EventLogError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  type EventLogCorruptIssue,
} from './ports/event-log-errors.js';
/** The argument checks every EventLog adapter applies before touching its store. */
export { AppendFailureBarrier } from './ports/append-failure-barrier.js';
export { checkAppendOptions, checkReadRange, checkSnapshot, checkSubscribeAfter } from './ports/event-log-arguments.js';
/** A subscription built from reads: catch-up from a position, then live, for adapters without one of their own. */
export {
  createCatchUpSubscription,
  type CatchUpSource,
  type CatchUpSubscriptionOptions,
} from './ports/catch-up-subscription.js';
/** Paging helpers for adapters: reads in bounded pages, decoded in log order. */
export {
  groupIntoPages,
  readInPages,
  readPagesOf,
  readRecordPages,
  type PagedRecordSource,
} from './ports/paged-read.js';
/** The in-memory EventLog: the reference semantics of the port, for tests and the `memory` log. */
export {
  createMemoryEventLog,
  createMemoryEventLogStorage,
  type InjectedAppendFailure,
  type MemoryEventLog,
  type MemoryEventLogOptions,
  type MemoryEventLogStorage,
} from './ports/memory-event-log.js';
/** The codec: the one place records are encoded, decoded and upcast, naming the position of a bad record. */
export {
  checkEvents,
  decodeFields,
  decodeRecord,
  decodeSnapshot,
  encodeEvents,
  type EncodedEvent,
  type StoredEventRecord,
  type StoredSnapshot,
} from './codec.js';
/** The decider's commands and their outcomes. */
export {
  MAX_WALL_MILLIS,
  type AcquireLease,
  type ActivateOutcome,
  type ActivateReservedLease,
  type AdmitFence,
  type AdmitFenceOutcome,
  type Checkpoint,
  type CoordinatorAcquireOutcome,
  type CoordinatorCommand,
  type BurnOutcome,
  type BurnReservedFence,
  type ExpireDueLeases,
  type ImplausibleField,
  type ImplausibleReport,
  type FenceUnavailable,
  type LockDelayDenial,
  type Now,
  type OutcomeByCommand,
  type OutcomeOf,
  type RecordFenceRejection,
  type RecordFenceRejections,
  type RecordRejectionItemOutcome,
  type RecordRejectionOutcome,
  type RecordRejectionsOutcome,
  type RejectionReportItem,
  type RejectionSeqConflict,
  type ReleaseLease,
  type RenewLease,
  type ReportFloor,
  type ReportFloorOutcome,
  type ReserveFence,
  type ReserveFenceOutcome,
  type ReservedFence,
  type StartCoordinator,
  type StartOutcome,
  type TakeSnapshot,
} from './decider/commands.js';
/** `decide`: what a command does, as events and an outcome (pure). */
export { decide, type Decision } from './decider/decide.js';
/** `evolve`: folds one event into the state (pure). */
export { evolve } from './decider/evolve.js';
/** The decider's state, its snapshots and the views read from it. */
export {
  cloneState,
  createInitialState,
  fromSnapshot,
  gateRecoveryOf,
  leasesOf,
  rejectionContent,
  rejectionKey,
  REJECTIONS_KEPT,
  REJECTION_KEYS_KEPT,
  toSnapshot,
  type BootState,
  type CoordinatorState,
  type GateRecoveryView,
  type InitialStateOptions,
  type LeaseView,
  type Reservation,
} from './decider/state.js';
/** Options of fence-first handover: which resources, and how a gate is asked to admit a reserved fence. */
export type { FenceAdmitRequest, FenceFirstOptions } from './fence-first-options.js';
/** Lock-delay rules: per resource pattern, how long a resource stays ungranted after an unclean loss. */
export { checkLockDelayRules, lockDelayMillisFor, type LockDelayRule, type LockDelayRuleNamer } from './lock-delay.js';
/** Recovery: snapshot plus replay into a state, with the grace deadline of carried leases. */
export { replayLog, type ReplayOptions, type ReplayResult } from './recovery.js';
/** The DurableCoordinator shell: serialises commands, group commit, persist before acknowledge. */
export {
  DurableCoordinator,
  type DurableCoordinatorOptions,
  type DurableCoordinatorStatus,
  type RecoveryInfo,
} from './durable-coordinator.js';
/** The error of a coordinator that cannot take a command now (retryable). */
export { CoordinatorUnavailableError, type CoordinatorUnavailableReason } from './errors.js';
/** The StandbyCoordinator: follows a log and takes it over when its writer falls silent. */
export { StandbyCoordinator, type StandbyCoordinatorOptions, type TakeOverOptions } from './standby-coordinator.js';
/** The CoordinatorSupervisor: keeps one coordinator serving (re-open with backoff, fence burning, standby takeover). */
export {
  CoordinatorNotServingError,
  CoordinatorSupervisor,
  type CoordinatorSupervisorOptions,
  type RecoveryResult,
  type SupervisedCoordinatorOptions,
  type SupervisorEvent,
  type SupervisorObserver,
  type SupervisorState,
  type SupervisorTimer,
} from './supervisor/coordinator-supervisor.js';
