/**
 * `@lease-fence/client`: the agent SDK. Leases over the coordinator's HTTP API with idempotent
 * retries anchored at the first send ({@link LeaseFenceClient}), background renewal with an abort
 * signal ({@link LeaseKeeper}, `withLease`), and the resource side: durable gate floors with an
 * outbox of refusals ({@link openFileFloorStore}, {@link commitDurably}) drained to the
 * coordinator ({@link reportRejections}), the check of coordinator-signed grants before a
 * gate compares their fence ({@link FenceTokenVerifier}), and the gate link of fence-first
 * handover ({@link openGateLink}).
 *
 * Test doubles live in `@lease-fence/client/testing`.
 *
 * @see docs/design.md § Layout (libs/client)
 * @packageDocumentation
 */
/** The agent's client of the coordinator's HTTP API: acquire, renew, release and `withLease`. */
export {
  LeaseFenceClient,
  type LeaseFenceClientOptions,
  type LeaseRequestOptions,
  type WithLeaseOptions,
  type WithLeaseResult,
} from './lease-fence-client.js';
/** A held lease with its signed token (documented at its source). */
export type { Lease } from './signed-lease.js';
/** Background renewal of a lease, with an abort signal when it is lost. */
export { LeaseKeeper, type LeaseKeeperOptions, type LeaseKeeperState, type LeaseRenewer } from './lease-keeper.js';
/** What acquire, renew and release resolve to: outcomes as data (documented in results.ts). */
export type { AcquireResult, AcquireDenial, RenewResult, ReleaseResult, DeadOnArrival } from './results.js';
/** The SDK's typed errors: HTTP replies, an unreachable or unavailable coordinator, a lost lease, a corrupt floor store. */
export {
  CoordinatorHttpError,
  CoordinatorUnreachableError,
  CoordinatorUnavailableError,
  CoordinatorReplyError,
  LeaseLostError,
  FloorStoreCorruptError,
  type LeaseLostReason,
} from './errors.js';
/** The HTTP transport: retries with the same requestId, replies parsed with the protocol's schemas. */
export {
  CoordinatorHttp,
  coordinatorUrlProblem,
  type CoordinatorHttpOptions,
  type ParsedReply,
  type ReplySchema,
  type ReplySchemas,
  type RetryEvent,
} from './coordinator-http.js';
/** The agent link transport (`transport: 'websocket'`): many operations on one WebSocket, retried like HTTP. */
export {
  CoordinatorWebSocket,
  AgentLinkDroppedError,
  AGENT_LINK_PING_MILLIS,
  type CoordinatorWebSocketOptions,
} from './coordinator-websocket.js';
/** Retry policy: capped exponential backoff with jitter. */
export { createRetryPolicy, backoffDelayMillis, type RetryOptions, type RetryPolicy } from './retry-policy.js';
/** Injectable timers (the system's by default), bounded to what `setTimeout` can wait. */
export { systemTimers, MAX_TIMER_MILLIS, type Timers } from './timers.js';
/** A gate's client of the coordinator: reports refusals, admitted fences and floors, retrying transient failures. */
export { FenceGateClient, type FenceGateClientOptions, type RejectionBatchOutcome } from './fence-gate-client.js';
/** Reports each new fence a gate admits, so the log shows when a handover's exposure ended. */
export { reportAdmits, type AdmitReporter, type AdmitReporterOptions, type AdmitSink } from './admit-reporter.js';
/** Periodic reports of a gate's floor to the coordinator. */
export {
  reportFloors,
  type FloorReporter,
  type FloorReporterOptions,
  type FloorSink,
  type FloorSource,
} from './floor-reporter.js';
/** Drains a gate's outbox of refusals to the coordinator, in order, acknowledging each. */
export {
  reportRejections,
  type RejectionReporter,
  type RejectionReporterOptions,
  type RejectionSink,
  isFinalRefusal,
} from './rejection-reporter.js';
/** Durable gate floors: the store port, its outbox of refusals, and `commitDurably` around a FenceGate. */
export {
  commitDurably,
  gateOptionsFrom,
  gateStateOf,
  reconcileGateState,
  type CommitDurablyOptions,
  type CoordinatorGateView,
  type FloorStore,
  type GateState,
  type PendingRejection,
  type RejectionOutbox,
} from './floor-store.js';
/** The file floor store: a gate's floor and outbox in one atomically replaced JSON file. */
export { openFileFloorStore, FileFloorStore, type FileFloorStoreOptions } from './file-floor-store.js';
/** The gate link of fence-first handover: a gate's WebSocket to the coordinator, admitting reserved fences. */
export {
  openGateLink,
  GATE_LINK_PING_MILLIS,
  type GateLink,
  type GateLinkEvent,
  type GateLinkOptions,
  type DurableAdmitter,
  type GuardedFenceGate,
  type GuardedResource,
} from './gate-link.js';
/** The check of coordinator-signed grants before a gate compares their fence. */
export {
  FenceTokenVerifier,
  commitVerified,
  commitDurablyVerified,
  InvalidFenceTokenError,
  SigningKeysUnavailableError,
  INVALID_FENCE_TOKEN_REASONS,
  type FenceTokenVerifierOptions,
  type FenceTokenVerifierStats,
  type InvalidFenceTokenReason,
  type SigningKeysSource,
} from './fence-token-verifier.js';
/** One process per data directory or file: a pid lock that a crashed owner frees at once (documented at its source). */
export {
  acquirePidLock,
  PidLockedError,
  systemProbe,
  type PidLock,
  type PidLockOptions,
  type PidLockOwner,
  type ProcessProbe,
} from './pid-lock.js';
