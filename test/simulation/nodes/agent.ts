/**
 * A simulated agent: a holder driving the real `lease-fence` {@link LeaseClient} over the
 * lossy network. It acquires a resource, then for each write checks its lease (advisory),
 * stalls for a model call of arbitrary length, and sends the write with its fence token;
 * it renews when its lease runs low, and releases or walks away when done. Lost requests are
 * retried with the same request object (same requestId, same send instant).
 *
 * Every decision (which resource, how long a stall, how many writes) comes from the behaviour
 * {@link ChoiceStream}; a 0 choice is the quiet outcome (first resource, no stall, one write).
 */
import type { CoordinatorAcquireOutcome } from '@lease-fence/coordinator-core';
import {
  LeaseClient,
  type AcquireRequest,
  type Instant,
  type Lease,
  type RenewalRequest,
  type RenewOutcome,
} from 'lease-fence';
import type { ChoiceStream } from '../world/choices.js';
import type { SimClock } from '../world/sim-clock.js';
import { formatReading } from '../world/trace.js';
import type { CoordinatorEndpoint } from './resource.js';
import {
  describeResponse,
  type CoordinatorResponse,
  type ResourceRequest,
  type ResourceResponse,
  type WorldContext,
} from './messages.js';

/** How an agent behaves. Durations are milliseconds (true time for timers, the agent's clock for its lease). */
export interface AgentOptions {
  readonly holderId: string;
  readonly clock: SimClock;
  /** The skew bound the client assumes (LeaseClient's `clockSkewMillis`). */
  readonly clockSkewMillis: number;
  readonly resources: readonly string[];
  /** How long to wait for an answer before resending the same request. */
  readonly requestTimeoutMillis: number;
  /** Resends of one request before giving up on it. */
  readonly maxRetries: number;
  /** Shortest and longest pause between acquisitions (other work; a 0 choice gives the shortest). */
  readonly minThinkMillis: number;
  readonly maxThinkMillis: number;
  /** Shortest and longest ordinary model call between the lease check and the write. */
  readonly minStallMillis: number;
  readonly maxStallMillis: number;
  /** Probability and longest duration of a long stall (GC pause, slow model call). */
  readonly longStallProbability: number;
  readonly longStallMaxMillis: number;
  /** Most writes per lease. */
  readonly maxWritesPerLease: number;
  /** Probability of pushing the new fence to the resource right after acquiring. */
  readonly admitProbability: number;
  /** Renew when the lease's remaining time falls below this (agent clock ms). */
  readonly renewBelowMillis: number;
  /**
   * A defect's substitute for the holder's deadline. Real agents use `lease.deadline`
   * (anchored at send time by LeaseClient).
   */
  readonly anchorDeadline?: (lease: Lease, replyReceivedAt: Instant, clockSkewMillis: number) => Instant;
}

/** A resource, as an agent reaches it. */
export interface ResourceEndpoint {
  receive(from: string, request: ResourceRequest, reply: (response: ResourceResponse) => void): void;
}

interface Held {
  readonly lease: Lease;
  /** The deadline the agent goes by (the lease's own, unless a defect substitutes one). */
  readonly deadline: Instant;
  writesLeft: number;
}

type State =
  | { readonly kind: 'idle' }
  | { readonly kind: 'acquiring'; readonly request: AcquireRequest; attempts: number }
  | { readonly kind: 'holding'; readonly held: Held }
  | { readonly kind: 'renewing'; readonly held: Held; readonly request: RenewalRequest; attempts: number }
  | { readonly kind: 'writing'; readonly held: Held; readonly writeId: string };

/** The agent node. */
export class Agent {
  private readonly client: LeaseClient;
  private state: State = { kind: 'idle' };
  /** Bumped on every state change: timers of an older step do nothing. */
  private step = 0;
  private requests = 0;
  private writes = 0;

  constructor(
    private readonly world: WorldContext,
    private readonly behaviour: ChoiceStream,
    private readonly coordinator: CoordinatorEndpoint,
    private readonly resources: ReadonlyMap<string, ResourceEndpoint>,
    private readonly options: AgentOptions,
  ) {
    this.client = new LeaseClient({
      clock: options.clock,
      holderId: options.holderId,
      clockSkewMillis: options.clockSkewMillis,
      newRequestId: () => `${options.holderId}/r${++this.requests}`,
    });
  }

  /** Starts the agent's loop. */
  start(): void {
    this.think(this.thinkMillis());
  }

  private thinkMillis(): number {
    return this.behaviour.between(this.options.minThinkMillis, this.options.maxThinkMillis);
  }

  private get name(): string {
    return this.options.holderId;
  }

  private enter(state: State): number {
    this.state = state;
    this.step += 1;
    return this.step;
  }

