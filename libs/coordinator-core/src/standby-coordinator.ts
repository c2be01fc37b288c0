/**
 * A standby coordinator: a second process on the same log that follows the active coordinator's
 * appends with a catch-up subscription and takes over when the log has had no append for
 * `silenceMillis` on the standby's own clock. Taking over is {@link DurableCoordinator.open} with
 * `takeOverAtVersion` = the version the standby saw go silent: the same recovery as a restart
 * (snapshot + replay, carried leases re-anchored into the new boot's clock domain with their
 * remaining time, the fence counter restored), and a `CoordinatorStarted` appended only if the
 * log is still at that version.
 *
 * Expected-version appends make it safe whatever the timing: if the active coordinator appends
 * first, the takeover conflicts and the standby keeps following; once the takeover has landed,
 * the deposed coordinator's next append conflicts, so it stops granting and reports itself
 * `'superseded'`. Silence only decides *when* to try, never *whether* it is safe, so a wrong
 * guess (an idle but healthy active coordinator without `heartbeat`) costs a failover, not a
 * double grant.
 *
 * @see docs/design.md § "The event-sourced coordinator" (single writer, Recovery) and § Scale (a standby per shard)
 */
import { describeValue, MAX_TTL_MILLIS, requireInteger, type Clock, type Instant } from 'lease-fence';
import { DurableCoordinator } from './durable-coordinator.js';
import { callHook, resolveOptions, type DurableCoordinatorOptions } from './durable-coordinator-options.js';
import { EventLogUnavailableError, ExpectedVersionConflictError } from './ports/event-log-errors.js';
import type { Subscription } from './ports/event-log.js';

/**
 * Options of {@link StandbyCoordinator.follow}: those of the coordinator it would become (the
 * takeover passes them to {@link DurableCoordinator.open}), plus the silence threshold.
 */
export interface StandbyCoordinatorOptions extends Omit<DurableCoordinatorOptions, 'takeOverAtVersion'> {
  /**
   * The standby's monotonic clock: measures silence, and is the new coordinator's boot clock on
   * takeover unless {@link StandbyCoordinator.takeOverIfSilent} is given another one (its
   * `domain` is then the new boot id, never used before in this log).
   */
  readonly clock: Clock;
  /**
   * Take over once the log has had no append for this long (milliseconds, standby clock).
   * Longer than the active coordinator's `checkpointIntervalMillis` when it runs with
   * `heartbeat`, or an idle coordinator is taken over between two heartbeats (safe, but a needless
   * failover). Positive integer ≤ 2^31 - 1.
   */
  readonly silenceMillis: number;
  /** Wait before following again after the subscription lost the log (milliseconds). Positive integer. @defaultValue 200 */
  readonly resubscribeDelayMillis?: number;
  /**
   * Called when following the log fails: `retrying` is true for a transient failure
   * ({@link EventLogUnavailableError}: the standby subscribes again after `resubscribeDelayMillis`),
   * false when it stopped for good (e.g. a corrupt event; {@link StandbyCoordinator.waitForPosition} then rejects).
   */
  onFollowError?(error: unknown, details: { readonly retrying: boolean }): void;
}

/** Options of {@link StandbyCoordinator.takeOverIfSilent}. */
export interface TakeOverOptions {
  /**
   * The new boot's monotonic clock; its `domain` is the new boot id and must never have been
   * used in this log. Pass a fresh one per attempt: an attempt whose `CoordinatorStarted` append
   * failed may have landed and used its boot id. @defaultValue the standby's `clock`
   */
  readonly clock?: Clock;
}

