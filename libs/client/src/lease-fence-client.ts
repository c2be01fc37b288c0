/**
 * The agent SDK: acquire, renew and release leases over the coordinator's HTTP API, with the
 * library's {@link LeaseClient} doing the anchoring, so a holder's deadline is always inside the
 * coordinator's, however slow or lossy the network.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring; Retries are idempotent)
 */
import {
  AlreadyHeldReplySchema,
  ExpiredReplySchema,
  GrantReplySchema,
  HeldReplySchema,
  LockDelayReplySchema,
  NotHolderReplySchema,
  ReleaseReplySchema,
  type AcquireBody,
  type ReleaseBody,
  type RenewBody,
  type AgentOp,
  type WireGrant,
} from '@lease-fence/protocol';
import {
  Instant,
  LeaseClient,
  ProtocolMisuseError,
  createMonotonicClock,
  type Clock,
  type Grant,
  type Lease as LibraryLease,
} from 'lease-fence';
import { CoordinatorHttp, type ParsedReply, type ReplySchemas } from './coordinator-http.js';
import { CoordinatorWebSocket, type CoordinatorWebSocketOptions } from './coordinator-websocket.js';
import { checkPingIntervalMillis } from './link-keepalive.js';
import { LeaseKeeper, type LeaseKeeperOptions } from './lease-keeper.js';
import { linkSignals } from './linked-signal.js';
import type { LeaseLostError } from './errors.js';
import type { AcquireDenial, AcquireResult, DeadOnArrival, ReleaseResult, RenewResult } from './results.js';
import { signedLease, type Lease } from './signed-lease.js';
import { systemTimers, type Timers } from './timers.js';

/**
 * Options of {@link LeaseFenceClient}: the connection settings, the agent link's keepalive
 * (`pingIntervalMillis`, used by the `'websocket'` transport, checked on both), and the holder's.
 */
export interface LeaseFenceClientOptions extends CoordinatorWebSocketOptions {
  /**
   * The holder id the agent token is bound to (the coordinator takes the holder from the token).
   * Every grant is checked against it; a mismatch throws `ProtocolMisuseError`.
   */
  readonly holderId: string;
  /**
   * Milliseconds subtracted from every deadline to cover clock-rate drift between this host and
   * the coordinator over one TTL. Finite, 0 ≤ clockSkewMillis < every ttl asked for.
   */
  readonly clockSkewMillis: number;
  /**
   * This holder's clock (deadlines are in its domain). Use a monotonic one.
   * @defaultValue `createMonotonicClock('client:<holderId>:<random>')`
   */
  readonly clock?: Clock;
  /** Fresh requestId per intent. @defaultValue `crypto.randomUUID` */
  readonly newRequestId?: () => string;
  /**
   * How operations reach the coordinator:
   * - `'http'`: one HTTP request per operation (keep-alive sockets). Nothing to close.
   * - `'websocket'`: one long-lived WebSocket (`/v1/agent`) for this client, many operations in
   *   flight on it; reconnects on the next operation after a drop, resending the operations in
   *   flight with the same requestId. A silent link (a frozen or partitioned-away coordinator) is
   *   dropped too: see `pingIntervalMillis`. Fewer round trips and much less CPU per operation on both
   *   sides; call {@link LeaseFenceClient.close} when done (an open socket keeps the process alive).
   *
   * Both give the same outcomes, errors and retries. The default is `'http'` because it needs no
   * `close()` (existing programs end as before) and passes through any HTTP proxy.
   * @defaultValue 'http'
   */
  readonly transport?: 'http' | 'websocket';
}

/** One lease operation on either transport. */
interface LeaseTransport {
  readonly baseUrl: string;
  send<T>(
    operation: string,
    op: AgentOp,
    resource: string,
    body: unknown,
    replies: ReplySchemas<T>,
    signal?: AbortSignal,
  ): Promise<ParsedReply<T>>;
  close(): Promise<void>;
}

/** The transport named by `options.transport`. @throws TypeError for another value. */
const openTransport = (options: LeaseFenceClientOptions): LeaseTransport => {
  const api = 'LeaseFenceClient';
  switch (options.transport ?? 'http') {
    case 'http': {
      checkPingIntervalMillis(api, options.pingIntervalMillis); // unused over HTTP, refused all the same
      const http = new CoordinatorHttp(api, options);
      return {
        baseUrl: http.baseUrl,
        send: (operation, op, resource, body, replies, signal) =>
          http.post(operation, leasePath(resource, op), body, replies, signal),
        close: () => Promise.resolve(),
      };
    }
    case 'websocket': {
      const link = new CoordinatorWebSocket(api, options);
      return {
        baseUrl: link.baseUrl,
        send: (operation, op, resource, body, replies, signal) =>
          link.request(operation, op, resource, body, replies, signal),
        close: () => link.close(),
      };
    }
    default:
      throw new TypeError(`${api}: transport must be 'http' or 'websocket', got ${JSON.stringify(options.transport)}`);
  }
};

