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
import { ReleaseCache } from './release-cache.js';
import { ReplayCache } from './replay-cache.js';

/** Options of {@link LeaseTable}. @see docs/design.md § "The library's rules" (Fence; Retries are idempotent) */
export interface LeaseTableOptions {
  /**
   * Fences already issued before this table: the first grant gets `startFence + 1`. Restore it
   * from durable storage after a restart so fences never go backwards. Non-negative safe integer.
   * @defaultValue 0
   */
  readonly startFence?: number;
  /**
   * Requests remembered for idempotent retries: this many acquisitions, as many renewals and as
   * many releases, each kind evicting its oldest first. Non-negative integer; 0 disables replay.
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

/** One entry of {@link LeaseTableSnapshot.highestFences}: the highest fence ever granted on `resource`. */
export interface ResourceFenceJson {
  readonly resource: string;
  readonly fence: number;
}

/** One remembered grant of a snapshot's replay caches: the request and the lease it answered. */
export interface ReplayEntryJson {
  readonly holderId: string;
  readonly requestId: string;
  readonly resource: string;
  readonly fence: number;
}

/** One remembered release of a snapshot: the generation (resource and fence) and the holder that released it. */
export interface ReleaseEntryJson {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}

/**
 * Plain-JSON snapshot of a {@link LeaseTable} (`format: 1`): the fence counter, the current
 * leases, the replay caches (acquisitions, renewals, releases) oldest first, and the highest fence ever
 * granted per resource.
 * Instants are `{ millis, domain }`.
 * @see docs/design.md § "The event-sourced coordinator" (Recovery: replay from the latest snapshot)
 */
export interface LeaseTableSnapshot {
  readonly format: 1;
  readonly issuedFence: number;
  readonly replayCacheSize: number;
  readonly leases: readonly LeaseRecordJson[];
  readonly replayCache: readonly ReplayEntryJson[];
  /**
   * The renewals remembered for idempotent retries, oldest first ({@link LeaseTable.replayedRenewal}).
   * Always written by {@link LeaseTable.toJSON}. Optional only for snapshots written before
   * renewals were remembered: {@link LeaseTable.fromJSON} then starts with none, so a retry of
   * an earlier renewal would renew again. A caller that can rebuild the table exactly
   * (replaying a log) should prefer that when the field is absent.
   */
  readonly renewalReplayCache?: readonly ReplayEntryJson[];
  /**
   * The releases remembered for idempotent retries, oldest first ({@link LeaseTable.releasedBy}).
   * Always written by {@link LeaseTable.toJSON}. Optional only for snapshots written before
   * releases were remembered: {@link LeaseTable.fromJSON} then starts with none, so a retry of
   * an earlier release is answered `'expired'`. A caller that can rebuild the table exactly
   * (replaying a log) should prefer that when the field is absent.
   */
  readonly releaseReplayCache?: readonly ReleaseEntryJson[];
  /**
   * Per resource ever granted, the highest fence granted on it ({@link LeaseTable.highestFence}),
   * in the order the resources were first granted. Always written by {@link LeaseTable.toJSON}.
   * Optional only for snapshots written before it existed: {@link LeaseTable.fromJSON} then
   * derives it from `leases` and `replayCache`, which misses resources whose last generation
   * ended and left the replay cache (such a table answers `'not-holder'` where `'expired'` was
   * due). A caller that can rebuild the table exactly (replaying a log) should prefer that
   * when the field is absent.
   */
  readonly highestFences?: readonly ResourceFenceJson[];
}

const freezeRecord = (record: LeaseRecord): LeaseRecord => Object.freeze({ ...record });

/**
 * A grant as plain numbers: the fields of a {@link LeaseRecord} with its instants as milliseconds
 * (`atMillis` is `grantedAt`), all in one clock domain passed beside it. The coordinator's
 * `LeaseGranted` event data has this shape, so its fold hands the event's data over as it is.
 */
export interface LeaseGrantMillis {
  readonly resource: string;
  readonly holderId: string;
  /** Positive safe integer. */
  readonly fence: number;
  readonly requestId: string;
  /** Milliseconds, positive. */
  readonly ttlMillis: number;
  /** When the generation started, in milliseconds on the domain's clock. */
  readonly atMillis: number;
  /** When it ends unless renewed, in milliseconds on the domain's clock. */
  readonly expiresAtMillis: number;
}

/** A renewal as plain numbers (the coordinator's `LeaseRenewed` event data has this shape). */
export interface LeaseRenewalMillis {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  /** Milliseconds, positive. */
  readonly ttlMillis: number;
  /** The new expiry, in milliseconds on the domain's clock. */
  readonly expiresAtMillis: number;
}

/**
 * A current generation as the table keeps it: instants as milliseconds plus their domain, and
 * the frozen {@link LeaseRecord} made the first time someone reads it (or handed in by
 * {@link LeaseTable.apply}). A replay folds a million grants, renewals and releases of which
 * only the last few are ever read: it makes no `Instant` and no record for the others.
 */
class LeaseSlot {
  /**
   * The record as read last, until the slot changes. Private (`#`): not part of the table's
   * value, so two equal tables compare equal whether or not one of them was read.
   */
  #record: LeaseRecord | undefined;
  constructor(
    readonly resource: string,
    readonly holderId: string,
    readonly fence: number,
    readonly requestId: string,
    public ttlMillis: number,
    public grantedAtMillis: number,
    public expiresAtMillis: number,
    public domain: string,
  ) {}