/** A waiter of {@link StandbyCoordinator.waitForPosition}. */
interface PositionWaiter {
  readonly position: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Follows a coordinator's log and takes it over when its writer falls silent.
 *
 * @see docs/design.md § "The event-sourced coordinator" (single writer) and § Scale
 * @example
 * ```ts
 * const standby = StandbyCoordinator.follow({
 *   log, namespace: 'default', clock: createMonotonicClock(randomUUID()), defaultTtlMillis: 10_000, silenceMillis: 3_000,
 * });
 * // later, on a timer of standby.millisUntilSilent():
 * const coordinator = await standby.takeOverIfSilent({ clock: createMonotonicClock(randomUUID()) });
 * if (coordinator !== undefined) serve(coordinator); // else: the active one appended; keep waiting
 * ```
 */
export class StandbyCoordinator {
  private positionSeen = 0;
  private lastSeenAt: Instant;
  private subscription: Subscription | undefined;
  private following: Promise<void> | undefined;
  private resubscribeTimer: ReturnType<typeof setTimeout> | undefined;
  private takingOver: Promise<DurableCoordinator | undefined> | undefined;
  private readonly waiters = new Set<PositionWaiter>();
  private failure: unknown;
  private hasFailed = false;
  private closed = false;

  private constructor(private readonly options: StandbyCoordinatorOptions) {
    this.lastSeenAt = options.clock.now();
  }

  /**
   * Starts following `options.log` from its first event (catch-up, then live).
   * @throws TypeError / RangeError naming the option, its unit and the value, for any option
   *   {@link DurableCoordinator.open} would refuse, and for `silenceMillis` or
   *   `resubscribeDelayMillis` that is not a positive integer (milliseconds).
   */
  static follow(options: StandbyCoordinatorOptions): StandbyCoordinator {
    resolveOptions({ ...options, takeOverAtVersion: undefined });
    requireMillis('silenceMillis', options.silenceMillis);
    if (options.resubscribeDelayMillis !== undefined)
      requireMillis('resubscribeDelayMillis', options.resubscribeDelayMillis);
    if (options.onFollowError !== undefined && typeof options.onFollowError !== 'function') {
      throw new TypeError(
        `StandbyCoordinator.follow: onFollowError must be a function, got ${describeValue(options.onFollowError)}`,
      );
    }
    const standby = new StandbyCoordinator(options);
    standby.startFollowing();
    return standby;
  }

  /** The log version the standby has seen (the position of the last event it followed; 0 before any). */
  get position(): number {
    return this.positionSeen;
  }

  /**
   * Resolves once the standby has seen the event at `position`.
   * Rejects with the cause if following stopped for good, or with TypeError once the standby is closed.
   */
  waitForPosition(position: number): Promise<void> {
    if (this.positionSeen >= position) return Promise.resolve();
    if (this.hasFailed) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new TypeError('StandbyCoordinator.waitForPosition: the standby was closed'));
    return new Promise((resolve, reject) => this.waiters.add({ position, resolve, reject }));
  }

  /**
   * Advisory: whether the log has had no append for `silenceMillis` by the standby's clock, as
   * of this call. Never a safety decision: {@link StandbyCoordinator.takeOverIfSilent} re-checks
   * and relies on the expected version.
   */
  isActiveSilent(): boolean {
    return this.millisUntilSilent() === 0;
  }

  /**
   * Advisory: milliseconds (standby clock) until the log counts as silent if nothing is appended
   * meanwhile; 0 when it already is. For scheduling the next {@link StandbyCoordinator.takeOverIfSilent}.
   */
  millisUntilSilent(): number {
    return Math.max(0, this.options.silenceMillis - this.options.clock.now().minus(this.lastSeenAt));
  }

