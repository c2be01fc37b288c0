import { ProtocolMisuseError } from '../errors.js';
import type { Clock } from '../time/clock.js';
import { Instant } from '../time/instant.js';
import {
  MAX_TTL_MILLIS,
  describeValue,
  requireFence,
  requireFunction,
  requireId,
  requireMillis,
  requireObject,
  requireTtlMillis,
} from '../validate.js';
import { createLease, type Lease } from './lease.js';
import type { Grant } from './outcomes.js';

/** Options of {@link LeaseClient}. @see docs/design.md § "The library's rules" (Client anchoring) */
export interface LeaseClientOptions {
  /** This holder's clock; `sentAt` and `deadline` are in `clock.domain`. Use a monotonic clock. */
  readonly clock: Clock;
  /** Who this client holds leases as. Non-empty. */
  readonly holderId: string;
  /**
   * Milliseconds subtracted from every deadline to cover clock-rate drift between this host and
   * the coordinator over one TTL. An assumption, not a measurement. Finite, non-negative, and
   * below every granted `ttlMillis`.
   */
  readonly clockSkewMillis: number;
  /**
   * Makes a fresh requestId for every begin call. Must return a non-empty string, unique per call.
   * @defaultValue `globalThis.crypto.randomUUID`
   */
  readonly newRequestId?: () => string;
}

/**
 * A pending acquire, made by {@link LeaseClient.beginAcquire}: send it (it is plain data apart
 * from `sentAt`), and on a grant call {@link LeaseClient.completeAcquire} once. A retry after a
 * lost reply resends the same request, so the coordinator answers with the same grant.
 * @see docs/design.md § "The library's rules" (Client anchoring; Retries are idempotent)
 */
export interface AcquireRequest {
  readonly kind: 'acquire';
  readonly resource: string;
  readonly holderId: string;
  /** Fresh per `beginAcquire`. */
  readonly requestId: string;
  /** When the request was sent, on the client's clock (client domain): the deadline's anchor. */
  readonly sentAt: Instant;
  /** Requested duration in milliseconds; absent = the coordinator's default. */
  readonly ttlMillis?: number;
}

/**
 * A pending renewal, made by {@link LeaseClient.beginRenewal}; complete it with {@link LeaseClient.completeRenewal}.
 * @see docs/design.md § "The library's rules" (Client anchoring; Renewal keeps the fence)
 */
export interface RenewalRequest {
  readonly kind: 'renewal';
  readonly resource: string;
  readonly holderId: string;
  /** The fence of the lease being renewed; the grant must carry the same fence. */
  readonly fence: number;
  /** Fresh per `beginRenewal`. */
  readonly requestId: string;
  /** When the request was sent (client domain): the new deadline's anchor. */
  readonly sentAt: Instant;
  /** Requested duration in milliseconds; absent = the lease's current duration. */
  readonly ttlMillis?: number;
}

type Pending = 'pending' | 'completed';

const defaultRequestId = (): string => globalThis.crypto.randomUUID();

/**
 * The holder's side of the lease protocol. It never talks to the network: `begin*` stamps a
 * request with the instant it is sent and a fresh requestId, the caller delivers it, and
 * `complete*` turns the coordinator's grant into a {@link Lease} whose deadline is anchored at
 * the send instant: `deadline = request.sentAt + grant.ttlMillis - clockSkewMillis`. The holder's
 * window is therefore always inside the coordinator's, however slow the round trip.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring)
 * @example
 * ```ts
 * const client = new LeaseClient({ clock: createMonotonicClock('agent-a'), holderId: 'agent-a', clockSkewMillis: 500 });
 * const request = client.beginAcquire('deploy-slot');
 * const outcome = coordinator.acquire(request);
 * if (outcome.ok) gate.commit(client.completeAcquire(request, outcome.grant).token, () => write());
 * ```
 */
export class LeaseClient {
  /** Who this client holds leases as. */
  readonly holderId: string;
  /** Milliseconds subtracted from every deadline. */
  readonly clockSkewMillis: number;
  private readonly clock: Clock;
  private readonly newRequestId: () => string;
  private readonly requests = new WeakMap<object, Pending>();
  private readonly issuedLeases = new WeakSet<Lease>();