  /** The frozen record of this slot as it is now (made once per change). */
  view(): LeaseRecord {
    this.#record ??= Object.freeze({
      resource: this.resource,
      holderId: this.holderId,
      fence: this.fence,
      ttlMillis: this.ttlMillis,
      requestId: this.requestId,
      grantedAt: Instant.of(this.grantedAtMillis, this.domain),
      expiresAt: Instant.of(this.expiresAtMillis, this.domain),
    });
    return this.#record;
  }

  /** Uses `record` (frozen, equal to what {@link LeaseSlot.view} would make) as the slot's record. */
  keep(record: LeaseRecord): void {
    this.#record = record;
  }

  /** Forgets the record after a change: the next read makes a new one. */
  changed(): void {
    this.#record = undefined;
  }
}

/** The records of `slots`, made as they are read. */
function* viewsOf(slots: IterableIterator<LeaseSlot>): IterableIterator<LeaseRecord> {
  for (const slot of slots) yield slot.view();
}

/** Validates one replay-cache entry of a snapshot, naming its field. */
function requireReplayEntry(api: string, at: string, entry: ReplayEntryJson): void {
  requireObject(api, at, entry);
  requireId(api, `${at}.holderId`, entry.holderId);
  requireId(api, `${at}.requestId`, entry.requestId);
  requireId(api, `${at}.resource`, entry.resource);
  requireFence(api, `${at}.fence`, entry.fence);
}

function requireInstant(api: string, field: string, value: unknown): asserts value is Instant {
  if (!(value instanceof Instant))
    throw new TypeError(`${api}: ${field} must be an Instant, got ${describeValue(value)}`);
}

/**
 * The coordinator's memory: the fence counter, the current generation per resource, the
 * replay cache, and the highest fence ever granted per resource (kept after the generation
 * ends, one number per resource ever granted). Mutable, but only through {@link LeaseTable.apply} (and the recovery helpers
 * {@link LeaseTable.burnFence} and {@link LeaseTable.reanchor}); the decide functions read it and
 * never mutate it. Every operation is O(1) except iteration, `clone` and `toJSON`.
 *
 * Owned by one writer: {@link LeaseCoordinator} in memory, or the event-sourced coordinator's
 * state (where `apply` is `evolve`).
 *
 * @see docs/design.md § "The library's rules"; § "The event-sourced coordinator" (decide/evolve, recovery)
 */
