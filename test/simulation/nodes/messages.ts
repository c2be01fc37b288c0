/**
 * Messages between the simulated nodes, and the context every node shares. Requests carry
 * their reply path as a callback; replies cross the network like requests (and may be lost,
 * duplicated or late). Grants cross it as JSON, as over HTTP.
 */
import type { RecordRejectionOutcome } from '@lease-fence/coordinator-core';
import type { CoordinatorAcquireOutcome } from '@lease-fence/coordinator-core';
import type { AcquireRequest, FenceToken, ReleaseOutcome, RenewalRequest, RenewOutcome } from 'lease-fence';
import type { InvariantChecker } from '../invariants.js';
import type { Network } from '../world/network.js';
import type { VirtualScheduler } from '../world/scheduler.js';
import type { Trace } from '../world/trace.js';
import type { RejectionReport } from './coordinator-service.js';

/** A request to the coordinator. */
export type CoordinatorRequest =
  | { readonly type: 'acquire'; readonly request: AcquireRequest }
  | { readonly type: 'renew'; readonly request: RenewalRequest }
  | { readonly type: 'release'; readonly token: FenceToken }
  | { readonly type: 'report'; readonly report: RejectionReport };

/** The coordinator's answer; `unavailable` while it recovers. */
export type CoordinatorResponse =
  | { readonly type: 'acquire'; readonly outcome: CoordinatorAcquireOutcome }
  | { readonly type: 'renew'; readonly outcome: RenewOutcome }
  | { readonly type: 'release'; readonly outcome: ReleaseOutcome }
  | { readonly type: 'report'; readonly outcome: RecordRejectionOutcome }
  | { readonly type: 'unavailable' };

/** A request to a resource: a write under a fence, or a handover push of a new fence. */
export type ResourceRequest =
  | { readonly type: 'write'; readonly token: FenceToken; readonly writeId: string }
  | { readonly type: 'admit'; readonly token: FenceToken };

/** A resource's answer. */
export type ResourceResponse =
  | { readonly type: 'applied'; readonly writeId: string }
  | { readonly type: 'admitted' }
  | { readonly type: 'refused'; readonly code: string };

/** What every node of one run shares. */
export interface WorldContext {
  readonly scheduler: VirtualScheduler;
  readonly network: Network;
  readonly trace: Trace;
  readonly checker: InvariantChecker;
  /** Asynchronous work made progress: the world keeps settling promises before moving time. */
  progress(): void;
  /** The run's horizon passed: no new work, no new faults, only what is in flight finishes. */
  readonly draining: boolean;
  /** Records a failure of the harness itself (not a violation): the run is reported as broken. */
  harnessError(error: unknown): void;
}

/** Short text of a coordinator response for the trace. */
export function describeResponse(response: CoordinatorResponse): string {
  switch (response.type) {
    case 'unavailable':
      return 'unavailable (recovering)';
    case 'report':
      if (!response.outcome.ok)
        return `rejection report denied: ${response.outcome.reason} (${response.outcome.message})`;
      return response.outcome.duplicate ? 'rejection already recorded' : 'rejection recorded';
    case 'release':
      return response.outcome.ok ? 'released' : `release denied: ${response.outcome.reason}`;
    case 'acquire':
    case 'renew': {
      const { outcome } = response;
      if (outcome.ok)
        return `${response.type === 'acquire' ? 'granted' : 'renewed'} ${outcome.grant.resource} fence ${outcome.grant.fence} (req ${outcome.grant.requestId})`;
      if (outcome.reason === 'held') return `denied: held by ${outcome.heldBy}, retry in ${outcome.retryAfterMillis}ms`;
      if (outcome.reason === 'already-held') return `denied: already held (fence ${outcome.fence})`;
      if (outcome.reason === 'expired' && 'fence' in outcome) return `denied: expired (fence ${outcome.fence})`;
      return `denied: ${outcome.reason}`;
    }
  }
}
