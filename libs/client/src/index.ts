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
export {
  LeaseFenceClient,
  type LeaseFenceClientOptions,
  type LeaseRequestOptions,
  type WithLeaseOptions,
  type WithLeaseResult,
} from './lease-fence-client.js';
export type { Lease } from './signed-lease.js';
export { LeaseKeeper, type LeaseKeeperOptions, type LeaseKeeperState, type LeaseRenewer } from './lease-keeper.js';
/** What acquire, renew and release resolve to: outcomes as data (documented in results.ts). */
export type { AcquireResult, AcquireDenial, RenewResult, ReleaseResult, DeadOnArrival } from './results.js';
export {
  CoordinatorHttpError,
  CoordinatorUnreachableError,
  CoordinatorUnavailableError,
  CoordinatorReplyError,
  LeaseLostError,
  FloorStoreCorruptError,
  type LeaseLostReason,
} from './errors.js';
export {
  CoordinatorHttp,
  type CoordinatorHttpOptions,
  type ParsedReply,
  type ReplySchema,
  type ReplySchemas,
  type RetryEvent,
} from './coordinator-http.js';
export { createRetryPolicy, backoffDelayMillis, type RetryOptions, type RetryPolicy } from './retry-policy.js';
export { systemTimers, MAX_TIMER_MILLIS, type Timers } from './timers.js';
export { FenceGateClient, type FenceGateClientOptions } from './fence-gate-client.js';
export {
  reportFloors,
  type FloorReporter,
  type FloorReporterOptions,
  type FloorSink,
  type FloorSource,
} from './floor-reporter.js';
export {
  reportRejections,
  type RejectionReporter,
  type RejectionReporterOptions,
  type RejectionSink,
  isFinalRefusal,
} from './rejection-reporter.js';
export {
  commitDurably,
  gateOptionsFrom,
  gateStateOf,
  type CommitDurablyOptions,
  type FloorStore,
  type GateState,
  type PendingRejection,
  type RejectionOutbox,
} from './floor-store.js';
export { openFileFloorStore, FileFloorStore, type FileFloorStoreOptions } from './file-floor-store.js';
export {
  openGateLink,
  type GateLink,
  type GateLinkEvent,
  type GateLinkOptions,
  type GuardedResource,
} from './gate-link.js';
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
