import type { Clock } from '../time/clock.js';
import {
  DEFAULT_REPLAY_CACHE_SIZE,
  MAX_TTL_MILLIS,
  describeValue,
  requireFence,
  requireId,
  requireObject,
  requireTtlMillis,
  type TtlBounds,
} from '../validate.js';
import { decideCheckedAcquire, decideCheckedRelease, decideCheckedRenew, decideExpiry } from './lease-rules.js';
import { LeaseTable } from './lease-table.js';
import type {
  AcquireOutcome,
  FenceToken,
  LeaseDecision,
  LeaseRecord,
  ReleaseOutcome,
  RenewOutcome,
} from './outcomes.js';

/** Options of {@link LeaseCoordinator}. @see docs/design.md § "The library's rules" (TTLs are bounded) */
export interface LeaseCoordinatorOptions {
  /** The coordinator's clock; every instant it hands out is in `clock.domain`. Use a monotonic clock. */
  readonly clock: Clock;
  /** Default lease duration in milliseconds: positive integer, at most `maxTtlMillis`. */
  readonly ttlMillis: number;
  /**
   * Largest duration a request may ask for, in milliseconds: positive integer, at most
   * {@link MAX_TTL_MILLIS} (2^31 - 1, so every timer stays below 2^31 ms).
   * @defaultValue {@link MAX_TTL_MILLIS}
   */
  readonly maxTtlMillis?: number;
  /**
   * Fences already issued (restore it after a restart): the first grant gets `startFence + 1`.
   * Non-negative safe integer.
   * @defaultValue 0
   */
  readonly startFence?: number;
  /** Grants remembered for idempotent retries: this many acquisitions, and as many renewals (a retried renewal is answered without renewing again); each kind evicts its oldest first. Non-negative integer. @defaultValue 1024 */
  readonly replayCacheSize?: number;
}

/** An acquire request as the coordinator receives it; a client's {@link AcquireRequest} fits. @see docs/design.md § "The library's rules" (Retries are idempotent) */
export interface CoordinatorAcquireRequest {
  readonly resource: string;
  readonly holderId: string;
  /** Unique per acquisition; a retry of the same acquisition reuses it. */
  readonly requestId: string;
  /** Requested duration in milliseconds; absent = the coordinator's `ttlMillis`. */
  readonly ttlMillis?: number | undefined;
}

/** A renewal request as the coordinator receives it; a client's {@link RenewalRequest} fits. @see docs/design.md § "The library's rules" (Renewal keeps the fence) */
export interface CoordinatorRenewRequest {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  /** New duration in milliseconds; absent = the lease's current `ttlMillis`. */
  readonly ttlMillis?: number | undefined;
}

/**
 * An in-memory lease coordinator: mints fences, grants, renews and releases leases on its own
 * clock. Each call validates its input, reads the clock exactly once, decides with the shared
 * rules ({@link decideAcquire} …) and applies the changes to its {@link LeaseTable}.
 * Outcomes are plain data; denials are never thrown.
 *
 * Nothing here is durable: persist {@link LeaseCoordinator.issuedFence} and pass it back as
 * `startFence` after a restart, or use the event-sourced coordinator.
 *
 * @see docs/design.md § "The library's rules"
 * @example
 * ```ts
 * const coordinator = new LeaseCoordinator({ clock: createMonotonicClock('coordinator'), ttlMillis: 30_000 });
 * const outcome = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-a', requestId: 'r-1' });
 * ```
 */
export class LeaseCoordinator {
  private readonly clock: Clock;
  private readonly table: LeaseTable;
  /** Default lease duration in milliseconds. */
  readonly ttlMillis: number;
  /** Largest duration a request may ask for, in milliseconds. */
  readonly maxTtlMillis: number;
  /** The TTL rule's bounds for requests: `[1, maxTtlMillis]`. */
  private readonly ttlBounds: TtlBounds;

