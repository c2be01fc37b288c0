/**
 * A standby coordinator: a second process on the same log that follows the active coordinator's
 * appends with a catch-up subscription and takes over when the active one has appended nothing
 * for `silenceMillis` on the standby's own clock. Taking over is `DurableCoordinator.open`:
 * recover from the log and append this boot's `CoordinatorStarted` at the version just replayed.
 *
 * Expected-version appends make it safe whatever the timing: if the active coordinator appends
 * first, the takeover conflicts and the standby keeps following; once the takeover has landed,
 * the deposed coordinator's next append conflicts, so it stops granting and reports itself
 * `'superseded'` (coordinator-core's rule). Silence only decides *when* to try, never *whether*
 * it is safe, so a wrong guess (an idle but healthy active coordinator) costs a failover, not a
 * double grant.
 *
 * Lives in test/esdb for now; API.md "Changes" proposes it for coordinator-core.
 *
 * @see DESIGN.md § "The event-sourced coordinator" (single writer) and § Scale (a standby per shard)
 */
import {
  DurableCoordinator,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  type DurableCoordinatorOptions,
  type Subscription,
} from '@lease-fence/coordinator-core';
import type { Clock, Instant } from 'lease-fence';

/** Options of {@link StandbyCoordinator.follow}: those of the coordinator it would become, plus the silence threshold. */
export interface StandbyCoordinatorOptions extends DurableCoordinatorOptions {
  /**
   * The standby's clock: measures silence, and becomes the new coordinator's boot clock on
   * takeover (its `domain` is the new boot id).
   */
  readonly clock: Clock;
  /** Take over after the active coordinator has appended nothing for this long (milliseconds, standby clock). Positive integer. */
  readonly silenceMillis: number;
  /** Wait before following again after the subscription lost its connection (milliseconds). @defaultValue 200 */
  readonly resubscribeDelayMillis?: number;
}

/** Follows a log and takes it over when its writer falls silent. */
export class StandbyCoordinator {
  private positionSeen = 0;
  private lastSeenAt: Instant;
  private subscription: Subscription | undefined;
  private following: Promise<void> | undefined;
  private readonly waiters = new Set<{ readonly position: number; readonly resolve: () => void; readonly reject: (error: unknown) => void }>();
  private failure: unknown;
  private closed = false;

  private constructor(private readonly options: StandbyCoordinatorOptions) {
    this.lastSeenAt = options.clock.now();
  }

  /**
   * Starts following `options.log` from its first event.
   * @throws `RangeError` naming `silenceMillis` when it is not a positive integer.
   */
  static follow(options: StandbyCoordinatorOptions): StandbyCoordinator {
    if (!Number.isSafeInteger(options.silenceMillis) || options.silenceMillis < 1) {
      throw new RangeError(`StandbyCoordinator.follow: silenceMillis must be a positive integer (milliseconds), got ${String(options.silenceMillis)}`);
    }
    const standby = new StandbyCoordinator(options);
    standby.startFollowing();
    return standby;
  }

  /** The log version the standby has seen (the position of the last event it followed). */
  get position(): number {
    return this.positionSeen;
  }

  /** Resolves once the standby has seen the event at `position`; rejects if following failed for good. */
  waitForPosition(position: number): Promise<void> {
    if (this.positionSeen >= position) return Promise.resolve();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.add({ position, resolve, reject }));
  }

  /** Advisory: whether nothing was appended for `silenceMillis` by the standby's clock, as of now. */
  isActiveSilent(): boolean {
    return this.options.clock.now().minus(this.lastSeenAt) >= this.options.silenceMillis;
  }

  /**
   * Takes over if the active coordinator is silent: stops following and opens a
   * {@link DurableCoordinator} on the log (recovery, then `CoordinatorStarted` at the replayed version).
   * @returns the new active coordinator, or `undefined` when the active one is not silent or
   *   appended before the takeover landed (the standby then keeps following).
   * @throws what `DurableCoordinator.open` throws other than a version conflict (corrupt or unavailable log).
   */
  async takeOverIfSilent(): Promise<DurableCoordinator | undefined> {
    if (this.closed) throw new TypeError('StandbyCoordinator.takeOverIfSilent: the standby was closed');
    if (!this.isActiveSilent()) return undefined;
    await this.stopFollowing();
    try {
      const coordinator = await DurableCoordinator.open(this.options);
      this.closed = true;
      return coordinator;
    } catch (error) {
      if (!(error instanceof ExpectedVersionConflictError)) throw error;
      this.startFollowing(); // the active coordinator appended first: it is alive
      return undefined;
    }
  }

  /** Stops following. Idempotent. Does not close the log. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stopFollowing();
  }

  private startFollowing(): void {
    const subscription = this.options.log.subscribe({ after: this.positionSeen });
    this.subscription = subscription;
    this.following = (async () => {
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
        if (error instanceof EventLogUnavailableError) {
          setTimeout(() => { if (this.subscription === subscription && !this.closed) this.startFollowing(); }, this.options.resubscribeDelayMillis ?? 200).unref();
          return;
        }
        this.failure = error;
        for (const waiter of this.waiters) waiter.reject(error);
        this.waiters.clear();
      }
    })();
  }

  private async stopFollowing(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.close();
    await this.following;
  }
}
