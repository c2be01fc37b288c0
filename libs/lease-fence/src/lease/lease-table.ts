import { ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import {
  DEFAULT_REPLAY_CACHE_SIZE,
  describeValue,
  requireCount,
  requireFence,
  requireId,
  requireObject,
  requireTtlMillis,
} from '../validate.js';
import type { LeaseChange, LeaseRecord } from './outcomes.js';
import { ReplayCache } from './replay-cache.js';

/** Options of {@link LeaseTable}. @see DESIGN.md § "The library's rules" (Fence; Retries are idempotent) */
export interface LeaseTableOptions {
  /**
   * Fences already issued before this table: the first grant gets `startFence + 1`. Restore it
   * from durable storage after a restart so fences never go backwards. Non-negative safe integer.
   * @defaultValue 0
   */
  readonly startFence?: number;
  /**
   * Acquire grants remembered for idempotent retries. Non-negative integer; 0 disables replay.
   * @defaultValue 1024
   */
  readonly replayCacheSize?: number;
}

/** JSON form of an {@link Instant}: milliseconds on the clock named by `domain`. */
export interface InstantJson {
  readonly millis: number;
  readonly domain: string;
}

/** JSON form of a {@link LeaseRecord}; instants as {@link InstantJson}. */
export interface LeaseRecordJson {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly ttlMillis: number;
  readonly requestId: string;
  readonly grantedAt: InstantJson;
  readonly expiresAt: InstantJson;
}

/**
 * Plain-JSON snapshot of a {@link LeaseTable} (`format: 1`): the fence counter, the current
 * leases, and the replay cache oldest first. Instants are `{ millis, domain }`.
 * @see DESIGN.md § "The event-sourced coordinator" (Recovery: replay from the latest snapshot)
 */
export interface LeaseTableSnapshot {
  readonly format: 1;
  readonly issuedFence: number;
  readonly replayCacheSize: number;
  readonly leases: readonly LeaseRecordJson[];
  readonly replayCache: readonly { readonly holderId: string; readonly requestId: string; readonly resource: string; readonly fence: number }[];
}

const freezeRecord = (record: LeaseRecord): LeaseRecord => Object.freeze({ ...record });

function requireInstant(api: string, field: string, value: unknown): asserts value is Instant {
  if (!(value instanceof Instant)) throw new TypeError(`${api}: ${field} must be an Instant, got ${describeValue(value)}`);
}

/**
 * The coordinator's memory: the fence counter, the current generation per resource, and the
 * replay cache. Mutable, but only through {@link LeaseTable.apply} (and the recovery helpers
 * {@link LeaseTable.burnFence} and {@link LeaseTable.reanchor}); the decide functions read it and
 * never mutate it. Every operation is O(1) except iteration, `clone` and `toJSON`.
 *
 * Owned by one writer: {@link LeaseCoordinator} in memory, or the event-sourced coordinator's
 * state (where `apply` is `evolve`).
 *
 * @see DESIGN.md § "The library's rules"; § "The event-sourced coordinator" (decide/evolve, recovery)
 */
export class LeaseTable {
  private readonly current = new Map<string, LeaseRecord>();
  private readonly replay: ReplayCache;
  private issued: number;

  /**
   * @param options - `startFence` (default 0) and `replayCacheSize` (default 1024).
   * @throws TypeError / RangeError if `startFence` or `replayCacheSize` is not a non-negative safe integer.
   */
  constructor(options: LeaseTableOptions = {}) {
    const startFence = options.startFence ?? 0;
    const replayCacheSize = options.replayCacheSize ?? DEFAULT_REPLAY_CACHE_SIZE;
    requireCount('LeaseTable', 'startFence', startFence);
    requireCount('LeaseTable', 'replayCacheSize', replayCacheSize);
    this.issued = startFence;
    this.replay = new ReplayCache(replayCacheSize);
  }

  /** The highest fence ever issued or burned; the next grant gets `issuedFence + 1`. */
  get issuedFence(): number {
    return this.issued;
  }

  /** How many acquire grants the replay cache keeps. */
  get replayCacheSize(): number {
    return this.replay.capacity;
  }

  /**
   * The current generation on `resource`, if any. It may be past its expiry but not yet swept
   * (an `'expired'` change removes it); compare `expiresAt` with the coordinator's `now`.
   */
  lease(resource: string): LeaseRecord | undefined {
    return this.current.get(resource);
  }

  /** Every current generation, in the order the resources were first granted. */
  leases(): IterableIterator<LeaseRecord> {
    return this.current.values();
  }

  /** The grant remembered for this holder's acquire request, if still in the replay cache. */
  replayed(holderId: string, requestId: string): { readonly resource: string; readonly fence: number } | undefined {
    return this.replay.get(holderId, requestId);
  }

  /**
   * Folds one decided change into the table: the only mutator for lease changes (the event-sourced
   * coordinator's `evolve` calls it, live and during replay).
   * - `granted`: the lease becomes current, `issuedFence` rises to its fence, the grant enters the replay cache.
   * - `renewed`: the current lease with that fence and holder gets the new `expiresAt` and `ttlMillis`.
   * - `released` / `expired`: the current lease with that fence and holder is removed.
   * @throws {@link ProtocolMisuseError} if the change does not fit the table (a renewal, release or
   *   expiry of a lease that is not current): the log and the table disagree. Nothing is changed.
   * @throws TypeError for an unknown change type, or instants that are not {@link Instant}s.
   */
  apply(change: LeaseChange): void {
    switch (change.type) {
      case 'granted': {
        const lease = change.lease;
        requireInstant('LeaseTable.apply', 'lease.grantedAt', lease.grantedAt);
        requireInstant('LeaseTable.apply', 'lease.expiresAt', lease.expiresAt);
        this.current.set(lease.resource, freezeRecord(lease));
        if (lease.fence > this.issued) this.issued = lease.fence;
        this.replay.remember({ holderId: lease.holderId, requestId: lease.requestId, resource: lease.resource, fence: lease.fence });
        return;
      }
      case 'renewed': {
        requireInstant('LeaseTable.apply', 'expiresAt', change.expiresAt);
        const lease = this.matching(change);
        this.current.set(lease.resource, freezeRecord({ ...lease, ttlMillis: change.ttlMillis, expiresAt: change.expiresAt }));
        return;
      }
      case 'released':
      case 'expired':
        this.matching(change);
        this.current.delete(change.resource);
        return;
      default:
        throw new TypeError(`LeaseTable.apply: unknown change type ${describeValue((change as { type?: unknown }).type)}`);
    }
  }

  /**
   * Raises the fence counter to at least `fence` without granting anything: for a fence that
   * may have been handed out (an append whose outcome is unknown) or a recovered counter.
   * @throws TypeError / RangeError unless `fence` is a non-negative safe integer.
   */
  burnFence(fence: number): void {
    requireCount('LeaseTable.burnFence', 'fence', fence);
    if (fence > this.issued) this.issued = fence;
  }

  /**
   * Moves a carried lease into a new clock domain after recovery: its old instants belong to a
   * dead boot and can no longer be compared. Fence, holder and ttl are kept.
   * @param resource - The resource whose current lease is re-anchored.
   * @param expiresAt - The new expiry (the grace deadline), in the new domain.
   * @param grantedAt - The new grant instant; defaults to `expiresAt - ttlMillis`.
   * @throws {@link ProtocolMisuseError} if there is no current lease on `resource`.
   * @see DESIGN.md § "The event-sourced coordinator" (Recovery)
   */
  reanchor(resource: string, expiresAt: Instant, grantedAt?: Instant): void {
    const lease = this.current.get(resource);
    if (lease === undefined) {
      throw new ProtocolMisuseError(`LeaseTable.reanchor: no current lease on resource ${JSON.stringify(resource)}`);
    }
    requireInstant('LeaseTable.reanchor', 'expiresAt', expiresAt);
    if (grantedAt !== undefined) requireInstant('LeaseTable.reanchor', 'grantedAt', grantedAt);
    const start = grantedAt ?? expiresAt.plus(-lease.ttlMillis);
    if (start.domain !== expiresAt.domain) start.minus(expiresAt); // throws ClockDomainError
    this.current.set(resource, freezeRecord({ ...lease, grantedAt: start, expiresAt }));
  }

  /** A deep copy: applying changes to one never affects the other. */
  clone(): LeaseTable {
    return LeaseTable.fromJSON(this.toJSON());
  }

  /** Plain-JSON snapshot; {@link LeaseTable.fromJSON} restores an equal table. */
  toJSON(): LeaseTableSnapshot {
    return {
      format: 1,
      issuedFence: this.issued,
      replayCacheSize: this.replay.capacity,
      leases: [...this.current.values()].map((lease) => ({
        resource: lease.resource,
        holderId: lease.holderId,
        fence: lease.fence,
        ttlMillis: lease.ttlMillis,
        requestId: lease.requestId,
        grantedAt: lease.grantedAt.toJSON(),
        expiresAt: lease.expiresAt.toJSON(),
      })),
      replayCache: [...this.replay.values()].map((entry) => ({ ...entry })),
    };
  }

  /**
   * Restores a table from {@link LeaseTable.toJSON}'s output (after a JSON round trip too).
   * @throws TypeError / RangeError naming the field if the snapshot is malformed.
   */
  static fromJSON(snapshot: LeaseTableSnapshot): LeaseTable {
    const api = 'LeaseTable.fromJSON';
    requireObject(api, 'snapshot', snapshot);
    if (snapshot.format !== 1) throw new TypeError(`${api}: format must be 1, got ${describeValue(snapshot.format)}`);
    if (!Array.isArray(snapshot.leases)) throw new TypeError(`${api}: leases must be an array, got ${describeValue(snapshot.leases)}`);
    if (!Array.isArray(snapshot.replayCache)) {
      throw new TypeError(`${api}: replayCache must be an array, got ${describeValue(snapshot.replayCache)}`);
    }
    const table = new LeaseTable({ startFence: snapshot.issuedFence, replayCacheSize: snapshot.replayCacheSize });
    for (const [index, entry] of (snapshot.replayCache as LeaseTableSnapshot['replayCache']).entries()) {
      const at = `replayCache[${index}]`;
      requireObject(api, at, entry);
      requireId(api, `${at}.holderId`, entry.holderId);
      requireId(api, `${at}.requestId`, entry.requestId);
      requireId(api, `${at}.resource`, entry.resource);
      requireFence(api, `${at}.fence`, entry.fence);
      table.replay.remember(entry);
    }
    for (const [index, lease] of (snapshot.leases as LeaseTableSnapshot['leases']).entries()) {
      const at = `leases[${index}]`;
      requireObject(api, at, lease);
      requireId(api, `${at}.resource`, lease.resource);
      requireId(api, `${at}.holderId`, lease.holderId);
      requireId(api, `${at}.requestId`, lease.requestId);
      requireFence(api, `${at}.fence`, lease.fence);
      requireTtlMillis(api, `${at}.ttlMillis`, lease.ttlMillis);
      requireObject(api, `${at}.grantedAt`, lease.grantedAt);
      requireObject(api, `${at}.expiresAt`, lease.expiresAt);
      table.current.set(
        lease.resource,
        freezeRecord({
          resource: lease.resource,
          holderId: lease.holderId,
          fence: lease.fence,
          ttlMillis: lease.ttlMillis,
          requestId: lease.requestId,
          grantedAt: Instant.of(lease.grantedAt.millis, lease.grantedAt.domain),
          expiresAt: Instant.of(lease.expiresAt.millis, lease.expiresAt.domain),
        }),
      );
      if (lease.fence > table.issued) table.issued = lease.fence;
    }
    return table;
  }

  /** The current lease a renewed/released/expired change refers to, or a ProtocolMisuseError. */
  private matching(change: { readonly type: string; readonly resource: string; readonly holderId: string; readonly fence: number }): LeaseRecord {
    const lease = this.current.get(change.resource);
    if (lease === undefined || lease.fence !== change.fence || lease.holderId !== change.holderId) {
      throw new ProtocolMisuseError(
        `LeaseTable.apply: ${change.type} change for resource ${JSON.stringify(change.resource)}, fence ${change.fence}, `
          + `holder ${JSON.stringify(change.holderId)} does not match the current lease `
          + (lease === undefined ? '(none)' : `(fence ${lease.fence}, holder ${JSON.stringify(lease.holderId)})`),
      );
    }
    return lease;
  }
}
