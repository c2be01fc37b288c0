/**
 * The durable coordinator: the shell around the pure decider. It serialises commands, decides
 * each against the state that includes the commands before it, appends a batch's events in ONE
 * append with the expected version (group commit: one transaction and one fsync per batch), and
 * only then resolves the batch's outcomes, in order (persist before acknowledge).
 *
 * It keeps two folds of the log: `committed` (acknowledged events only; every read is served
 * from it) and `decided` (committed plus the batch being appended; commands are decided against
 * it). Both are folded by the same `evolve`. If an append fails, the speculative fold is
 * discarded, nothing of the batch is acknowledged, and the coordinator stops: `'superseded'` on
 * an expected-version conflict (another writer took over), `'unhealthy'` on anything else (the
 * outcome may be unknown: whoever re-opens passes {@link DurableCoordinator.highestMintedFence}
 * as the next open's `burnFencesThrough`, as `supervisor/coordinator-supervisor.ts` does).
 * Re-opening means recovering from the log.
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer, Recovery)
 */
import { performance } from 'node:perf_hooks';
import type { CoordinatorEvent, RecordedRejection } from '@lease-fence/protocol';
import {
  MAX_TTL_MILLIS,
  requireCount,
  requireObject,
  requireTtlMillis,
  type FenceToken,
  type Instant,
  type ReleaseOutcome,
  type RenewOutcome,
} from 'lease-fence';
import { checkEvents } from './codec.js';
import type {
  AdmitFence,
  AdmitFenceOutcome,
  CoordinatorAcquireOutcome,
  CoordinatorCommand,
  Now,
  OutcomeOf,
  RecordFenceRejection,
  RecordFenceRejections,
  RecordRejectionsOutcome,
  RejectionReportItem,
  RecordRejectionOutcome,
  ReportFloor,
  ReportFloorOutcome,
  ReservedFence,
} from './decider/commands.js';
import { decide } from './decider/decide.js';
import { evolve } from './decider/evolve.js';
import {
  cloneState,
  gateRecoveryOf,
  leasesOf,
  toSnapshot,
  type CoordinatorState,
  type GateRecoveryView,
  type LeaseView,
} from './decider/state.js';
import { CoordinatorUnavailableError } from './errors.js';
import type { FenceFirstOptions } from './fence-first-options.js';
import { lockDelayMillisFor } from './lock-delay.js';
import { ExpectedVersionConflictError } from './ports/event-log-errors.js';
import { replayLog } from './recovery.js';
import {
  callHook,
  checkFence,
  checkId,
  checkWallMillis,
  resolveOptions,
  type Config,
  type DurableCoordinatorOptions,
  type DurableCoordinatorStatus,
} from './durable-coordinator-options.js';

/** Re-exported beside the class they configure; documented at their source. */
export type { DurableCoordinatorOptions, DurableCoordinatorStatus } from './durable-coordinator-options.js';

/** What recovery did at open. */
export interface RecoveryInfo {
  /** Events folded after the snapshot (or all, without one). */
  readonly eventsReplayed: number;
  readonly fromSnapshot: boolean;
  /** Milliseconds from open to the append of `CoordinatorStarted` (measurement, display only). */
  readonly replayMillis: number;
  /** The fence counter after recovery; the next grant gets a higher fence. */
  readonly recoveredFence: number;
  /** Latest grace deadline of carried leases, in this boot's domain (the start instant when none). */
  readonly graceDeadline: Instant;
  /** Leases carried into this boot. */
  readonly carriedLeases: number;
}

interface Pending {
  readonly command: CoordinatorCommand;
  resolve(outcome: unknown): void;
  reject(error: unknown): void;
}

/** A batch decided against `decided` and issued to the log, waiting for its acknowledgement. */
interface DecidedBatch {
  /** Commands whose outcome waits for the append (and every earlier one), in order. */
  readonly accepted: readonly { readonly pending: Pending; readonly outcome: unknown }[];
  /** Their events (checked, frozen), in order; empty for a batch of denials. */
  readonly events: readonly CoordinatorEvent[];
  /** The log version before this batch: the version after the batch issued before it. */
  readonly expectedVersion: number;
  /** The batch ends with `TakeSnapshot`: save the snapshot of the acknowledged fold when it lands. */
  readonly snapshotInBatch: boolean;
}

/**
 * The event-sourced lease coordinator over an `EventLog` (`ports/event-log.ts`): the shell the service uses.
 *
 * @see docs/design.md § "The event-sourced coordinator"
 * @example
 * ```ts
 * const log = await openSqliteEventLog({ file: 'data/coordinator.db' });
 * const coordinator = await DurableCoordinator.open({
 *   log, namespace: 'default', clock: createMonotonicClock(randomUUID()), defaultTtlMillis: 10_000,
 * });
 * const outcome = await coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-a', requestId: 'r-1' });
 * ```
 */
