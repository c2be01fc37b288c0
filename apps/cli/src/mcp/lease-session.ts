/**
 * The leases of one MCP session: acquired through the agent SDK, kept renewed by its
 * {@link LeaseKeeper} while the session lives, released when it ends, and every loss queued so
 * the next tool result says it plainly (and the server also sends it as a notification).
 */
import {
  systemTimers,
  type AcquireDenial,
  type Lease,
  type LeaseFenceClient,
  type LeaseKeeper,
  type LeaseLostError,
  type ReleaseResult,
  type Timers,
} from '@lease-fence/client';

/**
 * The longest pause between two acquire attempts while waiting, milliseconds: the coordinator's
 * `retryAfterMillis` is the holder's remaining TTL, but a release frees the resource sooner.
 */
export const MAX_ACQUIRE_POLL_MILLIS = 1000;

/** A lease this session holds (or held, until its loss was reported). */
export interface SessionLease {
  readonly resource: string;
  /** The keeper renewing it; its `view` is the latest renewal (same fence, same `signedToken`). */
  readonly keeper: LeaseKeeper;
  /** TTL asked for at the acquire and on every renewal, milliseconds; undefined = the coordinator's default. */
  readonly ttlMillis: number | undefined;
}

/**
 * How an acquire of this session ended. `waitedMillis`: from the first attempt to the last one's
 * answer, milliseconds; 0 when the first attempt decided (no waiting, only the request's own time).
 */
export type SessionAcquireResult =
  | { readonly ok: true; readonly lease: Lease; readonly waitedMillis: number }
  | { readonly ok: false; readonly reason: 'already-held-here'; readonly lease: Lease }
  | (AcquireDenial & { readonly waitedMillis: number });

/** Options of {@link LeaseSession}. */
export interface LeaseSessionOptions {
  /** Called once per lost lease, as soon as its keeper gives it up (for the notification). */
  readonly onLost?: (error: LeaseLostError) => void;
  /** How waits between acquire attempts sleep. @defaultValue the SDK's `systemTimers` */
  readonly timers?: Timers;
  /** Monotonic milliseconds for the wait budget. @defaultValue `performance.now` */
  readonly nowMillis?: () => number;
}

/**
 * One MCP session's leases, by resource. Not safe to share between sessions: each session
 * releases only its own leases when it ends.
 */
export class LeaseSession {
  readonly #client: LeaseFenceClient;
  readonly #leases = new Map<string, SessionLease>();
  /** Losses not yet told in a tool result, oldest first. */
  readonly #untoldLosses: LeaseLostError[] = [];
  readonly #ended = new AbortController();
  /** Acquire requests of this session not answered yet, by resource. */
  readonly #acquireRequests = new Map<string, Set<Promise<unknown>>>();
  readonly #options: LeaseSessionOptions;

  /** @param client - The agent's SDK client (its token's holder takes every lease of this session). */
  constructor(client: LeaseFenceClient, options: LeaseSessionOptions = {}) {
    this.#client = client;
    this.#options = options;
  }

  /** The holder every lease of this session is granted to. */
  get holderId(): string {
    return this.#client.holderId;
  }

  /** Aborted when the session ends: pending acquires and requests stop. */
  get signal(): AbortSignal {
    return this.#ended.signal;
  }

  /** The leases held or lost-but-not-yet-forgotten, by resource. */
  get leases(): ReadonlyMap<string, SessionLease> {
    return this.#leases;
  }