export class LeaseTable {
  private readonly current = new Map<string, LeaseSlot>();
  private readonly replay: ReplayCache;
  /** Renewals remembered for idempotent retries: same capacity and eviction as `replay`. */
  private readonly renewalReplay: ReplayCache;
  /** Releases remembered for idempotent retries, by (resource, fence): same capacity as `replay`. */
  private readonly releases: ReleaseCache;
  /**
   * Per resource ever granted: the highest fence granted on it, in a mutable box so raising it
   * is one lookup (a replay raises it on every grant). Never shrinks.
   */
  private readonly highest = new Map<string, { fence: number }>();
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
    this.renewalReplay = new ReplayCache(replayCacheSize);
    this.releases = new ReleaseCache(replayCacheSize);
  }

  /** The highest fence ever issued or burned; the next grant gets `issuedFence + 1`. */
  get issuedFence(): number {
    return this.issued;
  }

  /** How many acquire grants the replay cache keeps (and how many renewals, and releases). */
  get replayCacheSize(): number {
    return this.replay.capacity;
  }

  /**
   * The current generation on `resource`, if any. It may be past its expiry but not yet swept
   * (an `'expired'` change removes it); compare `expiresAt` with the coordinator's `now`.
   */
  lease(resource: string): LeaseRecord | undefined {
    return this.current.get(resource)?.view();
  }

  /** Whether `resource` has a current generation (as `lease(resource) !== undefined`, without making its record). */
  hasLease(resource: string): boolean {
    return this.current.has(resource);
  }

  /**
   * The highest fence ever granted on `resource` — the fence of its latest generation, whether
   * it is current or has ended (expired, released, superseded) — or 0 if `resource` was never
   * granted. Kept after the generation ends, so a rule can tell "a generation of this resource
   * that has ended" from "a fence never issued for this resource" (see {@link wasFenceIssued}).
   * Burned fences ({@link LeaseTable.burnFence}) belong to no resource and do not count.
   */
  highestFence(resource: string): number {
    return this.highest.get(resource)?.fence ?? 0;
  }

  /**
   * Every current generation, in the order their resources last became held: a resource moves
   * to the end when it is granted after its lease ended, and keeps its place when a grant
   * supersedes a lease still current. Callers that need another order sort.
   */
  leases(): IterableIterator<LeaseRecord> {
    return viewsOf(this.current.values());
  }

  /** The grant remembered for this holder's acquire request, if still in the replay cache. */
  replayed(holderId: string, requestId: string): { readonly resource: string; readonly fence: number } | undefined {
    return this.replay.get(holderId, requestId);
  }

  /**
   * The lease (resource and fence) this holder's renewal request renewed, if still remembered:
   * the last {@link LeaseTable.replayCacheSize} renewals are, oldest evicted first.
   */
  replayedRenewal(
    holderId: string,
    requestId: string,
  ): { readonly resource: string; readonly fence: number } | undefined {
    return this.renewalReplay.get(holderId, requestId);
  }

  /**
   * The holder that released generation `fence` of `resource`, if that release is still
   * remembered: the last {@link LeaseTable.replayCacheSize} releases are, oldest forgotten first.
   * `undefined` for a generation that ended otherwise (expired, superseded), is current, was
   * never granted, or whose release was forgotten.
   */
  releasedBy(resource: string, fence: number): string | undefined {
    return this.releases.get(resource, fence);
  }

  /**
   * Folds one decided change into the table: the only mutator for lease changes (the event-sourced
   * coordinator's `evolve` calls it, live and during replay).
   * - `granted`: the lease becomes current, `issuedFence` and the resource's
   *   {@link LeaseTable.highestFence} rise to its fence, the grant enters the replay cache.
   * - `renewed`: the current lease with that fence and holder gets the new `expiresAt` and
   *   `ttlMillis`; the renewal enters the renewals' replay cache.
   * - `released` / `expired`: the current lease with that fence and holder is removed; a release
   *   is remembered ({@link LeaseTable.releasedBy}).
   * @throws {@link ProtocolMisuseError} if the change does not fit the table (a renewal, release or
   *   expiry of a lease that is not current): the log and the table disagree. Nothing is changed.
   * @throws TypeError for an unknown change type, or instants that are not {@link Instant}s.
   * @throws {@link ClockDomainError} if a grant's two instants, or a renewal's expiry and the
   *   lease's grant instant, are in different clock domains. Nothing is changed.
   */
  apply(change: LeaseChange): void {
    switch (change.type) {
      case 'granted': {
        const lease = change.lease;
        requireInstant('LeaseTable.apply', 'lease.grantedAt', lease.grantedAt);
        requireInstant('LeaseTable.apply', 'lease.expiresAt', lease.expiresAt);
        if (lease.grantedAt.domain !== lease.expiresAt.domain) lease.expiresAt.minus(lease.grantedAt); // throws ClockDomainError
        const slot = this.grantSlot(
          lease.resource,
          lease.holderId,
          lease.fence,
          lease.requestId,
          lease.ttlMillis,
          lease.grantedAt.millis,
          lease.expiresAt.millis,
          lease.grantedAt.domain,
        );
        slot.keep(freezeRecord(lease));
        return;
      }
      case 'renewed':
        requireInstant('LeaseTable.apply', 'expiresAt', change.expiresAt);
        this.renewSlot(change, change.expiresAt.millis, change.expiresAt.domain);
        return;
      case 'released':
      case 'expired':
        this.endSlot(change.type, change.resource, change.holderId, change.fence);
        return;
      default:
        throw new TypeError(
          `LeaseTable.apply: unknown change type ${describeValue((change as { type?: unknown }).type)}`,
        );
    }
  }

  /**
   * {@link LeaseTable.apply} of a `granted` change given as numbers: the same rule (the same
   * private steps), with no `Instant` or record made until the lease is read. For a fold of
   * stored events (the event-sourced coordinator's `evolve`), whose data the schema has checked.
   * @param grant - The lease; `atMillis` and `expiresAtMillis` on `domain`'s clock.
   * @param domain - The clock domain of both instants (the boot id). Non-empty.
   */
  grant(grant: LeaseGrantMillis, domain: string): void {
    this.grantSlot(
      grant.resource,
      grant.holderId,
      grant.fence,
      grant.requestId,
      grant.ttlMillis,
      grant.atMillis,
      grant.expiresAtMillis,
      domain,
    );
  }

  /**
   * {@link LeaseTable.apply} of a `renewed` change given as numbers (see {@link LeaseTable.grant}).
   * @throws {@link ProtocolMisuseError} if no current lease has that resource, fence and holder;
   *   {@link ClockDomainError} if `domain` is not the lease's. Nothing is changed then.
   */
  renew(renewal: LeaseRenewalMillis, domain: string): void {
    this.renewSlot(renewal, renewal.expiresAtMillis, domain);
  }

  /**
   * {@link LeaseTable.apply} of a `released` or `expired` change given as its fields.
   * @throws {@link ProtocolMisuseError} if no current lease has that resource, fence and holder; nothing is changed.
   */
  end(type: 'released' | 'expired', resource: string, holderId: string, fence: number): void {
    this.endSlot(type, resource, holderId, fence);
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
   * Records that `fence` was issued for `resource` by a history this table does not hold (a
   * gate reports it as its floor after the coordinator's log was lost): raises
   * {@link LeaseTable.highestFence} of `resource` and the fence counter to at least `fence`,
   * so that fence and every lower one are never issued again and count as issued for
   * `resource`. Grants nothing; a no-op when both are already that high.
   * @throws TypeError / RangeError unless `resource` is a non-empty id and `fence` a positive safe integer.
   */
  observeFence(resource: string, fence: number): void {
    requireId('LeaseTable.observeFence', 'resource', resource);
    requireFence('LeaseTable.observeFence', 'fence', fence);
    this.raiseHighest(resource, fence);
  }

  /**
   * Moves a carried lease into a new clock domain after recovery: its old instants belong to a
   * dead boot and can no longer be compared. Fence, holder and ttl are kept.
   * @param resource - The resource whose current lease is re-anchored.
   * @param expiresAt - The new expiry (the grace deadline), in the new domain.
   * @param grantedAt - The new grant instant; defaults to `expiresAt - ttlMillis`.
   * @throws {@link ProtocolMisuseError} if there is no current lease on `resource`.
   * @see docs/design.md § "The event-sourced coordinator" (Recovery)
   */
  reanchor(resource: string, expiresAt: Instant, grantedAt?: Instant): void {
    const slot = this.current.get(resource);
    if (slot === undefined) {
      throw new ProtocolMisuseError(`LeaseTable.reanchor: no current lease on resource ${JSON.stringify(resource)}`);
    }
    requireInstant('LeaseTable.reanchor', 'expiresAt', expiresAt);
    if (grantedAt !== undefined) requireInstant('LeaseTable.reanchor', 'grantedAt', grantedAt);
    const start = grantedAt ?? expiresAt.plus(-slot.ttlMillis);
    if (start.domain !== expiresAt.domain) start.minus(expiresAt); // throws ClockDomainError
    slot.grantedAtMillis = start.millis;
    slot.expiresAtMillis = expiresAt.millis;
    slot.domain = expiresAt.domain;
    slot.changed();
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
      leases: [...this.current.values()].map((slot) => ({
        resource: slot.resource,
        holderId: slot.holderId,
        fence: slot.fence,
        ttlMillis: slot.ttlMillis,
        requestId: slot.requestId,
        grantedAt: { millis: slot.grantedAtMillis, domain: slot.domain },
        expiresAt: { millis: slot.expiresAtMillis, domain: slot.domain },
      })),
      replayCache: [...this.replay.values()].map((entry) => ({ ...entry })),
      renewalReplayCache: [...this.renewalReplay.values()].map((entry) => ({ ...entry })),
      releaseReplayCache: [...this.releases.values()],
      highestFences: [...this.highest].map(([resource, highest]) => ({ resource, fence: highest.fence })),
    };
  }

  /**
   * Restores a table from {@link LeaseTable.toJSON}'s output (after a JSON round trip too).
   * A snapshot without `highestFences` (written before it existed) is read too: the highest
   * fence per resource is then derived from `leases` and `replayCache` (see
   * {@link LeaseTableSnapshot.highestFences} for what that misses). A `highestFences` entry below
   * a lease or replay entry of its resource is raised to it; any fence above `issuedFence` raises it.
   * @throws TypeError / RangeError naming the field if the snapshot is malformed.
   */
  static fromJSON(snapshot: LeaseTableSnapshot): LeaseTable {
    const api = 'LeaseTable.fromJSON';
    requireObject(api, 'snapshot', snapshot);
    if (snapshot.format !== 1) throw new TypeError(`${api}: format must be 1, got ${describeValue(snapshot.format)}`);
    if (!Array.isArray(snapshot.leases))
      throw new TypeError(`${api}: leases must be an array, got ${describeValue(snapshot.leases)}`);
    if (!Array.isArray(snapshot.replayCache)) {
      throw new TypeError(`${api}: replayCache must be an array, got ${describeValue(snapshot.replayCache)}`);
    }
    if (snapshot.highestFences !== undefined && !Array.isArray(snapshot.highestFences)) {
      throw new TypeError(
        `${api}: highestFences must be an array when present, got ${describeValue(snapshot.highestFences)}`,
      );
    }
    if (snapshot.renewalReplayCache !== undefined && !Array.isArray(snapshot.renewalReplayCache)) {
      throw new TypeError(
        `${api}: renewalReplayCache must be an array when present, got ${describeValue(snapshot.renewalReplayCache)}`,
      );
    }
    if (snapshot.releaseReplayCache !== undefined && !Array.isArray(snapshot.releaseReplayCache)) {
      throw new TypeError(
        `${api}: releaseReplayCache must be an array when present, got ${describeValue(snapshot.releaseReplayCache)}`,
      );
    }
    const table = new LeaseTable({ startFence: snapshot.issuedFence, replayCacheSize: snapshot.replayCacheSize });
    for (const [index, entry] of (snapshot.highestFences ?? []).entries()) {
      const at = `highestFences[${index}]`;
      requireObject(api, at, entry);
      requireId(api, `${at}.resource`, entry.resource);
      requireFence(api, `${at}.fence`, entry.fence);
      table.raiseHighest(entry.resource, entry.fence);
    }
    for (const [index, entry] of (snapshot.replayCache as LeaseTableSnapshot['replayCache']).entries()) {
      requireReplayEntry(api, `replayCache[${index}]`, entry);
      table.replay.remember(entry.holderId, entry.requestId, entry.resource, entry.fence);
      table.raiseHighest(entry.resource, entry.fence);
    }
    for (const [index, entry] of (snapshot.renewalReplayCache ?? []).entries()) {
      requireReplayEntry(api, `renewalReplayCache[${index}]`, entry);
      table.renewalReplay.remember(entry.holderId, entry.requestId, entry.resource, entry.fence);
    }
    for (const [index, entry] of (snapshot.releaseReplayCache ?? []).entries()) {
      const at = `releaseReplayCache[${index}]`;
      requireObject(api, at, entry);
      requireId(api, `${at}.resource`, entry.resource);
      requireId(api, `${at}.holderId`, entry.holderId);
      requireFence(api, `${at}.fence`, entry.fence);
      table.releases.remember(entry.resource, entry.holderId, entry.fence);
      table.raiseHighest(entry.resource, entry.fence);
    }
    table.replay.fold();
    table.renewalReplay.fold();
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
      const grantedAt = Instant.of(lease.grantedAt.millis, lease.grantedAt.domain);
      const expiresAt = Instant.of(lease.expiresAt.millis, lease.expiresAt.domain);
      if (grantedAt.domain !== expiresAt.domain) expiresAt.minus(grantedAt); // throws ClockDomainError
      const slot = new LeaseSlot(
        lease.resource,
        lease.holderId,
        lease.fence,
        lease.requestId,
        lease.ttlMillis,
        grantedAt.millis,
        expiresAt.millis,
        expiresAt.domain,
      );
      slot.keep(
        Object.freeze({
          resource: lease.resource,
          holderId: lease.holderId,
          fence: lease.fence,
          ttlMillis: lease.ttlMillis,
          requestId: lease.requestId,
          grantedAt,
          expiresAt,
        }),
      );
      table.current.set(lease.resource, slot);
      table.raiseHighest(lease.resource, lease.fence);
    }
    return table;
  }

  /** A fence granted on `resource`: raises its highest fence and the fence counter. */
  private raiseHighest(resource: string, fence: number): void {
    const highest = this.highest.get(resource);
    if (highest === undefined) {
      if (fence > 0) this.highest.set(resource, { fence });
    } else if (fence > highest.fence) highest.fence = fence;
    if (fence > this.issued) this.issued = fence;
  }

  /** The `granted` rule: the lease becomes current, the fences rise, the grant is remembered. */
  private grantSlot(
    resource: string,
    holderId: string,
    fence: number,
    requestId: string,
    ttlMillis: number,
    grantedAtMillis: number,
    expiresAtMillis: number,
    domain: string,
  ): LeaseSlot {
    const slot = new LeaseSlot(
      resource,
      holderId,
      fence,
      requestId,
      ttlMillis,
      grantedAtMillis,
      expiresAtMillis,
      domain,
    );
    this.current.set(resource, slot);
    this.raiseHighest(resource, fence);
    this.replay.remember(holderId, requestId, resource, fence);
    return slot;
  }

  /** The `renewed` rule: the matching lease gets the new expiry and TTL, the renewal is remembered. */
  private renewSlot(
    renewal: {
      readonly resource: string;
      readonly holderId: string;
      readonly fence: number;
      readonly requestId: string;
      readonly ttlMillis: number;
    },
    expiresAtMillis: number,
    domain: string,
  ): void {
    const slot = this.matching('renewed', renewal.resource, renewal.holderId, renewal.fence);
    if (slot.domain !== domain) {
      // The lease's grant instant stays; a new expiry in another clock could not be compared with it.
      Instant.of(expiresAtMillis, domain).minus(Instant.of(slot.grantedAtMillis, slot.domain)); // throws ClockDomainError
    }
    slot.ttlMillis = renewal.ttlMillis;
    slot.expiresAtMillis = expiresAtMillis;
    slot.changed();
    this.renewalReplay.remember(renewal.holderId, renewal.requestId, renewal.resource, renewal.fence);
  }

  /** The `released` / `expired` rule: the matching lease is removed; a release is remembered. */
  private endSlot(type: string, resource: string, holderId: string, fence: number): void {
    this.matching(type, resource, holderId, fence);
    this.current.delete(resource);
    if (type === 'released') this.releases.remember(resource, holderId, fence);
  }

  /** The current lease a renewed/released/expired change refers to, or a ProtocolMisuseError. */
  private matching(type: string, resource: string, holderId: string, fence: number): LeaseSlot {
    const slot = this.current.get(resource);
    if (slot === undefined || slot.fence !== fence || slot.holderId !== holderId) {
      throw new ProtocolMisuseError(
        `LeaseTable.apply: ${type} change for resource ${JSON.stringify(resource)}, fence ${fence}, ` +
          `holder ${JSON.stringify(holderId)} does not match the current lease ` +
          (slot === undefined ? '(none)' : `(fence ${slot.fence}, holder ${JSON.stringify(slot.holderId)})`),
      );
    }
    return slot;
  }
}