  private think(pauseMillis: number): void {
    const step = this.enter({ kind: 'idle' });
    this.world.scheduler.after(pauseMillis, () => {
      if (step !== this.step || this.world.draining) return;
      this.beginAcquisition();
    });
  }

  // ---- acquire -------------------------------------------------------------------------

  private beginAcquisition(): void {
    const resource = this.behaviour.pick(this.options.resources);
    const request = this.client.beginAcquire(resource);
    this.enter({ kind: 'acquiring', request, attempts: 0 });
    this.sendAcquire(request);
  }

  private sendAcquire(request: AcquireRequest): void {
    const step = this.step;
    const state = this.state;
    if (state.kind === 'acquiring') state.attempts += 1;
    const retry = state.kind === 'acquiring' && state.attempts > 1 ? ', retry' : '';
    this.sendToCoordinator(
      `acquire ${request.resource} (req ${request.requestId}${retry})`,
      { type: 'acquire', request },
      (response) => this.onAcquireResponse(request, response),
    );
    this.world.scheduler.after(this.options.requestTimeoutMillis, () => {
      if (step !== this.step || this.state.kind !== 'acquiring') return;
      if (this.state.attempts > this.options.maxRetries) {
        this.world.trace.step(this.name, `gives up on ${request.requestId}`);
        this.think(this.thinkMillis());
      } else {
        this.step += 1;
        this.sendAcquire(request);
      }
    });
  }

  private onAcquireResponse(request: AcquireRequest, response: CoordinatorResponse): void {
    const state = this.state;
    if (state.kind !== 'acquiring' || state.request !== request) {
      this.world.trace.step(this.name, `ignores late answer to ${request.requestId}`);
      return;
    }
    if (response.type === 'unavailable') return this.retryLater(() => this.sendAcquire(request));
    if (response.type !== 'acquire') return;
    const outcome: CoordinatorAcquireOutcome = response.outcome;
    if (!outcome.ok) {
      const wait =
        outcome.reason === 'expired' || outcome.reason === 'fence-unavailable' ? 0 : outcome.retryAfterMillis;
      this.think(wait + this.thinkMillis());
      return;
    }
    const lease = this.client.completeAcquire(request, outcome.grant);
    const held = this.hold(lease, 'acquire', request.requestId);
    if (this.world.draining) return this.finish(held, false);
    if (this.behaviour.chance(this.options.admitProbability)) this.pushFence(held);
    this.work(held);
  }

  // ---- holding -------------------------------------------------------------------------

  private hold(lease: Lease, kind: 'acquire' | 'renewal', requestId: string): Held {
    const receivedAt = this.options.clock.now();
    const deadline = this.options.anchorDeadline?.(lease, receivedAt, this.options.clockSkewMillis) ?? lease.deadline;
    this.world.checker.leaseCompleted({
      kind,
      resource: lease.resource,
      holderId: lease.holderId,
      fence: lease.fence,
      requestId,
      deadline,
      coordinatorExpiresAt: lease.coordinatorExpiresAt,
    });
    this.world.trace.step(
      this.name,
      `holds ${lease.resource} fence ${lease.fence} until ${formatReading(deadline.millis, deadline.domain)}`,
    );
    const previous = this.state.kind === 'renewing' ? this.state.held.writesLeft : undefined;
    // A 0 choice is the full batch of writes: a lease held through ordinary work, not a flicker.
    return {
      lease,
      deadline,
      writesLeft:
        previous ?? this.options.maxWritesPerLease - this.behaviour.between(0, this.options.maxWritesPerLease - 1),
    };
  }

  /** Advisory: how long the agent believes it still holds the lease (its clock). */
  private remainingMillis(held: Held): number {
    return this.options.anchorDeadline === undefined
      ? held.lease.remainingMillis()
      : held.deadline.minus(this.options.clock.now());
  }

  private work(held: Held): void {
    const step = this.enter({ kind: 'holding', held });
    if (this.world.draining || held.writesLeft <= 0)
      return this.finish(held, !this.world.draining && this.behaviour.chance(0.3));
    const remaining = this.remainingMillis(held);
    if (remaining <= 0) {
      this.world.trace.step(this.name, `lease on ${held.lease.resource} fence ${held.lease.fence} ran out; drops it`);
      return this.think(this.thinkMillis());
    }
    if (remaining < this.options.renewBelowMillis) return this.renew(held);
    // The check is advisory; the model call happens after it and may outlast the lease.
    const long = this.behaviour.chance(this.options.longStallProbability);
    const stall = long
      ? this.behaviour.between(this.options.maxStallMillis, this.options.longStallMaxMillis)
      : this.behaviour.between(this.options.minStallMillis, this.options.maxStallMillis);
    this.world.trace.step(this.name, `checks lease (${Math.round(remaining)}ms left), model call ${stall}ms`);
    this.world.scheduler.after(stall, () => {
      if (step !== this.step) return;
      if (this.world.draining) this.finish(held, false);
      else this.sendWrite(held);
    });
  }

