/**
 * `lease-fence`: leases with fencing tokens. Clocks whose readings carry their domain, a
 * coordinator that mints fences, a client whose deadline is anchored at send time, and a
 * {@link FenceGate} that refuses stale writes at the resource. Pure TypeScript, no I/O.
 *
 * This file is the whole public API.
 *
 * @see docs/design.md § "The library's rules"
 * @packageDocumentation
 */
export { Instant } from './time/instant.js';
/** A clock with a domain (documented at its source). */
export type { Clock } from './time/clock.js';
export { createMonotonicClock } from './time/monotonic-clock.js';
export { createManualClock, type ManualClock, type ManualClockOptions } from './time/manual-clock.js';
export { guardClock } from './time/guard-clock.js';

export {
  LeaseFenceError,
  ClockDomainError,
  ClockReadingError,
  ProtocolMisuseError,
  StaleFenceError,
  DoubleGrantError,
} from './errors.js';

export {
  MAX_TTL_MILLIS,
  DEFAULT_REPLAY_CACHE_SIZE,
  MAX_ID_LENGTH,
  ID_PATTERN,
  ID_PROBLEMS,
  describeValue,
  idProblem,
  isId,
  requireId,
  isTtlMillis,
  requireTtlMillis,
  DEFAULT_TTL_BOUNDS,
  type TtlBounds,
  requireFence,
  requireObject,
  isIntegerInRange,
  requireInteger,
  requireCount,
  type IntegerRange,
} from './validate.js';
export { BoundedMap } from './collections/bounded-map.js';
/** The rule's shapes: tokens, records, grants, outcomes and changes (documented in lease/outcomes.ts). */
export type {
  FenceToken,
  LeaseRecord,
  Grant,
  AcquireOutcome,
  RenewOutcome,
  ReleaseOutcome,
  LeaseChange,
  LeaseDecision,
  AcquireCommand,
  RenewCommand,
  LeaseDenialReason,
} from './lease/outcomes.js';
export { LEASE_DENIAL_REASONS } from './lease/outcomes.js';
export {
  LeaseTable,
  type LeaseTableOptions,
  type LeaseTableSnapshot,
  type LeaseRecordJson,
  type ResourceFenceJson,
  type ReplayEntryJson,
  type InstantJson,
  type LeaseGrantMillis,
  type LeaseRenewalMillis,
} from './lease/lease-table.js';
export { decideAcquire, decideRenew, decideRelease, decideExpiry, wasFenceIssued } from './lease/lease-rules.js';
export {
  LeaseCoordinator,
  type LeaseCoordinatorOptions,
  type CoordinatorAcquireRequest,
  type CoordinatorRenewRequest,
} from './lease/lease-coordinator.js';
export {
  LeaseClient,
  type LeaseClientOptions,
  type AcquireRequest,
  type RenewalRequest,
} from './lease/lease-client.js';
/** A holder's lease, anchored at its send instant (documented at its source). */
export type { Lease } from './lease/lease.js';

export { FenceGate, type FenceGateOptions } from './fence/fence-gate.js';
/** A gate's floor and the record of a refused write (documented at their source). */
export type { GateFloor, RejectionKind, RejectionRecord } from './fence/rejection.js';
export { UNKNOWN_FLOOR_HOLDER } from './fence/rejection.js';