export class DurableCoordinator {
  /** This boot's id: the clock domain of every instant this coordinator hands out. */
  readonly bootId: string;
  /** What recovery did at open. */
  readonly recovery: RecoveryInfo;

  private readonly config: Config;
  private statusValue: DurableCoordinatorStatus = 'ready';
  private closing = false;
  private committed: CoordinatorState;
  private decided: CoordinatorState | undefined;
  private readonly queue: Pending[] = [];
  private flushScheduled = false;
  /** Batches issued and not yet acknowledged or refused (at most `maxAppendsInFlight`). */
  private appendsInFlight = 0;
  /** Settles when every issued batch has been acknowledged or refused: the tail of the in-order chain. */
  private acknowledged: Promise<void> = Promise.resolve();
  private idleWaiters: (() => void)[] = [];
  private snapshotQueued = false;
  private snapshotSaving: Promise<void> | undefined;
  private mintedFence: number;
  private expiryTimer: NodeJS.Timeout | undefined;
  private expiryArmedAtMillis: number | undefined;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private graceCheckpointTimer: NodeJS.Timeout | undefined;
  /** Until this reading (this boot's clock), acquisitions wait for gates' floors; see `floorWaitMillis`. */
  private readonly floorWaitUntilMillis: number | undefined;
  /** Fence-first handovers in flight, by reserved fence. */
  private readonly handovers = new Map<number, Promise<CoordinatorAcquireOutcome>>();

  private constructor(config: Config, state: CoordinatorState, recovery: RecoveryInfo) {
    this.config = config;
    this.bootId = config.clock.domain;
    this.recovery = recovery;
    this.committed = state;
    this.decided = cloneState(state);
    this.mintedFence = state.table.issuedFence;
    // A log that has issued no fence may be one that was lost: let the gates report their floors first.
    this.floorWaitUntilMillis =
      config.floorWaitMillis > 0 && state.table.issuedFence === 0
        ? config.clock.now().millis + config.floorWaitMillis
        : undefined;
    if (config.runTimers) {
      this.armExpiry(this.earliestExpiryMillis());
      this.checkpointTimer = setInterval(() => this.checkpointIfIdle(), config.checkpointIntervalMillis).unref();
      // Leases are carried in grace only from the start: tick faster until none is left.
      if (state.carried.size > 0) {
        this.graceCheckpointTimer = setInterval(() => {
          if (this.committed.carried.size > 0) this.checkpointIfIdle();
          else this.stopGraceCheckpoints();
        }, config.graceCheckpointIntervalMillis).unref();
      }
    }
    this.snapshotIfDue();
  }

  /**
   * Recovers from `options.log` (snapshot + replay), appends this boot's `CoordinatorStarted`
   * (carried leases with their grace deadlines, the recovered fence counter), and returns a
   * ready coordinator.
   *
   * @throws TypeError / RangeError for a bad option (naming it, its unit and the value).
   * @throws {@link EventLogCorruptError} if the log or snapshot cannot be decoded or folded (naming the position).
   * @throws {@link ExpectedVersionConflictError} if another writer appended during recovery, or
   *   the log is not at `takeOverAtVersion`.
   * @throws {@link EventLogUnavailableError} if the log failed.
   * @throws {@link ProtocolMisuseError} if `clock.domain` was already used as a boot id in this log.
   */
  static async open(options: DurableCoordinatorOptions): Promise<DurableCoordinator> {
    const config = resolveOptions(options);
    const openedAt = performance.now();
    const replay = await replayLog(
      config.log,
      config.replayCacheSize === undefined ? {} : { replayCacheSize: config.replayCacheSize },
    );
    if (config.takeOverAtVersion !== undefined && replay.state.position !== config.takeOverAtVersion) {
      throw new ExpectedVersionConflictError({
        expectedVersion: config.takeOverAtVersion,
        actualVersion: replay.state.position,
      });
    }
    const { burnFencesThrough } = config;
    const now: Now = { instant: config.clock.now(), wallMillis: config.wallClock() };
    const { events, outcome } = decide(
      {
        type: 'StartCoordinator',
        namespace: config.namespace,
        eventsReplayed: replay.eventsReplayed,
        fromSnapshot: replay.fromSnapshot,
        replayMillis: performance.now() - openedAt,
        burnFencesThrough,
      },
      replay.state,
      now,
    );
    checkEvents('DurableCoordinator.open', events);
    await config.log.append(events, { expectedVersion: replay.state.position });
    for (const event of events) evolve(replay.state, event);
    return new DurableCoordinator(config, replay.state, {
      eventsReplayed: replay.eventsReplayed,
      fromSnapshot: replay.fromSnapshot,
      replayMillis: performance.now() - openedAt,
      recoveredFence: outcome.recoveredFence,
      graceDeadline: outcome.graceDeadline,
      carriedLeases: outcome.carriedLeases,
    });
  }