  private sendWrite(held: Held): void {
    const writeId = `${this.name}/w${++this.writes}`;
    const step = this.enter({ kind: 'writing', held, writeId });
    const { token } = held.lease;
    const target = this.resources.get(token.resource)!;
    this.world.network.send(this.name, token.resource, `write ${writeId} fence ${token.fence}`, () =>
      target.receive(this.name, { type: 'write', token, writeId }, (response) =>
        this.world.network.send(
          token.resource,
          this.name,
          response.type === 'refused' ? `refused ${writeId}: ${response.code}` : `${response.type} ${writeId}`,
          () => {
            if (step !== this.step) return;
            if (response.type === 'refused') {
              this.world.trace.step(this.name, `lost ${token.resource}: fence ${token.fence} is stale`);
              this.think(this.thinkMillis());
              return;
            }
            held.writesLeft -= 1;
            this.work(held);
          },
        ),
      ),
    );
    this.world.scheduler.after(this.options.requestTimeoutMillis, () => {
      if (step !== this.step) return;
      held.writesLeft -= 1; // outcome unknown; carry on
      this.work(held);
    });
  }

  private pushFence(held: Held): void {
    const { token } = held.lease;
    const target = this.resources.get(token.resource)!;
    this.world.network.send(this.name, token.resource, `push fence ${token.fence}`, () =>
      target.receive(this.name, { type: 'admit', token }, (response) =>
        this.world.network.send(
          token.resource,
          this.name,
          response.type === 'refused' ? `push refused: ${response.code}` : 'fence admitted',
          () => undefined,
        ),
      ),
    );
  }

  // ---- renew and release ---------------------------------------------------------------

  private renew(held: Held): void {
    const request = this.client.beginRenewal(held.lease);
    this.enter({ kind: 'renewing', held, request, attempts: 0 });
    this.sendRenewal(request);
  }

  private sendRenewal(request: RenewalRequest): void {
    const step = this.step;
    const state = this.state;
    if (state.kind !== 'renewing') return;
    state.attempts += 1;
    const retry = state.attempts > 1 ? ', retry' : '';
    this.sendToCoordinator(
      `renew ${request.resource} fence ${request.fence} (req ${request.requestId}${retry})`,
      { type: 'renew', request },
      (response) => this.onRenewResponse(request, response),
    );
    this.world.scheduler.after(this.options.requestTimeoutMillis, () => {
      if (step !== this.step || this.state.kind !== 'renewing') return;
      if (this.state.attempts > this.options.maxRetries) {
        this.world.trace.step(this.name, `gives up renewing ${request.resource}; drops fence ${request.fence}`);
        this.think(this.thinkMillis());
      } else {
        this.step += 1;
        this.sendRenewal(request);
      }
    });
  }

  private onRenewResponse(request: RenewalRequest, response: CoordinatorResponse): void {
    const state = this.state;
    if (state.kind !== 'renewing' || state.request !== request) {
      this.world.trace.step(this.name, `ignores late answer to ${request.requestId}`);
      return;
    }
    if (response.type === 'unavailable') return this.retryLater(() => this.sendRenewal(request));
    if (response.type !== 'renew') return;
    const outcome: RenewOutcome = response.outcome;
    if (!outcome.ok) {
      this.think(this.thinkMillis());
      return;
    }
    const lease = this.client.completeRenewal(request, outcome.grant);
    this.work(this.hold(lease, 'renewal', request.requestId));
  }

  /** Done with the lease: release it (or, when `walkAway`, just stop and let it expire). */
  private finish(held: Held, walkAway: boolean): void {
    if (!walkAway)
      this.sendToCoordinator(
        `release ${held.lease.resource} fence ${held.lease.fence}`,
        { type: 'release', token: held.lease.token },
        () => undefined,
      );
    else this.world.trace.step(this.name, `walks away from ${held.lease.resource} fence ${held.lease.fence}`);
    this.think(this.thinkMillis());
  }

  private retryLater(resend: () => void): void {
    const step = this.step;
    this.world.scheduler.after(this.behaviour.between(1, this.options.requestTimeoutMillis), () => {
      if (step === this.step) {
        this.step += 1;
        resend();
      }
    });
  }

  private sendToCoordinator(
    text: string,
    message: Parameters<CoordinatorEndpoint['receive']>[1],
    onResponse: (response: CoordinatorResponse) => void,
  ): void {
    const { network } = this.world;
    network.send(this.name, 'coordinator', text, () =>
      this.coordinator.receive(this.name, message, (response) =>
        network.send('coordinator', this.name, describeResponse(response), () => onResponse(response)),
      ),
    );
  }
}