  /**
   * Acquires `resource`, trying again while it is `held` or in `lock-delay` until `waitMillis`
   * have passed (each retry after the coordinator's `retryAfterMillis`, at most
   * {@link MAX_ACQUIRE_POLL_MILLIS}, and no later than the wait's end).
   * Once acquired, the lease is renewed in the background until released, lost or the session ends.
   *
   * A grant that arrives once the call was cancelled or the session ended is released at once,
   * not kept: nobody would be told of it, and it would be renewed for nobody.
   *
   * @param ttlMillis - Lease duration asked for, milliseconds; undefined = the coordinator's default.
   * @param waitMillis - How long to keep trying while another holder has it, milliseconds (0 = one try).
   * @param signal - The call's own signal (the MCP client cancelled it, or went away): stops the
   *   wait and the request, like the session's end.
   * @param onWaiting - Called before each pause between attempts with the milliseconds waited so
   *   far and the denial that made it wait (the MCP server turns it into a progress notification).
   * @throws what `LeaseFenceClient.acquire` throws (coordinator unreachable or unavailable, bad
   *   input); the abort reason once `signal` is aborted or the session ended.
   */
  async acquire(
    resource: string,
    ttlMillis: number | undefined,
    waitMillis: number,
    signal?: AbortSignal,
    onWaiting?: (waitedMillis: number, denial: AcquireDenial) => void,
  ): Promise<SessionAcquireResult> {
    const existing = this.#leases.get(resource);
    if (existing !== undefined && existing.keeper.state === 'held')
      return { ok: false, reason: 'already-held-here', lease: existing.keeper.view };
    // A lease of this session given up by its deadline may still be the coordinator's (a
    // coordinator that was unreachable, a renewal that arrived too late): it would answer
    // `already-held`, as if another session had it. Give it back first (the keeper sends nothing
    // for one the coordinator already expired or took away); a release that fails leaves it to
    // its TTL, and the acquire says what the coordinator says.
    if (existing !== undefined) await existing.keeper.release().catch(() => undefined);
    const now = this.#options.nowMillis ?? (() => performance.now());
    const timers = this.#options.timers ?? systemTimers;
    const stop = this.callSignal(signal);
    const started = now();
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.#tracked(
        resource,
        this.#client.acquire(resource, { ...(ttlMillis === undefined ? {} : { ttlMillis }), signal: stop }),
      );
      const elapsedMillis = Math.round(now() - started);
      const waitedMillis = attempt === 1 ? 0 : elapsedMillis;
      if (result.ok && stop.aborted) {
        await this.#client.release(result.lease).catch(() => undefined); // else it expires after its TTL
        throw stop.reason;
      }
      if (result.ok) {
        const keeper = this.#client.keep(result.lease, {
          ...(ttlMillis === undefined ? {} : { ttlMillis }),
          onLost: (error) => {
            this.#untoldLosses.push(error);
            this.#options.onLost?.(error);
          },
        });
        this.#leases.set(resource, { resource, keeper, ttlMillis });
        return { ok: true, lease: keeper.view, waitedMillis };
      }
      if (result.reason === 'already-held') {
        // Acquires racing in one session: another call's request may have been granted it, its
        // answer not read yet. Once those requests are answered, a lease of this session is said
        // to be this session's, not "your agent's, from another session".
        await Promise.allSettled(this.#acquireRequests.get(resource) ?? []);
        const mine = this.#leases.get(resource);
        if (mine?.keeper.state === 'held' && mine.keeper.lease.fence === result.fence)
          return { ok: false, reason: 'already-held-here', lease: mine.keeper.view };
      }
      const leftMillis = waitMillis - elapsedMillis;
      if ((result.reason !== 'held' && result.reason !== 'lock-delay') || leftMillis <= 0)
        return { ...result, waitedMillis };
      onWaiting?.(elapsedMillis, result);
      await timers.sleep(Math.max(1, Math.min(result.retryAfterMillis, MAX_ACQUIRE_POLL_MILLIS, leftMillis)), stop);
    }
  }

  /**
   * `request` (an acquire of `resource` sent by this session), known as in flight until it is
   * answered; the call that sent it reads the answer first (it awaited first).
   */
  async #tracked<T>(resource: string, request: Promise<T>): Promise<T> {
    let inFlight = this.#acquireRequests.get(resource);
    if (inFlight === undefined) this.#acquireRequests.set(resource, (inFlight = new Set()));
    inFlight.add(request);
    try {
      return await request;
    } finally {
      inFlight.delete(request);
      if (inFlight.size === 0) this.#acquireRequests.delete(resource);
    }
  }

  /**
   * The signal a tool call of this session runs under: aborted when the session ends or, given
   * the call's own `signal`, when that one is (the MCP client cancelled the call).
   */
  callSignal(signal?: AbortSignal): AbortSignal {
    return signal === undefined ? this.#ended.signal : AbortSignal.any([this.#ended.signal, signal]);
  }

  /**
   * Renews the lease on `resource` now, besides the keeper's own schedule (which goes on with the
   * acquire's TTL). Undefined when this session has no lease on it. A renewal the coordinator
   * refuses (`expired`, `not-holder`) ends the lease in this session as a loss does.
   *
   * @param signal - The call's own signal (see {@link LeaseSession.acquire}).
   * @throws what `LeaseFenceClient.renew` throws.
   */
  async renew(
    resource: string,
    ttlMillis: number | undefined,
    signal?: AbortSignal,
  ): Promise<SessionLeaseRenewal | undefined> {
    const held = this.#leases.get(resource);
    if (held === undefined) return undefined;
    if (held.keeper.state !== 'held') return { ok: false, reason: 'lost', lost: held.keeper.lost };
    const result = await this.#client.renew(held.keeper.view, {
      ...(ttlMillis === undefined ? {} : { ttlMillis }),
      signal: this.callSignal(signal),
    });
    if (result.ok) return { ok: true, lease: result.lease };
    // The coordinator says the fence is not this holder's any more (expired, or released or taken
    // behind the session's back): the keeper stops, so no write is sent with it, as after a loss
    // it found itself. A renewal answered after its own deadline says nothing of the lease.
    if (result.reason !== 'dead-on-arrival') await held.keeper.release().catch(() => undefined);
    return { ok: false, reason: result.reason, lost: undefined };
  }

  /**
   * Stops renewing the lease on `resource` and gives it back to the coordinator. Undefined when
   * this session has no lease on it.
   *
   * @throws what `LeaseFenceClient.release` throws (the lease is forgotten by the session anyway).
   */
  async release(resource: string): Promise<{ readonly fence: number; readonly result: ReleaseResult } | undefined> {
    const held = this.#leases.get(resource);
    if (held === undefined) return undefined;
    this.#leases.delete(resource);
    return { fence: held.keeper.lease.fence, result: await held.keeper.release() };
  }

  /** The live lease on `resource`, the loss that ended it, or nothing. */
  current(
    resource: string,
  ):
    | { readonly state: 'held'; readonly lease: Lease }
    | { readonly state: 'lost'; readonly lease: Lease; readonly lost: LeaseLostError | undefined }
    | { readonly state: 'none' } {
    const held = this.#leases.get(resource);
    if (held === undefined) return { state: 'none' };
    if (held.keeper.state === 'held') return { state: 'held', lease: held.keeper.view };
    return { state: 'lost', lease: held.keeper.lease, lost: held.keeper.lost };
  }

  /** Losses not told yet (oldest first); each is returned once. */
  takeUntoldLosses(): LeaseLostError[] {
    return this.#untoldLosses.splice(0, this.#untoldLosses.length);
  }

  /**
   * Ends the session: aborts pending acquires and requests, stops every keeper and releases
   * every lease still held. Idempotent. Never throws: a release that fails leaves the lease to
   * expire after its TTL.
   *
   * @returns How many leases were released (confirmed by the coordinator).
   */
  async close(): Promise<number> {
    if (this.#ended.signal.aborted) return 0;
    this.#ended.abort(new Error('the MCP session ended'));
    const held = [...this.#leases.values()];
    this.#leases.clear();
    const results = await Promise.allSettled(held.map((lease) => lease.keeper.release()));
    return results.filter((result) => result.status === 'fulfilled' && result.value.ok).length;
  }
}

/** Result of {@link LeaseSession.renew}. */
export type SessionLeaseRenewal =
  | { readonly ok: true; readonly lease: Lease }
  | {
      readonly ok: false;
      readonly reason: 'lost' | 'expired' | 'not-holder' | 'dead-on-arrival';
      /** Why the keeper gave it up, when `reason` is `'lost'`. */
      readonly lost: LeaseLostError | undefined;
    };