  /**
   * @throws TypeError if `clock` is not a Clock, `holderId` is empty or `newRequestId` is not a
   *   function; RangeError if `clockSkewMillis` is negative or not finite.
   */
  constructor(options: LeaseClientOptions) {
    const api = 'LeaseClient';
    requireObject(api, 'options', options);
    const { clock } = options;
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
      throw new TypeError(`${api}: clock must be a Clock (an object with now()), got ${describeValue(clock)}`);
    }
    requireId(api, 'holderId', options.holderId);
    requireMillis(api, 'clockSkewMillis', options.clockSkewMillis, 0);
    if (options.clockSkewMillis >= MAX_TTL_MILLIS) {
      throw new RangeError(
        `${api}: clockSkewMillis must be below the largest ttl ${MAX_TTL_MILLIS} (milliseconds), got ${options.clockSkewMillis}`,
      );
    }
    const newRequestId = options.newRequestId ?? defaultRequestId;
    requireFunction(api, 'newRequestId', newRequestId);
    this.clock = clock;
    this.holderId = options.holderId;
    this.clockSkewMillis = options.clockSkewMillis;
    this.newRequestId = newRequestId;
  }

  /**
   * Starts an acquisition: stamps `sentAt` (reads the clock once) and a fresh requestId. Call it
   * immediately before sending.
   * @param resource - Non-empty.
   * @param options - `ttlMillis`: requested duration (ms, integer in [1, {@link MAX_TTL_MILLIS}], above `clockSkewMillis`).
   * @throws TypeError / RangeError on bad arguments (the clock is not read).
   * @see docs/design.md § "The library's rules" (Client anchoring)
   */
  beginAcquire(resource: string, options: { readonly ttlMillis?: number } = {}): AcquireRequest {
    const api = 'LeaseClient.beginAcquire';
    requireId(api, 'resource', resource);
    const ttlMillis = this.requestedTtl(api, options);
    const requestId = this.freshRequestId(api);
    const request: AcquireRequest = Object.freeze({
      kind: 'acquire',
      resource,
      holderId: this.holderId,
      requestId,
      sentAt: this.clock.now(),
      ...(ttlMillis === undefined ? {} : { ttlMillis }),
    });
    this.requests.set(request, 'pending');
    return request;
  }

  /**
   * Starts a renewal of `lease`: stamps `sentAt` and a fresh requestId.
   * @param lease - A lease made by this client.
   * @param options - `ttlMillis`: new duration (ms); absent keeps the lease's duration.
   * @throws {@link ProtocolMisuseError} if `lease` was not made by this client.
   * @throws TypeError / RangeError on bad options.
   * @see docs/design.md § "The library's rules" (Renewal keeps the fence)
   */
  beginRenewal(lease: Lease, options: { readonly ttlMillis?: number } = {}): RenewalRequest {
    const api = 'LeaseClient.beginRenewal';
    if (!this.issuedLeases.has(lease)) {
      throw new ProtocolMisuseError(
        `${api}: lease was not made by this client (holder ${JSON.stringify(this.holderId)}); only renew leases from completeAcquire/completeRenewal`,
      );
    }
    const ttlMillis = this.requestedTtl(api, options);
    const requestId = this.freshRequestId(api);
    const request: RenewalRequest = Object.freeze({
      kind: 'renewal',
      resource: lease.resource,
      holderId: this.holderId,
      fence: lease.fence,
      requestId,
      sentAt: this.clock.now(),
      ...(ttlMillis === undefined ? {} : { ttlMillis }),
    });
    this.requests.set(request, 'pending');
    return request;
  }

  /**
   * Turns the coordinator's grant into a {@link Lease} whose deadline is anchored at the
   * instant the request was sent: `deadline = request.sentAt + grant.ttlMillis - clockSkewMillis`.
   * Does not read the clock.
   *
   * @param request - The pending request from {@link LeaseClient.beginAcquire}. Completes once.
   * @param grant - The coordinator's grant for this request (same requestId, resource, holder).
   *   `coordinatorExpiresAt` may be an Instant or its JSON form `{ millis, domain }`.
   * @returns A lease whose `deadline` is an Instant in this client's clock domain.
   * @throws {@link ProtocolMisuseError} if `request` was already completed or not made by this
   *   client, or `grant` belongs to another request, resource or holder. The request stays pending.
   * @throws RangeError if `grant.ttlMillis <= clockSkewMillis` (the lease would be dead on arrival);
   *   TypeError / RangeError on a malformed grant.
   * @see docs/design.md § "The library's rules" (Client anchoring)
   */
  completeAcquire(request: AcquireRequest, grant: Grant): Lease {
    return this.complete('LeaseClient.completeAcquire', 'acquire', request, grant);
  }

  /**
   * Turns a renewal grant into a new {@link Lease} (same fence), anchored at the renewal's send
   * instant: `deadline = request.sentAt + grant.ttlMillis - clockSkewMillis`.
   *
   * @param request - The pending request from {@link LeaseClient.beginRenewal}. Completes once.
   * @param grant - The coordinator's grant for this renewal (same requestId, resource, holder, fence).
   * @throws {@link ProtocolMisuseError} on a second completion, or a grant for another request,
   *   resource, holder or fence.
   * @throws RangeError if `grant.ttlMillis <= clockSkewMillis`.
   * @see docs/design.md § "The library's rules" (Client anchoring; Renewal keeps the fence)
   */
  completeRenewal(request: RenewalRequest, grant: Grant): Lease {
    return this.complete('LeaseClient.completeRenewal', 'renewal', request, grant);
  }

  private complete(
    api: string,
    kind: 'acquire' | 'renewal',
    request: AcquireRequest | RenewalRequest,
    grant: Grant,
  ): Lease {
    requireObject(api, 'request', request);
    const state = this.requests.get(request);
    if (state === undefined || request.kind !== kind) {
      throw new ProtocolMisuseError(
        `${api}: request was not made by this client's begin${kind === 'acquire' ? 'Acquire' : 'Renewal'}`,
      );
    }
    if (state === 'completed') {
      throw new ProtocolMisuseError(
        `${api}: request ${JSON.stringify(request.requestId)} was already completed; a send instant anchors exactly one deadline`,
      );
    }
    requireObject(api, 'grant', grant);
    requireId(api, 'grant.resource', grant.resource);
    requireId(api, 'grant.holderId', grant.holderId);
    requireId(api, 'grant.requestId', grant.requestId);
    requireFence(api, 'grant.fence', grant.fence);
    requireTtlMillis(api, 'grant.ttlMillis', grant.ttlMillis);
    const mismatch = (field: string, expected: unknown, got: unknown): never => {
      throw new ProtocolMisuseError(
        `${api}: grant.${field} is ${describeValue(got)} but the request's is ${describeValue(expected)}; this grant answers another request`,
      );
    };
    if (grant.requestId !== request.requestId) mismatch('requestId', request.requestId, grant.requestId);
    if (grant.resource !== request.resource) mismatch('resource', request.resource, grant.resource);
    if (grant.holderId !== this.holderId) mismatch('holderId', this.holderId, grant.holderId);
    if (request.kind === 'renewal' && grant.fence !== request.fence) mismatch('fence', request.fence, grant.fence);
    if (grant.ttlMillis <= this.clockSkewMillis) {
      throw new RangeError(
        `${api}: grant.ttlMillis (${grant.ttlMillis} ms) must exceed clockSkewMillis (${this.clockSkewMillis} ms); the lease would be dead on arrival`,
      );
    }
    const coordinatorExpiresAt = toInstant(api, grant.coordinatorExpiresAt);

    this.requests.set(request, 'completed');
    const lease = createLease(
      {
        resource: grant.resource,
        holderId: grant.holderId,
        fence: grant.fence,
        ttlMillis: grant.ttlMillis,
        sentAt: request.sentAt,
        deadline: request.sentAt.plus(grant.ttlMillis - this.clockSkewMillis),
        coordinatorExpiresAt,
      },
      this.clock,
    );
    this.issuedLeases.add(lease);
    return lease;
  }

  private requestedTtl(api: string, options: { readonly ttlMillis?: number }): number | undefined {
    requireObject(api, 'options', options);
    const { ttlMillis } = options;
    if (ttlMillis === undefined) return undefined;
    requireTtlMillis(api, 'options.ttlMillis', ttlMillis);
    if (ttlMillis <= this.clockSkewMillis) {
      throw new RangeError(
        `${api}: options.ttlMillis (${ttlMillis} ms) must exceed clockSkewMillis (${this.clockSkewMillis} ms)`,
      );
    }
    return ttlMillis;
  }

  private freshRequestId(api: string): string {
    const requestId = this.newRequestId();
    if (typeof requestId !== 'string' || requestId.length === 0) {
      throw new TypeError(`${api}: newRequestId() must return a non-empty string, got ${describeValue(requestId)}`);
    }
    return requestId;
  }
}

/** Accepts an Instant or its JSON form (a grant that crossed the wire). */
const toInstant = (api: string, value: unknown): Instant => {
  if (value instanceof Instant) return value;
  requireObject(api, 'grant.coordinatorExpiresAt', value);
  const json = value as { readonly millis?: unknown; readonly domain?: unknown };
  return Instant.of(json.millis as number, json.domain as string);
};