  /**
   * @throws TypeError if `clock` is not a Clock; TypeError / RangeError if `ttlMillis`,
   *   `maxTtlMillis`, `startFence` or `replayCacheSize` is out of range (never a silent default).
   */
  constructor(options: LeaseCoordinatorOptions) {
    const api = 'LeaseCoordinator';
    requireObject(api, 'options', options);
    const { clock } = options;
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
      throw new TypeError(`${api}: clock must be a Clock (an object with now()), got ${describeValue(clock)}`);
    }
    const maxTtlMillis = options.maxTtlMillis ?? MAX_TTL_MILLIS;
    requireTtlMillis(api, 'maxTtlMillis', maxTtlMillis);
    this.ttlBounds = { minTtlMillis: 1, maxTtlMillis };
    requireTtlMillis(api, 'ttlMillis', options.ttlMillis, this.ttlBounds);
    this.clock = clock;
    this.ttlMillis = options.ttlMillis;
    this.maxTtlMillis = maxTtlMillis;
    this.table = new LeaseTable({
      startFence: options.startFence ?? 0,
      replayCacheSize: options.replayCacheSize ?? DEFAULT_REPLAY_CACHE_SIZE,
    });
  }

  /** The highest fence ever issued or burned (persist it to resume after a restart). */
  get issuedFence(): number {
    return this.table.issuedFence;
  }

  /**
   * Acquires `resource` for `holderId`. Rules: {@link decideAcquire}.
   * @param request - `resource`, `holderId`, `requestId` (non-empty); optional `ttlMillis`
   *   (ms, integer in [1, maxTtlMillis]; default the coordinator's `ttlMillis`).
   * @returns `{ ok: true, grant }`, or a denial: `'held'`, `'already-held'`, `'expired'` (replayed requestId).
   * @throws TypeError / RangeError on a malformed request, before the clock is read; nothing changes.
   * @throws {@link ProtocolMisuseError} if the requestId was used by this holder for another resource.
   * @see docs/design.md § "The library's rules" (Fence = generation of ownership; Retries are idempotent)
   */
  acquire(request: CoordinatorAcquireRequest): AcquireOutcome {
    const api = 'LeaseCoordinator.acquire';
    requireObject(api, 'request', request);
    requireId(api, 'request.resource', request.resource);
    requireId(api, 'request.holderId', request.holderId);
    requireId(api, 'request.requestId', request.requestId);
    const ttlMillis = request.ttlMillis ?? this.ttlMillis;
    requireTtlMillis(api, 'request.ttlMillis', ttlMillis, this.ttlBounds);
    const command = { resource: request.resource, holderId: request.holderId, requestId: request.requestId, ttlMillis };
    return this.run(decideCheckedAcquire(this.table, command, this.clock.now()));
  }

  /**
   * Renews the lease with `fence`: same fence, expiry `now + ttlMillis`. A retry (same holder and
   * requestId, same lease) is answered with the lease as it stands and renews nothing. Rules: {@link decideRenew}.
   * @returns `{ ok: true, grant }`, or `'expired'` (that generation has ended: never resurrected) /
   *   `'not-holder'` (another holder's fence, or never issued for this resource).
   * @throws TypeError / RangeError on a malformed request, before the clock is read.
   * @see docs/design.md § "The library's rules" (Renewal keeps the fence)
   */
  renew(request: CoordinatorRenewRequest): RenewOutcome {
    const api = 'LeaseCoordinator.renew';
    requireObject(api, 'request', request);
    requireId(api, 'request.resource', request.resource);
    requireId(api, 'request.holderId', request.holderId);
    requireId(api, 'request.requestId', request.requestId);
    requireFence(api, 'request.fence', request.fence);
    if (request.ttlMillis !== undefined) requireTtlMillis(api, 'request.ttlMillis', request.ttlMillis, this.ttlBounds);
    const command = {
      resource: request.resource,
      holderId: request.holderId,
      fence: request.fence,
      requestId: request.requestId,
      ttlMillis: request.ttlMillis,
    };
    return this.run(decideCheckedRenew(this.table, command, this.clock.now()));
  }

  /**
   * Releases the lease named by `token`, so the next acquire mints a higher fence at once.
   * Rules: {@link decideRelease} (the token is judged as a renewal's is).
   * @returns `{ ok: true }`, or `'expired'` (that generation of the resource has ended: past its
   *   expiry, released or superseded) / `'not-holder'` (another holder's fence, or never issued for this resource).
   * @throws TypeError / RangeError on a malformed token, before the clock is read.
   */
  release(token: FenceToken): ReleaseOutcome {
    const api = 'LeaseCoordinator.release';
    requireObject(api, 'token', token);
    requireId(api, 'token.resource', token.resource);
    requireId(api, 'token.holderId', token.holderId);
    requireFence(api, 'token.fence', token.fence);
    return this.run(decideCheckedRelease(this.table, token, this.clock.now()));
  }

  /** Removes every lease past its expiry (reads the clock once). @returns how many expired. */
  expireDue(): number {
    return this.run(decideExpiry(this.table, this.clock.now())).expired;
  }

  /**
   * The current generation on `resource`, if any. Does not read the clock, so the lease may be
   * past its expiry and not yet swept; its instants are in the coordinator's domain.
   */
  holder(resource: string): LeaseRecord | undefined {
    return this.table.lease(resource);
  }

  /** Every current generation (possibly past expiry, not yet swept). */
  leases(): readonly LeaseRecord[] {
    return [...this.table.leases()];
  }

  private run<O>(decision: LeaseDecision<O>): O {
    for (const change of decision.changes) this.table.apply(change);
    return decision.outcome;
  }
}
