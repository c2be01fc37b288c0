/**
 * Background renewal of one held lease, with a deadline watchdog and an abort signal for the
 * work done under it.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring; An expired lease is never resurrected)
 */
import type { Lease as LibraryLease } from 'lease-fence';
import { LeaseLostError, type LeaseLostReason } from './errors.js';
import { linkSignals } from './linked-signal.js';
import type { ReleaseResult, RenewResult } from './results.js';
import type { Lease } from './signed-lease.js';
import { systemTimers, type Timers } from './timers.js';

/**
 * What a {@link LeaseKeeper} needs from a client; {@link LeaseFenceClient} provides it for the
 * SDK's signed {@link Lease}s. `L` is the kind of lease kept (any library `Lease`).
 */
export interface LeaseRenewer<L extends LibraryLease = Lease> {
  renew(lease: L, options: { readonly ttlMillis?: number; readonly signal?: AbortSignal }): Promise<RenewResult<L>>;
  release(lease: L): Promise<ReleaseResult>;
}

/** Options of {@link LeaseKeeper}. */
export interface LeaseKeeperOptions<L extends LibraryLease = Lease> {
  /**
   * When to renew, as the fraction of the lease's window (send instant to deadline, client clock)
   * that has elapsed. Strictly between 0 and 1. With a 3000 ms ttl, 100 ms skew and the default,
   * a renewal goes out 1450 ms after the previous send.
   * @defaultValue 0.5
   */
  readonly renewAtFraction?: number;
  /** Duration to ask for on each renewal, in milliseconds. @defaultValue the lease's own `ttlMillis` */
  readonly ttlMillis?: number;
  /**
   * Pause after a renewal that failed without a decision (coordinator unreachable or unavailable
   * after the client's own retries, or an unexpected reply) before the next renewal, in milliseconds.
   * Finite, ≥ 0. Renewals stop at the deadline regardless.
   * @defaultValue 100
   */
  readonly renewalRetryDelayMillis?: number;
  /** How the keeper waits. @defaultValue the client's timers ({@link systemTimers}) */
  readonly timers?: Timers;
  /** Called with each renewed lease (deadline moved forward). */
  readonly onRenewed?: (lease: L) => void;
  /** Called once when the lease is lost (not when it is released). */
  readonly onLost?: (error: LeaseLostError) => void;
  /** Called when a renewal attempt failed without an answer; the keeper keeps trying until the deadline. */
  readonly onRenewalError?: (error: unknown) => void;
}

/** Where a {@link LeaseKeeper} is: renewing, lost for good, or released by its holder. */
export type LeaseKeeperState = 'held' | 'lost' | 'released';

/**
 * Keeps one lease: renews it in the background well before its deadline, aborts {@link signal}
 * the moment it can no longer be trusted, and releases it on request.
 *
 * - Renewals are anchored by the library: each new deadline is the renewal's first send instant
 *   plus ttl minus skew, never the arrival of its reply.
 * - A watchdog aborts the signal at the deadline if no renewal moved it.
 * - Once lost or released the keeper never holds again: a renewal reply that arrives after the
 *   release or after the deadline is ignored, so it cannot revive the lease locally.
 * - Waits go through {@link Timers}, which chunk long delays (no `setTimeout` over 2^31 ms).
 *
 * `L` is the kind of lease kept: the SDK's signed {@link Lease} (its view carries the latest
 * `signedToken`), or any library `Lease`.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring)
 */
export class LeaseKeeper<L extends LibraryLease = Lease> {
  /**
   * A live view of the lease: every field and method of the latest renewal (`deadline`,
   * `hasExpired()`, `remainingMillis()`, and the same `token` and `signedToken`). Pass it where a
   * `Lease` is wanted; {@link LeaseFenceClient.renew} and `release` accept it.
   */
  readonly view: L;
  readonly #client: LeaseRenewer<L>;
  readonly #timers: Timers;
  readonly #renewAtFraction: number;
  readonly #renewalRetryDelayMillis: number;
  readonly #ttlMillis: number | undefined;
  readonly #options: LeaseKeeperOptions<L>;
  readonly #stop = new AbortController();
  /** Aborted when a renewed lease is adopted, so the watchdog re-arms for the new deadline. */
  #rearm = new AbortController();
  readonly #trust = new AbortController();
  #lease: L;
  #state: LeaseKeeperState = 'held';
  #lost: LeaseLostError | undefined;
  #release: Promise<ReleaseResult> | undefined;

