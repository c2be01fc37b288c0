/**
 * A minimal coordinator shell over coordinator-core's real pure parts — `replayLog`, `decide`,
 * `evolve`, `checkEvents` — and a real EventLog, doing what DurableCoordinator does: recover,
 * append this boot's `CoordinatorStarted`, then decide each command against the state that
 * includes the commands before it, append a batch with the expected version, and acknowledge
 * only after the append resolved (persist before ack).
 *
 * The simulation uses it where a defect must be injected *inside* the shell, between `decide`
 * and the log (a decider that renews an expired lease, a recovery that skips the grace period):
 * DurableCoordinator has no such seam, and production code carries no defect switches. Its
 * defect-free runs must show zero violations like DurableCoordinator's, so the only difference
 * in a falsification run is the defect.
 *
 * @see docs/design.md § "The event-sourced coordinator"
 */
import {
  checkEvents,
  decide as realDecide,
  evolve,
  replayLog,
  type CoordinatorAcquireOutcome,
  type CoordinatorCommand,
  type CoordinatorEvent,
  type CoordinatorState,
  type EventLog,
  type Now,
  type OutcomeOf,
  type RecordRejectionOutcome,
} from '@lease-fence/coordinator-core';
import type { Clock, FenceToken, ReleaseOutcome, RenewOutcome } from 'lease-fence';
import type { CoordinatorService, RejectionReport } from './coordinator-service.js';

/** The decide function the shell calls; a defect may wrap the real one. */
export type DecideFunction = typeof realDecide;

/** Options of {@link DeciderShell.open}. */
export interface DeciderShellOptions {
  readonly log: EventLog;
  readonly namespace: string;
  /** This boot's clock; its domain is the boot id. */
  readonly clock: Clock;
  /** Virtual wall clock (epoch ms, display only). */
  readonly wallClock: () => number;
  /** TTL when a request names none, in milliseconds. */
  readonly defaultTtlMillis: number;
  /** Acquire grants remembered for idempotent retries. */
  readonly replayCacheSize?: number;
  /** @defaultValue coordinator-core's `decide` */
  readonly decide?: DecideFunction;
}

interface Pending {
  readonly command: CoordinatorCommand;
  resolve(outcome: unknown): void;
  reject(error: unknown): void;
}

/** The shell. Commands are queued and committed in batches, one append in flight at a time. */
export class DeciderShell implements CoordinatorService {
  private readonly queue: Pending[] = [];
  private appending = false;
  private failed: unknown;

  private constructor(
    private readonly options: DeciderShellOptions,
    private readonly state: CoordinatorState,
    private readonly decide: DecideFunction,
  ) {}

  /** Replays the log, appends `CoordinatorStarted`, and returns a ready shell. */
  static async open(options: DeciderShellOptions): Promise<DeciderShell> {
    const decide = options.decide ?? realDecide;
    const replay = await replayLog(
      options.log,
      options.replayCacheSize === undefined ? {} : { replayCacheSize: options.replayCacheSize },
    );
    const { events } = decide(
      {
        type: 'StartCoordinator',
        namespace: options.namespace,
        eventsReplayed: replay.eventsReplayed,
        fromSnapshot: replay.fromSnapshot,
        replayMillis: 0,
        burnFencesThrough: 0,
      },
      replay.state,
      { instant: options.clock.now(), wallMillis: options.wallClock() },
    );
    const checked = checkEvents('DeciderShell.open', events);
    await options.log.append(checked, { expectedVersion: replay.state.position });
    for (const event of checked) evolve(replay.state, event);
    return new DeciderShell(options, replay.state, decide);
  }

  acquire(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<CoordinatorAcquireOutcome> {
    const { resource, holderId, requestId } = request;
    return this.enqueue({
      type: 'AcquireLease',
      resource,
      holderId,
      requestId,
      ttlMillis: request.ttlMillis ?? this.options.defaultTtlMillis,
    });
  }

  renew(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly fence: number;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<RenewOutcome> {
    const { resource, holderId, fence, requestId, ttlMillis } = request;
    return this.enqueue({ type: 'RenewLease', resource, holderId, fence, requestId, ttlMillis });
  }

  release(token: FenceToken): Promise<ReleaseOutcome> {
    return this.enqueue({
      type: 'ReleaseLease',
      resource: token.resource,
      holderId: token.holderId,
      fence: token.fence,
    });
  }

  recordRejection(report: RejectionReport): Promise<RecordRejectionOutcome> {
    return this.enqueue({ type: 'RecordFenceRejection', ...report });
  }

  async expireDue(): Promise<number> {
    return (await this.enqueue({ type: 'ExpireDueLeases' })).expired;
  }

  async checkpoint(): Promise<boolean> {
    return (await this.enqueue({ type: 'Checkpoint' })).checkpointed;
  }

  private enqueue<C extends CoordinatorCommand>(command: C): Promise<OutcomeOf<C>> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    return new Promise<OutcomeOf<C>>((resolve, reject) => {
      this.queue.push({ command, resolve: resolve as (outcome: unknown) => void, reject });
      if (!this.appending) void this.flush();
    });
  }

  /** Decides the queued commands in order against the evolving state, appends them in one batch, then acknowledges. */
  private async flush(): Promise<void> {
    this.appending = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      const expectedVersion = this.state.position;
      const accepted: { pending: Pending; outcome: unknown }[] = [];
      const events: CoordinatorEvent[] = [];
      for (const pending of batch) {
        const now: Now = { instant: this.options.clock.now(), wallMillis: this.options.wallClock() };
        try {
          const decision = this.decide(pending.command, this.state, now);
          const checked = decision.events.length > 0 ? checkEvents('DeciderShell', decision.events) : [];
          for (const event of checked) evolve(this.state, event);
          events.push(...checked);
          accepted.push({ pending, outcome: decision.outcome });
        } catch (error) {
          pending.reject(error);
        }
      }
      if (events.length > 0) {
        try {
          await this.options.log.append(events, { expectedVersion });
        } catch (error) {
          // The speculative fold can no longer be trusted: stop, acknowledge nothing (as DurableCoordinator does).
          this.failed = error;
          for (const pending of [...accepted.map((a) => a.pending), ...this.queue.splice(0)]) pending.reject(error);
          return;
        }
      }
      for (const { pending, outcome } of accepted) pending.resolve(outcome);
    }
    this.appending = false;
  }
}