/** Per-call options of {@link LeaseFenceClient.acquire} and {@link LeaseFenceClient.renew}. */
export interface LeaseRequestOptions {
  /** Requested lease duration in milliseconds (integer above `clockSkewMillis`); absent = the coordinator's default (acquire) or the lease's (renew). */
  readonly ttlMillis?: number;
  /** Aborts the request and its retries; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** Options of {@link LeaseFenceClient.withLease}: the acquisition's and the keeper's. */
export interface WithLeaseOptions extends LeaseKeeperOptions {
  /** Requested lease duration in milliseconds; absent = the coordinator's default. */
  readonly ttlMillis?: number;
  /** Aborts the acquisition, and, once held, the callback's signal too. */
  readonly signal?: AbortSignal;
}

/**
 * Result of {@link LeaseFenceClient.withLease}: the callback's value, or the acquisition's denial
 * (the callback did not run).
 */
export type WithLeaseResult<T> =
  | {
      readonly ok: true;
      /** What the callback resolved to. */
      readonly value: T;
      /** Set when the lease was lost while the callback ran (its signal was aborted with it). */
      readonly lost: LeaseLostError | undefined;
      /** The release at the end, or why it could not be sent. */
      readonly release:
        ReleaseResult | { readonly ok: false; readonly reason: 'release-failed'; readonly error: unknown };
    }
  | AcquireDenial;

const ACQUIRE_REPLIES: ReplySchemas<
  | { ok: true; grant: WireGrant }
  | { ok: false; reason: 'held'; heldBy: string; retryAfterMillis: number }
  | { ok: false; reason: 'already-held'; heldBy: string; fence: number; retryAfterMillis: number }
  | { ok: false; reason: 'expired'; fence?: number | undefined }
  | { ok: false; reason: 'lock-delay'; retryAfterMillis: number }
> = {
  200: GrantReplySchema,
  409: HeldReplySchema.or(AlreadyHeldReplySchema).or(LockDelayReplySchema),
  410: ExpiredReplySchema,
};

const RENEW_REPLIES: ReplySchemas<
  { ok: true; grant: WireGrant } | { ok: false; reason: 'expired' | 'not-holder'; fence?: number | undefined }
> = {
  200: GrantReplySchema,
  409: NotHolderReplySchema.or(ExpiredReplySchema),
  410: ExpiredReplySchema,
};

const RELEASE_REPLIES: ReplySchemas<
  { ok: true } | { ok: false; reason: 'expired' | 'not-holder'; fence?: number | undefined }
> = {
  200: ReleaseReplySchema,
  409: NotHolderReplySchema.or(ExpiredReplySchema),
  410: ExpiredReplySchema,
};

const leasePath = (resource: string, action: AgentOp): string => `/v1/leases/${encodeURIComponent(resource)}/${action}`;

const toGrant = ({ signedToken: _signedToken, ...wire }: WireGrant): Grant => ({
  ...wire,
  coordinatorExpiresAt: Instant.of(wire.coordinatorExpiresAt.millis, wire.coordinatorExpiresAt.domain),
});

/**
 * An agent's connection to the coordinator: leases for one holder (the agent token's).
 *
 * - A retry after a timeout or a lost reply resends the same request: same `requestId` (so the
 *   coordinator answers with the grant it already made, never a second fence for one intent) and
 *   the same send instant as the deadline's anchor (the FIRST send).
 * - A grant that arrives dead (its deadline already past) is released and returned as
 *   `'dead-on-arrival'`, never as a live lease.
 * - Only network errors, timeouts and 503 are retried (with backoff and jitter); denials are
 *   data; other statuses throw {@link CoordinatorHttpError}.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring; Retries are idempotent)
 * @example
 * ```ts
 * const client = new LeaseFenceClient({ baseUrl: 'http://127.0.0.1:3000', token, holderId: 'agent-1', clockSkewMillis: 100 });
 * const result = await client.withLease('deploy-slot-a', async (lease, signal) => {
 *   await deploySlot.write(lease.signedToken, signal); // the resource verifies it, then its FenceGate checks the fence
 * });
 * ```
 */
export class LeaseFenceClient {
  /** The holder this client acquires as. */
  readonly holderId: string;
  readonly #transport: LeaseTransport;
  readonly #leases: LeaseClient;
  readonly #timers: Timers;
  readonly #keepers = new WeakMap<Lease, LeaseKeeper>();
  /** The library lease behind each SDK lease: the library renews only the leases it made. */
  readonly #libraryLeases = new WeakMap<Lease, LibraryLease>();

