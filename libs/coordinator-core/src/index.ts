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
 */
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
export {
  EventLogClosedError,
  EventLogCorruptError,
  EventLogError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  type EventLogCorruptIssue,
} from './ports/event-log-errors.js';
export { checkAppendOptions, checkReadRange, checkSnapshot, checkSubscribeAfter } from './ports/event-log-arguments.js';
export {
  createCatchUpSubscription,
  type CatchUpSource,
  type CatchUpSubscriptionOptions,
} from './ports/catch-up-subscription.js';
export {
  groupIntoPages,
  readInPages,
  readPagesOf,
  readRecordPages,
  type PagedRecordSource,
} from './ports/paged-read.js';
export {
  createMemoryEventLog,
  createMemoryEventLogStorage,
  type InjectedAppendFailure,
  type MemoryEventLog,
  type MemoryEventLogOptions,
  type MemoryEventLogStorage,
} from './ports/memory-event-log.js';
export {
  checkEvents,
  decodeRecord,
  decodeSnapshot,
  encodeEvents,
  type EncodedEvent,
  type StoredEventRecord,
  type StoredSnapshot,
} from './codec.js';
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
  type RecordRejectionOutcome,
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
export { decide, type Decision } from './decider/decide.js';
export { evolve } from './decider/evolve.js';
export {
  cloneState,
  createInitialState,
  fromSnapshot,
  leasesOf,
  rejectionContent,
  rejectionKey,
  REJECTIONS_KEPT,
  REJECTION_KEYS_KEPT,
  toSnapshot,
  type BootState,
  type CoordinatorState,
  type InitialStateOptions,
  type LeaseView,
  type Reservation,
} from './decider/state.js';
export type { FenceAdmitRequest, FenceFirstOptions } from './fence-first-options.js';
export { checkLockDelayRules, lockDelayMillisFor, type LockDelayRule, type LockDelayRuleNamer } from './lock-delay.js';
export { replayLog, type ReplayOptions, type ReplayResult } from './recovery.js';
export {
  DurableCoordinator,
  type DurableCoordinatorOptions,
  type DurableCoordinatorStatus,
  type RecoveryInfo,
} from './durable-coordinator.js';
export { CoordinatorUnavailableError, type CoordinatorUnavailableReason } from './errors.js';
export { StandbyCoordinator, type StandbyCoordinatorOptions, type TakeOverOptions } from './standby-coordinator.js';
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