  /**
   * Takes over if the log is silent: stops following and opens a {@link DurableCoordinator} on
   * the log with `takeOverAtVersion` = the version seen (recovery, then `CoordinatorStarted`).
   * Concurrent calls share one attempt.
   *
   * @returns the new active coordinator (this standby is then done), or `undefined` when the log
   *   is not silent or the active coordinator appended before the takeover landed (the standby
   *   keeps following).
   * @throws what `DurableCoordinator.open` throws other than a version conflict (e.g.
   *   {@link EventLogUnavailableError} when the log is unreachable, `EventLogCorruptError`); the
   *   standby keeps following, and a later attempt needs a fresh `clock`.
   * @throws TypeError once the standby was closed or has taken over.
   */
  takeOverIfSilent(options: TakeOverOptions = {}): Promise<DurableCoordinator | undefined> {
    if (this.closed)
      return Promise.reject(
        new TypeError('StandbyCoordinator.takeOverIfSilent: the standby was closed or has taken over'),
      );
    if (options === null || typeof options !== 'object') {
      return Promise.reject(
        new TypeError(`StandbyCoordinator.takeOverIfSilent: options must be an object, got ${describeValue(options)}`),
      );
    }
    this.takingOver ??= this.takeOver(options).finally(() => {
      this.takingOver = undefined;
    });
    return this.takingOver;
  }

  /** Stops following; pending {@link StandbyCoordinator.waitForPosition} calls reject. Idempotent. Does not close the log. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stopFollowing();
    this.rejectWaiters(new TypeError('StandbyCoordinator.waitForPosition: the standby was closed'));
  }

  private async takeOver(options: TakeOverOptions): Promise<DurableCoordinator | undefined> {
    if (!this.isActiveSilent()) return undefined;
    await this.stopFollowing();
    // Events delivered while stopping count: the active coordinator may have just appended.
    if (!this.isActiveSilent()) {
      this.startFollowing();
      return undefined;
    }
    const {
      silenceMillis: _silence,
      resubscribeDelayMillis: _delay,
      onFollowError: _hook,
      ...coordinatorOptions
    } = this.options;
    try {
      const coordinator = await DurableCoordinator.open({
        ...coordinatorOptions,
        clock: options.clock ?? this.options.clock,
        takeOverAtVersion: this.positionSeen,
      });
      this.closed = true;
      this.rejectWaiters(new TypeError('StandbyCoordinator.waitForPosition: the standby has taken over'));
      return coordinator;
    } catch (error) {
      if (!this.closed) this.startFollowing();
      if (error instanceof ExpectedVersionConflictError) return undefined; // the active coordinator appended first: it is alive
      throw error;
    }
  }

  private startFollowing(): void {
    this.hasFailed = false;
    this.failure = undefined;
    const subscription = this.options.log.subscribe({ after: this.positionSeen });
    this.subscription = subscription;
    this.following = this.follow(subscription);
  }

  private async follow(subscription: Subscription): Promise<void> {
    try {
      for await (const recorded of subscription) {
        this.positionSeen = recorded.position;
        this.lastSeenAt = this.options.clock.now();
        for (const waiter of this.waiters) {
          if (waiter.position <= recorded.position) {
            this.waiters.delete(waiter);
            waiter.resolve();
          }
        }
      }
    } catch (error) {
      if (this.subscription !== subscription || this.closed) return;
      const retrying = error instanceof EventLogUnavailableError;
      callHook(() => this.options.onFollowError?.(error, { retrying }));
      if (retrying) {
        this.resubscribeTimer = setTimeout(() => {
          this.resubscribeTimer = undefined;
          if (this.subscription === subscription && !this.closed) this.startFollowing();
        }, this.options.resubscribeDelayMillis ?? 200);
        this.resubscribeTimer.unref();
        return;
      }
      this.hasFailed = true;
      this.failure = error;
      this.rejectWaiters(error);
    }
  }

  private async stopFollowing(): Promise<void> {
    if (this.resubscribeTimer !== undefined) clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.close();
    await this.following;
  }

  private rejectWaiters(error: unknown): void {
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
  }
}

/** A delay option of {@link StandbyCoordinator.follow}: lease-fence's `requireInteger`, milliseconds in [1, MAX_TTL_MILLIS] (a timer's range). */
function requireMillis(field: string, value: unknown): void {
  requireInteger('StandbyCoordinator.follow', field, value, { min: 1, max: MAX_TTL_MILLIS, unit: 'milliseconds' });
}