  /**
   * Starts renewing at once. Prefer {@link LeaseFenceClient.keep}.
   * @param client - Sends renewals and the release.
   * @param lease - The lease to keep; should be live (a dead one is lost at the first check).
   * @throws RangeError when `renewAtFraction` is not strictly between 0 and 1, or
   *   `renewalRetryDelayMillis` is negative or not finite.
   */
  constructor(client: LeaseRenewer<L>, lease: L, options: LeaseKeeperOptions<L> = {}) {
    const renewAtFraction = options.renewAtFraction ?? 0.5;
    if (!(renewAtFraction > 0 && renewAtFraction < 1)) {
      throw new RangeError(
        `LeaseKeeper: renewAtFraction must be strictly between 0 and 1 (fraction of the lease window), got ${String(renewAtFraction)}`,
      );
    }
    const renewalRetryDelayMillis = options.renewalRetryDelayMillis ?? 100;
    if (!Number.isFinite(renewalRetryDelayMillis) || renewalRetryDelayMillis < 0) {
      throw new RangeError(
        `LeaseKeeper: renewalRetryDelayMillis must be a finite number ≥ 0 (milliseconds), got ${String(renewalRetryDelayMillis)}`,
      );
    }
    this.#client = client;
    this.#lease = lease;
    this.#timers = options.timers ?? systemTimers;
    this.#renewAtFraction = renewAtFraction;
    this.#renewalRetryDelayMillis = renewalRetryDelayMillis;
    this.#ttlMillis = options.ttlMillis;
    this.#options = options;
    this.view = liveView(() => this.#lease);
    void this.#watch();
    void this.#renewLoop();
  }

  /** The latest lease (the acquired one, or the latest renewal). Its fence never changes. */
  get lease(): L {
    return this.#lease;
  }

  /** `'held'` while renewing, `'lost'` once it can no longer be trusted, `'released'` after {@link release}. */
  get state(): LeaseKeeperState {
    return this.#state;
  }

  /** Why the lease was lost, once it was; `undefined` while held or after a release. */
  get lost(): LeaseLostError | undefined {
    return this.#lost;
  }

  /**
   * Aborted, with a {@link LeaseLostError} as `reason`, as soon as the lease can no longer be
   * trusted, or when it is released. Pass it to the work done under the lease.
   */
  get signal(): AbortSignal {
    return this.#trust.signal;
  }

  /**
   * Stops renewing and releases the lease. Idempotent: later calls return the first call's
   * promise. After a loss by `'expired'` or `'not-holder'` nothing is sent (there is nothing to
   * release) and that denial is returned; after a loss by deadline the release is still sent,
   * since the coordinator may not have expired it yet.
   *
   * @throws what {@link LeaseFenceClient.release} throws (the keeper stays released).
   */
  release(): Promise<ReleaseResult> {
    this.#release ??= this.#releaseOnce();
    return this.#release;
  }

  async #releaseOnce(): Promise<ReleaseResult> {
    const lost = this.#lost;
    if (this.#state === 'held') {
      this.#state = 'released';
      const error = new LeaseLostError(this.#lease.resource, this.#lease.holderId, this.#lease.fence, 'released');
      this.#stop.abort(error);
      this.#trust.abort(error);
    }
    if (lost?.reason === 'expired' || lost?.reason === 'not-holder') return { ok: false, reason: lost.reason };
    return this.#client.release(this.#lease);
  }

  #lose(reason: LeaseLostReason, cause?: unknown): void {
    if (this.#state !== 'held') return;
    this.#state = 'lost';
    const lease = this.#lease;
    const error = new LeaseLostError(
      lease.resource,
      lease.holderId,
      lease.fence,
      reason,
      cause === undefined ? undefined : { cause },
    );
    this.#lost = error;
    this.#stop.abort(error);
    this.#trust.abort(error);
    try {
      this.#options.onLost?.(error);
    } catch {
      // observers never change the keeper's state
    }
  }

  /**
   * Aborts the signal at the deadline of the lease held now. Adopting a renewed lease wakes it, so
   * a renewal whose deadline is earlier than the previous one (a shorter ttl) is honoured too.
   */
  async #watch(): Promise<void> {
    try {
      while (this.#state === 'held') {
        const remainingMillis = this.#lease.remainingMillis();
        if (remainingMillis <= 0) {
          this.#lose('deadline-passed');
          return;
        }
        const rearm = this.#rearm;
        const linked = linkSignals(this.#stop.signal, rearm.signal);
        try {
          await this.#timers.sleep(remainingMillis, linked.signal);
        } catch (error) {
          if (!rearm.signal.aborted || this.#stop.signal.aborted) throw error;
        } finally {
          linked.dispose();
        }
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#lose('deadline-passed', error);
    }
  }

  /** Makes `lease` the one held and re-arms the watchdog for its deadline. */
  #adopt(lease: L): void {
    this.#lease = lease;
    const previous = this.#rearm;
    this.#rearm = new AbortController();
    previous.abort();
  }

  async #renewLoop(): Promise<void> {
    try {
      while (this.#state === 'held') {
        const lease = this.#lease;
        const windowMillis = lease.deadline.minus(lease.sentAt);
        const waitMillis = lease.remainingMillis() - windowMillis * (1 - this.#renewAtFraction);
        if (waitMillis > 0) await this.#timers.sleep(waitMillis, this.#stop.signal);
        if (this.#state !== 'held') return;
        let result: RenewResult<L>;
        try {
          result = await this.#client.renew(lease, {
            signal: this.#stop.signal,
            ...(this.#ttlMillis === undefined ? {} : { ttlMillis: this.#ttlMillis }),
          });
        } catch (error) {
          if (this.#stop.signal.aborted) return;
          notify(this.#options.onRenewalError, error);
          await this.#timers.sleep(this.#renewalRetryDelayMillis, this.#stop.signal);
          continue;
        }
        // A reply that arrives after the release or the deadline never revives the lease.
        if (this.#state !== 'held') return;
        if (!result.ok) {
          this.#lose(result.reason);
          return;
        }
        // Adopted even when its deadline is earlier than the previous one (a shorter ttl): the
        // keeper follows the latest grant, and the watchdog re-arms for it.
        this.#adopt(result.lease);
        notify(this.#options.onRenewed, result.lease);
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#lose('deadline-passed', error);
    }
  }
}

const notify = <T>(listener: ((value: T) => void) | undefined, value: T): void => {
  try {
    listener?.(value);
  } catch {
    // observers never change the keeper's state
  }
};

/**
 * A lease whose every read goes to the keeper's latest lease: each own field of the lease becomes a
 * getter, each method a function calling the latest lease's method. Built from the lease's own
 * keys, so a field the SDK adds (such as `signedToken`) follows renewals too.
 */
const liveView = <L extends LibraryLease>(current: () => L): L => {
  const view: Record<string, unknown> = {};
  const latest = (): Record<string, unknown> => current() as unknown as Record<string, unknown>;
  for (const key of Object.keys(latest())) {
    if (typeof latest()[key] === 'function') {
      Object.defineProperty(view, key, {
        enumerable: true,
        value: (...args: unknown[]) => (latest()[key] as (...a: unknown[]) => unknown)(...args),
      });
    } else {
      Object.defineProperty(view, key, { enumerable: true, get: () => latest()[key] });
    }
  }
  return Object.freeze(view) as L;
};