  /** `'ready'` until an append fails (`'superseded'` / `'unhealthy'`) or {@link DurableCoordinator.close} finishes (`'closed'`). */
  get status(): DurableCoordinatorStatus {
    return this.statusValue;
  }

  /** The log version this coordinator has acknowledged (events durable and folded). */
  get position(): number {
    return this.committed.position;
  }

  /** The highest fence acknowledged as issued or burned. */
  get issuedFence(): number {
    return this.committed.table.issuedFence;
  }

  /**
   * The highest fence this coordinator ever minted, acknowledged or not. After a failed append
   * pass it as `burnFencesThrough` to the next {@link DurableCoordinator.open} on this log (the
   * supervisor in `supervisor/coordinator-supervisor.ts` does).
   */
  get highestMintedFence(): number {
    return Math.max(this.mintedFence, this.decided?.table.issuedFence ?? 0, this.committed.table.issuedFence);
  }

  /**
   * Acquires a lease: a grant with a new fence, the existing grant for a retried `requestId`, or
   * a denial (`'held'`, `'already-held'`, `'expired'`). Resolves once the grant is durable.
   *
   * On a resource `fenceFirst` applies to, the fence is first reserved (`FenceReserved`, durable),
   * a gate is asked to admit it, and only its confirmation makes the grant (`FenceAdmitted` +
   * `LeaseGranted`); without one in `fenceFirst.timeoutMillis` the fence is burned (`FenceBurned`)
   * and the outcome is `{ ok: false, reason: 'fence-unavailable', fence }`. While a fence is
   * pending, other acquires of the resource are `'held'` by its holder; a retry of the same
   * requestId waits for the same outcome; a retry after `fence-unavailable` is a new attempt
   * with a higher fence. A denial may also be `'lock-delay'` inside the resource's lock-delay
   * (see `lockDelays` in {@link DurableCoordinatorOptions}), fence-first or not.
   * @param request.ttlMillis - Lease duration in milliseconds; defaults to `defaultTtlMillis`; integer in [minTtlMillis, maxTtlMillis].
   * @throws TypeError / RangeError for a malformed request (nothing decided, no fence burned).
   * @throws {@link CoordinatorUnavailableError} if the coordinator is not ready or its append failed (nothing acknowledged),
   *   or (`'awaiting-floors'`) during `floorWaitMillis` after starting on a log that had issued no fence.
   * @throws {@link ProtocolMisuseError} if `requestId` was already used by this holder for another resource.
   */
  async acquire(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<CoordinatorAcquireOutcome> {
    const api = 'DurableCoordinator.acquire';
    requireObject(api, 'request', request);
    const command = {
      resource: checkId(api, 'resource', request.resource),
      holderId: checkId(api, 'holderId', request.holderId),
      requestId: checkId(api, 'requestId', request.requestId),
      ttlMillis: this.checkTtl(api, request.ttlMillis ?? this.config.defaultTtlMillis),
    };
    if (this.floorWaitUntilMillis !== undefined && this.config.clock.now().millis < this.floorWaitUntilMillis)
      throw new CoordinatorUnavailableError('awaiting-floors');
    const lockDelayMillis = lockDelayMillisFor(this.config.lockDelays, command.resource);
    const fenceFirst = this.config.fenceFirst;
    if (fenceFirst === undefined || !fenceFirst.appliesTo(command.resource))
      return this.enqueue({ type: 'AcquireLease', ...command, lockDelayMillis });
    const reserved = await this.enqueue({
      type: 'ReserveFence',
      ...command,
      lockDelayMillis,
      timeoutMillis: fenceFirst.timeoutMillis,
    });
    if (reserved.ok !== 'pending') return reserved;
    return this.handOver(fenceFirst, reserved.reservation);
  }

  /**
   * Fence-first: asks the gates to admit the reserved fence, then activates the lease (a gate
   * confirmed) or burns the fence (none did in time). A retried requestId that finds its fence
   * still pending joins the same handover and gets the same outcome.
   */
  private handOver(fenceFirst: FenceFirstOptions, reservation: ReservedFence): Promise<CoordinatorAcquireOutcome> {
    const running = this.handovers.get(reservation.fence);
    if (running !== undefined) return running;
    const { resource, holderId, fence, requestId } = reservation;
    const handover = (async (): Promise<CoordinatorAcquireOutcome> => {
      const admitted = await fenceFirst
        .admit({ resource, holderId, fence, requestId, timeoutMillis: fenceFirst.timeoutMillis })
        .catch(() => undefined);
      if (admitted !== undefined) {
        const activated = await this.enqueue({
          type: 'ActivateReservedLease',
          resource,
          fence,
          gateId: admitted.gateId,
        });
        if (activated.ok !== false || activated.reason !== 'not-pending') return activated;
      } else {
        const burned = await this.enqueue({ type: 'BurnReservedFence', resource, fence });
        if (burned.reason === 'fence-unavailable') return burned;
      }
      return { ok: false, reason: 'fence-unavailable', fence };
    })().finally(() => this.handovers.delete(fence));
    this.handovers.set(fence, handover);
    return handover;
  }

  /**
   * Renews the lease with fence `fence` (same fence, new expiry), or denies (`'expired'`, `'not-holder'`).
   * A lease carried across a restart can be renewed by its holder during its grace period.
   * @param request.ttlMillis - New duration in milliseconds; defaults to the lease's current ttl.
   * @throws as {@link DurableCoordinator.acquire}.
   */
  async renew(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly fence: number;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<RenewOutcome> {
    const api = 'DurableCoordinator.renew';
    requireObject(api, 'request', request);
    return this.enqueue({
      type: 'RenewLease',
      resource: checkId(api, 'resource', request.resource),
      holderId: checkId(api, 'holderId', request.holderId),
      fence: checkFence(api, 'fence', request.fence),
      requestId: checkId(api, 'requestId', request.requestId),
      ...(request.ttlMillis === undefined ? {} : { ttlMillis: this.checkTtl(api, request.ttlMillis) }),
    });
  }

  /**
   * Releases the lease `token` names, or denies (`'expired'`, `'not-holder'`).
   * @throws as {@link DurableCoordinator.acquire}.
   */
  async release(token: FenceToken): Promise<ReleaseOutcome> {
    const api = 'DurableCoordinator.release';
    requireObject(api, 'token', token);
    return this.enqueue({
      type: 'ReleaseLease',
      resource: checkId(api, 'resource', token.resource),
      holderId: checkId(api, 'holderId', token.holderId),
      fence: checkFence(api, 'fence', token.fence),
    });
  }

  /**
   * Records a FenceGate's rejection report. Idempotent by (gateId, resource, seq): the same
   * report again resolves `{ ok: true, duplicate: true }` and appends nothing, however late; other
   * content under a recorded key resolves `{ ok: false, reason: 'seq-conflict', message }` while the
   * key's content is kept (the latest `REJECTION_KEYS_KEPT` reports; an older seq is a duplicate). A report that
   * cannot be true (a fence never issued for the resource, fences contradicting `kind`, a wall
   * time past the year 3000) resolves `{ ok: false, reason: 'implausible', field, message }`.
   * Denials append nothing. Rules: `decide`'s `RecordFenceRejection`.
   * @param rejection.gateWallMillis - The gate's wall clock at the refusal (epoch ms, display only).
   * @throws TypeError / RangeError for a malformed report; {@link CoordinatorUnavailableError} as for acquire.
   */
  async recordRejection(rejection: Omit<RecordFenceRejection, 'type'>): Promise<RecordRejectionOutcome> {
    const api = 'DurableCoordinator.recordRejection';
    requireObject(api, 'rejection', rejection);
    return this.enqueue({
      type: 'RecordFenceRejection',
      gateId: checkId(api, 'gateId', rejection.gateId),
      resource: checkId(api, 'resource', rejection.resource),
      ...checkRejectionItem(api, '', rejection),
    });
  }

  /**
   * Records a batch of one gate's rejection reports of one resource (seqs strictly ascending) as
   * ONE command, so its events are appended in one group commit. Each item is decided as
   * {@link DurableCoordinator.recordRejection} decides it (duplicate, seq-conflict, a gap
   * recorded as missing first), except that one implausible item refuses the whole batch:
   * `{ ok: false, reason: 'implausible', index, field, message }`, nothing appended. Rules:
   * `decide`'s `RecordFenceRejections`.
   * @returns `{ ok: true, items }`: one outcome per item, in order.
   * @throws TypeError / RangeError for a malformed batch (naming `items[i].field`); {@link CoordinatorUnavailableError} as for acquire.
   */
  async recordRejections(batch: Omit<RecordFenceRejections, 'type'>): Promise<RecordRejectionsOutcome> {
    const api = 'DurableCoordinator.recordRejections';
    requireObject(api, 'batch', batch);
    if (!Array.isArray(batch.items) || batch.items.length === 0)
      throw new RangeError(`${api}: items must be a non-empty array, got ${String(batch.items)}`);
    return this.enqueue({
      type: 'RecordFenceRejections',
      gateId: checkId(api, 'gateId', batch.gateId),
      resource: checkId(api, 'resource', batch.resource),
      items: batch.items.map((item, index) => checkRejectionItem(api, `items[${index}].`, item)),
    });
  }

  /**
   * Records that a gate raised its floor to `fence` without a write (handover push), or resolves
   * `{ ok: false, reason: 'implausible', field, message }` with nothing appended when `fence`
   * was never issued for the resource, or is its current fence but another holder's.
   * @throws TypeError / RangeError for a malformed report; {@link CoordinatorUnavailableError} as for acquire.
   */
  async admitFence(admission: Omit<AdmitFence, 'type'>): Promise<AdmitFenceOutcome> {
    return this.enqueue({
      type: 'AdmitFence',
      ...checkGateFence('DurableCoordinator.admitFence', 'admission', admission),
    });
  }

  /**
   * A gate reports its floor (`fence`, admitted for `holderId`). When the fence is above every
   * fence this log issued for `resource`, the log has lost fences: the resource's highest fence
   * rises to it and the fence counter to at least `fence + lostFenceMarginFences`
   * (`FenceFloorReported`), so no fence issued before the loss is issued again and the gate
   * admits the next grant. Otherwise nothing is appended. Idempotent: the same floor again
   * appends nothing.
   * @returns `{ ok: true, raised, fenceCounter }`, or `{ ok: false, reason: 'implausible', field: 'fence', message }`
   *   (nothing appended) when the fence plus the margin is beyond the largest safe integer.
   * @throws TypeError / RangeError for a malformed report; {@link CoordinatorUnavailableError} as for acquire.
   */
  async reportFloor(report: Omit<ReportFloor, 'type' | 'marginFences'>): Promise<ReportFloorOutcome> {
    return this.enqueue({
      type: 'ReportFloor',
      ...checkGateFence('DurableCoordinator.reportFloor', 'report', report),
      marginFences: this.config.lostFenceMarginFences,
    });
  }

  /**
   * Expires every lease past its expiry now (the expiry timer does this on its own).
   * @returns how many leases expired.
   * @throws {@link CoordinatorUnavailableError} as for acquire.
   */
  async expireDue(): Promise<number> {
    const outcome = await this.enqueue({ type: 'ExpireDueLeases' });
    this.armExpiry(this.earliestExpiryMillis());
    return outcome.expired;
  }

  /**
   * Records an uptime checkpoint now if any lease is live, or always with `heartbeat` (the
   * checkpoint timer does this on its own).
   * @returns whether a `CoordinatorCheckpointed` event was appended.
   * @throws {@link CoordinatorUnavailableError} as for acquire.
   */
  async checkpoint(): Promise<boolean> {
    return (await this.enqueue({ type: 'Checkpoint', evenWithoutLeases: this.config.heartbeat })).checkpointed;
  }

  /**
   * The current leases (acknowledged state only), `inGrace` for those carried across a restart
   * and not renewed since. Instants are in this boot's domain.
   * @throws {@link CoordinatorUnavailableError} when not ready: a stopped coordinator's view may be stale.
   */
  leases(): readonly LeaseView[] {
    this.ensureReadable();
    return leasesOf(this.committed);
  }

  /**
   * What a gate reconciles its floor and refusal seq with at its start ({@link gateRecoveryOf}):
   * the latest fence granted on `resource` and the last refusal seq of `gateId` recorded for it.
   * Acknowledged state only.
   * @throws {@link CoordinatorUnavailableError} when not ready.
   */
  gateRecovery(gateId: string, resource: string): GateRecoveryView {
    this.ensureReadable();
    return gateRecoveryOf(this.committed, gateId, resource);
  }

  /**
   * Recently recorded fence rejections with their log positions, oldest first (at most 1000).
   * @throws {@link CoordinatorUnavailableError} when not ready.
   */
  rejections(): readonly RecordedRejection[] {
    this.ensureReadable();
    return this.committed.rejections.map((r) => ({ ...r }));
  }

  /**
   * Stops the timers, refuses new commands, finishes the commands already accepted (their
   * appends and outcomes) and a snapshot being saved. Does not close the log. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closing) return this.whenIdle();
    this.closing = true;
    this.stopTimers();
    await this.whenIdle();
    await this.snapshotSaving;
    if (this.statusValue === 'ready') this.changeStatus('closed');
  }

  // ---- command pipeline --------------------------------------------------------------------

  private enqueue<C extends CoordinatorCommand>(command: C): Promise<OutcomeOf<C>> {
    const unavailable = this.unavailableReason();
    if (unavailable !== undefined)
      return Promise.reject(new CoordinatorUnavailableError(unavailable, { cause: this.failureCause }));
    return new Promise<OutcomeOf<C>>((resolve, reject) => {
      this.queue.push({ command, resolve: resolve as (outcome: unknown) => void, reject });
      this.scheduleFlush();
    });
  }

  /** Flushes on the next turn, so commands arriving in the same I/O phase share a batch. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.pump();
    });
  }

  /**
   * Decides and issues batches while commands are queued and fewer than `maxAppendsInFlight`
   * appends are in flight. Each batch is decided against `decided`, which already includes every
   * batch issued before it, durable or not.
   */
  private pump(): void {
    while (
      this.queue.length > 0 &&
      this.statusValue === 'ready' &&
      this.appendsInFlight < this.config.maxAppendsInFlight
    ) {
      const batch = this.decideBatch(this.queue.splice(0, this.config.maxBatch));
      if (batch === undefined) break; // the decider broke its own rules: the coordinator stopped
      this.issue(batch);
    }
    this.notifyIfIdle();
  }

  /**
   * Decides each command against the state including the earlier ones (folding the events into
   * `decided`). A bad command is refused on its own; a decider bug stops the coordinator.
   * @returns the batch to append and acknowledge, or `undefined` if the coordinator stopped.
   */
  private decideBatch(batch: Pending[]): DecidedBatch | undefined {
    const decided = this.decided!;
    const expectedVersion = decided.position;
    const accepted: { pending: Pending; outcome: unknown }[] = [];
    const events: CoordinatorEvent[] = [];
    for (let index = 0; index < batch.length; index += 1) {
      const pending = batch[index]!;
      let decision: { readonly events: readonly CoordinatorEvent[]; readonly outcome: unknown };
      // The checked (schema-parsed, frozen) events are the ones folded and appended: the log's
      // encodeEvents then knows them and does not parse them a second time.
      let checked: readonly CoordinatorEvent[];
      try {
        decision = decide(pending.command, decided, this.readNow());
        // The decider's events are fresh objects of this batch: handed over, frozen as they are when valid.
        checked = decision.events.length > 0 ? checkEvents('DurableCoordinator', decision.events, 'handed-over') : [];
      } catch (error) {
        pending.reject(error); // a bad command changes nothing
        continue;
      }
      try {
        for (const event of checked) evolve(decided, event);
      } catch (error) {
        // The decider produced an event its own evolve refuses: a bug. The speculative fold can't be trusted.
        this.fail('unhealthy', error, [pending, ...accepted.map((a) => a.pending), ...batch.slice(index + 1)]);
        return undefined;
      }
      events.push(...checked);
      this.mintedFence = Math.max(this.mintedFence, decided.table.issuedFence);
      accepted.push({ pending, outcome: decision.outcome });
      if (pending.command.type === 'TakeSnapshot') {
        // The snapshot must cover exactly the batch up to its SnapshotTaken event.
        this.queue.unshift(...batch.slice(index + 1));
        return { accepted, events, expectedVersion, snapshotInBatch: true };
      }
    }
    return { accepted, events, expectedVersion, snapshotInBatch: false };
  }

  /**
   * Appends the batch's events (without waiting for earlier appends when the log applies
   * appends in call order) and chains its acknowledgement behind every earlier batch's, so
   * outcomes are resolved in order and only once their events and all earlier ones are durable.
   * A batch without events (denials only) appends nothing but is still acknowledged in turn: its
   * outcomes were decided against the earlier batches.
   */
  private issue(batch: DecidedBatch): void {
    this.appendsInFlight += 1;
    const startedAt = performance.now();
    let appended: Promise<unknown>;
    try {
      appended =
        batch.events.length === 0
          ? Promise.resolve()
          : this.config.log.append(batch.events, { expectedVersion: batch.expectedVersion });
    } catch (error) {
      appended = Promise.reject(error); // an adapter that throws instead of rejecting
    }
    if (batch.events.length > 0) callHook(() => this.config.hooks.onAppendPosted?.(batch.events));
    const landed = appended.then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    this.acknowledged = Promise.all([landed, this.acknowledged]).then(([failure]) => {
      this.appendsInFlight -= 1;
      this.acknowledge(batch, failure, startedAt);
      if (this.queue.length > 0 && this.statusValue === 'ready') this.scheduleFlush();
      else this.notifyIfIdle();
    });
  }

  /** Acknowledges a batch whose append settled, after every earlier batch was acknowledged or refused. */
  private acknowledge(batch: DecidedBatch, failure: { readonly error: unknown } | undefined, startedAt: number): void {
    const { accepted, events } = batch;
    if (this.statusValue !== 'ready') {
      // An earlier batch failed: this one was decided on a fold that included it. Nothing is acknowledged.
      const error = new CoordinatorUnavailableError(this.statusValue, { cause: this.failureCause });
      for (const { pending } of accepted) pending.reject(error);
      return;
    }
    if (failure !== undefined) {
      this.fail(
        failure.error instanceof ExpectedVersionConflictError ? 'superseded' : 'unhealthy',
        failure.error,
        accepted.map((a) => a.pending),
      );
      return;
    }
    if (events.length > 0) {
      try {
        for (const event of events) evolve(this.committed, event);
      } catch (error) {
        this.fail(
          'unhealthy',
          error,
          accepted.map((a) => a.pending),
        );
        return;
      }
      const millis = performance.now() - startedAt;
      callHook(() =>
        this.config.hooks.onAppend?.({ events: events.length, commands: accepted.length, millis, appended: events }),
      );
    }
    for (const { pending, outcome } of accepted) {
      pending.resolve(outcome);
      for (const [type, result] of outcomeReports(pending.command.type, outcome)) {
        callHook(() =>
          this.config.hooks.onOutcome?.(
            type,
            result.reason === undefined ? { ok: result.ok !== false } : { ok: false, reason: result.reason },
          ),
        );
      }
    }
    this.afterCommit(events, batch.snapshotInBatch);
  }

  private afterCommit(events: readonly CoordinatorEvent[], snapshotInBatch: boolean): void {
    if (this.config.runTimers) {
      for (const event of events) {
        if (event.type === 'LeaseGranted' || event.type === 'LeaseRenewed') this.armExpiry(event.data.expiresAtMillis);
      }
    }
    if (snapshotInBatch) {
      this.snapshotQueued = false;
      this.saveSnapshot();
    }
    this.snapshotIfDue();
  }

  /** Stops the coordinator after a failed append: nothing pending is acknowledged, the speculative fold is dropped. */
  private fail(status: 'superseded' | 'unhealthy', cause: unknown, pending: readonly Pending[]): void {
    const minted = this.highestMintedFence;
    this.mintedFence = minted;
    this.decided = undefined;
    this.failureCause = cause;
    this.stopTimers();
    this.changeStatus(status, cause);
    const error = new CoordinatorUnavailableError(status, { cause });
    for (const p of [...pending, ...this.queue.splice(0)]) p.reject(error);
  }

  private failureCause: unknown;

  private changeStatus(status: DurableCoordinatorStatus, cause?: unknown): void {
    this.statusValue = status;
    callHook(() => this.config.hooks.onStatusChange?.(status, cause));
  }

  private unavailableReason(): CoordinatorUnavailableError['reason'] | undefined {
    if (this.statusValue !== 'ready') return this.statusValue;
    if (this.closing) return 'closed';
    return undefined;
  }

  private ensureReadable(): void {
    if (this.statusValue === 'superseded' || this.statusValue === 'unhealthy') {
      throw new CoordinatorUnavailableError(this.statusValue, { cause: this.failureCause });
    }
    if (this.statusValue === 'closed') throw new CoordinatorUnavailableError('closed');
  }

  private isIdle(): boolean {
    return !this.flushScheduled && this.appendsInFlight === 0 && this.queue.length === 0;
  }

  private whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Wakes `whenIdle` callers once nothing is queued, scheduled or in flight (a stopped coordinator's queue is empty). */
  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private readNow(): Now {
    return { instant: this.config.clock.now(), wallMillis: this.config.wallClock() };
  }

  /** lease-fence's TTL rule within the configured `[minTtlMillis, maxTtlMillis]`, returning the value. */
  private checkTtl(api: string, ttlMillis: unknown): number {
    requireTtlMillis(api, 'ttlMillis', ttlMillis, this.config);
    return ttlMillis;
  }

  // ---- snapshots and timers ----------------------------------------------------------------

  private snapshotIfDue(): void {
    if (this.snapshotQueued || this.unavailableReason() !== undefined) return;
    if (this.committed.position - this.committed.lastSnapshotPosition < this.config.snapshotEvery) return;
    this.snapshotQueued = true;
    this.enqueue({ type: 'TakeSnapshot' }).catch(() => {
      this.snapshotQueued = false; // the coordinator stopped; its status says why
    });
  }

  private saveSnapshot(): void {
    const snapshot = toSnapshot(this.committed);
    const previous = this.snapshotSaving ?? Promise.resolve();
    this.snapshotSaving = previous
      .then(() => this.config.log.saveSnapshot(snapshot))
      .then(
        () => callHook(() => this.config.hooks.onSnapshot?.({ position: snapshot.position })),
        (error: unknown) => callHook(() => this.config.hooks.onSnapshot?.({ position: snapshot.position, error })),
      );
  }

  private earliestExpiryMillis(): number | undefined {
    let earliest: number | undefined;
    for (const lease of this.committed.table.leases()) {
      if (earliest === undefined || lease.expiresAt.millis < earliest) earliest = lease.expiresAt.millis;
    }
    return earliest;
  }

  /** Arms the expiry timer for `atMillis` (this boot's clock) unless it is already armed earlier. */
  private armExpiry(atMillis: number | undefined): void {
    if (!this.config.runTimers || atMillis === undefined || this.unavailableReason() !== undefined) return;
    if (this.expiryArmedAtMillis !== undefined && this.expiryArmedAtMillis <= atMillis) return;
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    const delayMillis = Math.max(0, Math.ceil(atMillis - this.config.clock.now().millis)) + 1;
    this.expiryArmedAtMillis = atMillis;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = undefined;
        this.expiryArmedAtMillis = undefined;
        this.expireDue().catch(() => undefined); // a stopped coordinator's status says why
      },
      Math.min(delayMillis, MAX_TTL_MILLIS),
    ).unref();
  }

  private checkpointIfIdle(): void {
    if (this.unavailableReason() !== undefined || this.queue.length > 0 || this.appendsInFlight > 0) return;
    const boot = this.committed.boot;
    if (boot === undefined || (!this.config.heartbeat && this.committed.table.leases().next().done === true)) return;
    // While a carried lease is in grace, a short interval: a boot that dies unrecorded must not
    // leave the next boot to give the same grace again (see decideStart in decider/decide.ts).
    const intervalMillis =
      this.committed.carried.size > 0
        ? this.config.graceCheckpointIntervalMillis
        : this.config.checkpointIntervalMillis;
    if (this.config.clock.now().millis - boot.lastAtMillis < intervalMillis) return;
    this.checkpoint().catch(() => undefined);
  }

  private stopTimers(): void {
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    if (this.checkpointTimer !== undefined) clearInterval(this.checkpointTimer);
    this.expiryTimer = undefined;
    this.expiryArmedAtMillis = undefined;
    this.checkpointTimer = undefined;
    this.stopGraceCheckpoints();
  }

  private stopGraceCheckpoints(): void {
    if (this.graceCheckpointTimer !== undefined) clearInterval(this.graceCheckpointTimer);
    this.graceCheckpointTimer = undefined;
  }
}

/** A gate's (gate, resource, holder, fence) report, checked field by field (admits and floor reports). */
function checkGateFence(
  api: string,
  name: string,
  report: { readonly gateId: string; readonly resource: string; readonly holderId: string; readonly fence: number },
): { gateId: string; resource: string; holderId: string; fence: number } {
  requireObject(api, name, report);
  return {
    gateId: checkId(api, 'gateId', report.gateId),
    resource: checkId(api, 'resource', report.resource),
    holderId: checkId(api, 'holderId', report.holderId),
    fence: checkFence(api, 'fence', report.fence),
  };
}

/** One rejection report's fields, checked (TypeError / RangeError naming `prefix` + the field) and copied. */
const checkRejectionItem = (api: string, prefix: string, item: RejectionReportItem): RejectionReportItem => {
  requireObject(api, prefix === '' ? 'rejection' : prefix.slice(0, -1), item);
  requireObject(api, `${prefix}rejected`, item.rejected);
  requireObject(api, `${prefix}current`, item.current);
  if (item.kind !== 'stale' && item.kind !== 'double-grant') {
    throw new RangeError(`${api}: ${prefix}kind must be 'stale' or 'double-grant', got ${JSON.stringify(item.kind)}`);
  }
  requireCount(api, `${prefix}seq`, item.seq);
  return {
    seq: item.seq,
    kind: item.kind,
    rejected: {
      holderId: checkId(api, `${prefix}rejected.holderId`, item.rejected.holderId),
      fence: checkFence(api, `${prefix}rejected.fence`, item.rejected.fence),
    },
    current: {
      holderId: checkId(api, `${prefix}current.holderId`, item.current.holderId),
      fence: checkFence(api, `${prefix}current.fence`, item.current.fence),
    },
    ...(item.gateWallMillis === undefined
      ? {}
      : { gateWallMillis: checkWallMillis(api, `${prefix}gateWallMillis`, item.gateWallMillis) }),
  };
};

/**
 * What the `onOutcome` hook hears of one command: its outcome, except that a recorded batch of
 * rejection reports is heard as one `RecordFenceRejection` outcome per item, so counters count
 * refusals whether they came one per request or in a batch.
 */
const outcomeReports = (
  type: CoordinatorCommand['type'],
  outcome: unknown,
): readonly (readonly [CoordinatorCommand['type'], { readonly ok?: boolean; readonly reason?: string }])[] => {
  const result = outcome as { ok?: boolean; reason?: string; items?: readonly { ok?: boolean; reason?: string }[] };
  if (type === 'RecordFenceRejections' && result.items !== undefined)
    return result.items.map((item) => ['RecordFenceRejection', item] as const);
  return [[type, result]];
};