  /**
   * @throws TypeError when `baseUrl` is not an http(s) URL, `token` or `holderId` is empty, `clock` is not a Clock, or `transport` is unknown.
   * @throws RangeError when `clockSkewMillis`, `timeoutMillis`, `pingIntervalMillis` or a `retry` field is out of range.
   */
  constructor(options: LeaseFenceClientOptions) {
    this.#transport = openTransport(options);
    this.#leases = new LeaseClient({
      clock:
        options.clock ?? createMonotonicClock(`client:${String(options.holderId)}:${globalThis.crypto.randomUUID()}`),
      holderId: options.holderId,
      clockSkewMillis: options.clockSkewMillis,
      ...(options.newRequestId === undefined ? {} : { newRequestId: options.newRequestId }),
    });
    this.holderId = this.#leases.holderId;
    this.#timers = options.timers ?? systemTimers;
  }

  /**
   * The clock skew allowance this client was built with, in milliseconds: every TTL it asks for
   * must exceed it (see {@link LeaseRequestOptions.ttlMillis}).
   */
  get clockSkewMillis(): number {
    return this.#leases.clockSkewMillis;
  }

  /** The coordinator's base URL. */
  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  /**
   * Closes the client's connection (the `'websocket'` transport's socket; nothing for `'http'`).
   * Operations still in flight reject; later calls throw. Idempotent.
   */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /**
   * Asks for a lease on `resource`. Anchors the deadline at the first send; retries of this call
   * reuse its requestId.
   *
   * @returns A live lease carrying the coordinator's `signedToken` (pass it to the resource), or a
   *   denial as data ({@link AcquireResult}).
   * @throws {@link CoordinatorUnreachableError} when every attempt failed without an answer (the
   *   coordinator may have granted the lease; it then expires after its ttl).
   * @throws {@link CoordinatorUnavailableError} when every attempt failed transiently and the last
   *   was answered 503 (`reason`: `recovering`, `event-log-unavailable`, …).
   * @throws {@link CoordinatorHttpError} / {@link CoordinatorReplyError} on an unexpected reply.
   * @throws `ProtocolMisuseError` when the grant names another holder than `holderId` (the
   *   grant is released first; the message names the holderId to configure); TypeError / RangeError on bad arguments (nothing is sent).
   */
  async acquire(resource: string, options: LeaseRequestOptions = {}): Promise<AcquireResult> {
    const request = this.#leases.beginAcquire(resource, ttlOption(options));
    const body: AcquireBody = { requestId: request.requestId, ...ttlOption(options) };
    const { value } = await this.#transport.send(
      `acquire ${resource}`,
      'acquire',
      resource,
      body,
      ACQUIRE_REPLIES,
      options.signal,
    );
    if (!value.ok)
      return value.reason === 'expired' && value.fence === undefined ? { ok: false, reason: 'expired' } : value;
    let lease: LibraryLease;
    try {
      lease = this.#leases.completeAcquire(request, toGrant(value.grant));
    } catch (error) {
      const released = await this.#releaseQuietly(resource, value.grant.fence);
      if (value.grant.holderId === this.holderId) throw error;
      // The coordinator grants to the holder its tokens file gives the token: the usual cause is
      // a holderId copied from an example. Say which one to configure, not only that they differ.
      throw new ProtocolMisuseError(
        `LeaseFenceClient.acquire: holderId is ${JSON.stringify(this.holderId)}, but the coordinator granted ` +
          `${JSON.stringify(resource)} to ${JSON.stringify(value.grant.holderId)}, the holder its tokens file gives ` +
          `this client's token (GET /v1/whoami shows it): set holderId to ${JSON.stringify(value.grant.holderId)}. ` +
          `The grant (fence ${value.grant.fence}) was ${released ? 'released' : 'not released (it expires after its ttl)'}.`,
        { cause: error },
      );
    }
    return this.#liveOrDead(this.#signed(lease, value.grant.signedToken));
  }

  /**
   * Extends `lease` (same fence). The new deadline is anchored at this renewal's first send.
   * Retries resend the same renewal. A renewal never revives a lease whose generation ended.
   *
   * @param lease - A lease from this client (or the live view `withLease` passes).
   * @throws like {@link LeaseFenceClient.acquire}; `ProtocolMisuseError` for a lease of another client.
   */
  async renew(lease: Lease, options: LeaseRequestOptions = {}): Promise<RenewResult> {
    const current = this.#keepers.get(lease)?.lease ?? lease;
    const request = this.#leases.beginRenewal(this.#libraryLeases.get(current) ?? current, ttlOption(options));
    const body: RenewBody = { requestId: request.requestId, fence: request.fence, ...ttlOption(options) };
    const { value } = await this.#transport.send(
      `renew ${current.resource}`,
      'renew',
      current.resource,
      body,
      RENEW_REPLIES,
      options.signal,
    );
    if (!value.ok) return { ok: false, reason: value.reason };
    return this.#liveOrDead(
      this.#signed(this.#leases.completeRenewal(request, toGrant(value.grant)), value.grant.signedToken),
    );
  }

  /**
   * Gives `lease` back, so others need not wait for its expiry.
   * @returns `{ ok: true }` or a denial ({@link ReleaseResult}).
   * @throws like {@link LeaseFenceClient.acquire}.
   */
  async release(lease: Lease, options: { readonly signal?: AbortSignal } = {}): Promise<ReleaseResult> {
    const body: ReleaseBody = { fence: lease.fence };
    const { value } = await this.#transport.send(
      `release ${lease.resource}`,
      'release',
      lease.resource,
      body,
      RELEASE_REPLIES,
      options.signal,
    );
    return value.ok ? { ok: true } : { ok: false, reason: value.reason };
  }

  /**
   * Keeps `lease` alive in the background until released or lost: see {@link LeaseKeeper}.
   * @param lease - A live lease from this client.
   */
  keep(lease: Lease, options: LeaseKeeperOptions = {}): LeaseKeeper {
    const keeper = new LeaseKeeper(this, lease, { timers: this.#timers, ...options });
    this.#keepers.set(keeper.view, keeper);
    return keeper;
  }

  /**
   * Acquires `resource`, runs `fn` while renewing in the background, and releases at the end
   * (also when `fn` throws; the error is rethrown after the release).
   *
   * `fn` receives a live view of the lease (its `deadline` follows renewals) and a signal that is
   * aborted with a {@link LeaseLostError} as soon as the lease can no longer be trusted (renewal
   * answered expired / not-holder, or the deadline passed without a successful renewal). Checking
   * the signal is advisory: write through the resource's `FenceGate` with `lease.token`, or send
   * `lease.signedToken` to a resource that verifies it (`FenceTokenVerifier`, `commitVerified`).
   *
   * @returns `{ ok: true, value, lost, release }`, or the acquisition's denial (fn did not run):
   *   `'held'`, `'already-held'`, `'expired'`, `'dead-on-arrival'`, or `'lock-delay'` while the
   *   resource waits out its lock-delay after its previous holder was lost; after `'held'` and
   *   `'lock-delay'`, call again once `retryAfterMillis` have passed.
   * @throws what `fn` throws; what {@link LeaseFenceClient.acquire} throws.
   * @see docs/design.md § "The library's rules" (FenceGate)
   */
  async withLease<T>(
    resource: string,
    fn: (lease: Lease, signal: AbortSignal) => Promise<T>,
    options: WithLeaseOptions = {},
  ): Promise<WithLeaseResult<T>> {
    if (typeof fn !== 'function')
      throw new TypeError(`LeaseFenceClient.withLease: fn must be a function, got ${typeof fn}`);
    const { ttlMillis, signal, ...keeperOptions } = options;
    const acquired = await this.acquire(resource, {
      ...(ttlMillis === undefined ? {} : { ttlMillis }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (!acquired.ok) return acquired;
    const keeper = this.keep(acquired.lease, keeperOptions);
    const fnSignal = linkSignals(keeper.signal, signal);
    let value: T;
    try {
      value = await fn(keeper.view, fnSignal.signal);
    } catch (error) {
      await keeper.release().catch(() => undefined);
      throw error;
    } finally {
      fnSignal.dispose();
    }
    const lost = keeper.lost;
    const release = await keeper.release().then(
      (result) => result,
      (error: unknown) => ({ ok: false, reason: 'release-failed', error }) as const,
    );
    return { ok: true, value, lost, release };
  }

  #signed(lease: LibraryLease, signedToken: string): Lease {
    const signed = signedLease(lease, signedToken);
    this.#libraryLeases.set(signed, lease);
    return signed;
  }

  async #liveOrDead(lease: Lease): Promise<{ ok: true; lease: Lease } | DeadOnArrival> {
    const remainingMillis = lease.remainingMillis();
    if (remainingMillis > 0) return { ok: true, lease };
    const released = await this.#releaseQuietly(lease.resource, lease.fence);
    return { ok: false, reason: 'dead-on-arrival', fence: lease.fence, lateByMillis: -remainingMillis, released };
  }

  async #releaseQuietly(resource: string, fence: number): Promise<boolean> {
    try {
      const { value } = await this.#transport.send(
        `release ${resource}`,
        'release',
        resource,
        { fence } satisfies ReleaseBody,
        RELEASE_REPLIES,
      );
      return value.ok;
    } catch {
      return false;
    }
  }
}

const ttlOption = (options: LeaseRequestOptions): { ttlMillis?: number } =>
  options.ttlMillis === undefined ? {} : { ttlMillis: options.ttlMillis };
