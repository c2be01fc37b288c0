/**
 * Keeps one {@link DurableCoordinator} serving on an event log for as long as the process lives,
 * as a small state machine:
 *
 * ```
 *            ┌────────── standby ──(log silent: take over)──┐
 *  start ────┤                                              ▼
 *            └──────────────────────────────► recovering ──► ready ──(append failed: unhealthy)──┐
 *                                               ▲   │                                          │
 *                      (probe: log answers)     │   │ (log unavailable)                        │
 *                                               │   ▼                                          │
 *                                         waiting-for-log ◄────────────────────────────────────┘
 *  any ──(a newer writer appended: superseded)──► superseded   (never retried)
 *  any ──(corrupt log, bad options)──────────────► failed       (never retried)
 *  any ──(close)─────────────────────────────────► closed
 * ```
 *
 * - `recovering`: `DurableCoordinator.open` runs (snapshot + replay + `CoordinatorStarted`) with a
 *   NEW boot id each attempt; {@link CoordinatorSupervisor.current} throws
 *   {@link CoordinatorNotServingError} `recovering`.
 * - `waiting-for-log`: the log failed (an append of the coordinator, or an attempt to open it);
 *   after a capped exponential backoff with jitter the supervisor probes the log (`version()`)
 *   and, once it answers, opens the coordinator again on the SAME log object, burning every fence
 *   the failed coordinator minted. This supervisor is the one place that burn point is kept: it
 *   passes `burnFencesThrough` (the failed coordinator's `highestMintedFence`) to the next open.
 * - `superseded`: another coordinator appended to the log. Never retried: it owns the log now.
 * - `standby` (role `'standby'`): follows the log with a {@link StandbyCoordinator} and takes over
 *   once it has had no append for `takeoverAfterMillis`.
 *
 * Safety does not rest on this class (expected-version appends and the recovered fence counter
 * do); it decides when to try again. Clock, timers, boot ids and randomness are injected, so a
 * simulation drives it on virtual time; what happens is reported to an observer
 * ({@link SupervisorEvent}) instead of being logged here.
 *
 * @see docs/design.md § "The supervisor, standby and reopen" and § Scale (a standby per shard)
 */
import { randomUUID } from 'node:crypto';
import type { ReadinessReply } from '@lease-fence/protocol';
import { createMonotonicClock, isIntegerInRange, type Clock } from 'lease-fence';
import {
  DurableCoordinator,
  type DurableCoordinatorOptions,
  type DurableCoordinatorStatus,
  type RecoveryInfo,
} from '../durable-coordinator.js';
import { callHook } from '../durable-coordinator-options.js';
import { CoordinatorUnavailableError } from '../errors.js';
import {
  EventLogClosedError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
} from '../ports/event-log-errors.js';
import type { EventLog } from '../ports/event-log.js';
import { StandbyCoordinator } from '../standby-coordinator.js';
import { createReopenBackoff, type ReopenBackoff } from './reopen-backoff.js';

/** How the first recovery ended: the coordinator, or the error that stopped it for good. */
export type RecoveryResult =
  { readonly ok: true; readonly coordinator: DurableCoordinator } | { readonly ok: false; readonly error: unknown };

/** Where the supervisor is; see the diagram in this file's header. */
export type SupervisorState =
  /** `DurableCoordinator.open` runs: attempt `attempt` (1 = first), with boot id `bootId`. */
  | { readonly kind: 'recovering'; readonly attempt: number; readonly bootId: string }
  /** A coordinator serves (its own `status` says when it stops; the supervisor then moves on). */
  | { readonly kind: 'ready'; readonly coordinator: DurableCoordinator }
  /** The log failed `failures` times in a row (`cause` = the last failure); the next probe runs in `delayMillis`. */
  | {
      readonly kind: 'waiting-for-log';
      readonly failures: number;
      readonly delayMillis: number;
      readonly cause: unknown;
    }
  /** Following another coordinator's log; takes over once it has had no append for `takeoverAfterMillis`. */
  | { readonly kind: 'standby'; readonly standby: StandbyCoordinator }
  /** Another coordinator appended to the log: never retried. */
  | { readonly kind: 'superseded'; readonly cause: unknown }
  /** Recovery failed in a way retrying cannot fix (a corrupt log, a namespace mismatch). */
  | { readonly kind: 'failed'; readonly error: unknown }
  /** Closed. */
  | { readonly kind: 'closed' };

/**
 * What the supervisor did, for logs and metrics (the observer decides how to report each).
 * Durations are milliseconds; `failures` counts consecutive failures to reach the log.
 */
export type SupervisorEvent =
  /** A coordinator serves: opened (`attempt` 1), re-opened after the log failed (`attempt` > 1), or taken over by a standby (`tookOver`). */
  | {
      readonly type: 'serving';
      readonly coordinator: DurableCoordinator;
      readonly attempt: number;
      readonly tookOver: boolean;
      readonly recovery: RecoveryInfo;
    }
  /** The serving coordinator stopped granting: `superseded` (never retried) or `unhealthy` (re-opened later, burning through `burnFencesThrough`). */
  | {
      readonly type: 'stopped';
      readonly status: 'superseded' | 'unhealthy';
      readonly bootId: string;
      readonly cause: unknown;
      readonly burnFencesThrough: number;
    }
  /** Another coordinator appended while this one was opening: never retried. */
  | { readonly type: 'superseded-while-opening'; readonly error: unknown }
  /** Opening failed in a way retrying cannot fix (`attempt` 1 = the first open). */
  | { readonly type: 'open-failed'; readonly error: unknown; readonly attempt: number }
  /** The log is unavailable: the next probe runs in `delayMillis`. */
  | {
      readonly type: 'waiting-for-log';
      readonly failures: number;
      readonly delayMillis: number;
      readonly cause: unknown;
    }
  /** The probe found the log answering: a coordinator is opened again. */
  | { readonly type: 'log-answers'; readonly failures: number }
  /** The serving coordinator closed. */
  | { readonly type: 'coordinator-closed'; readonly bootId: string }
  /** The standby follows the log. */
  | { readonly type: 'standby-following'; readonly takeoverAfterMillis: number }
  /** Following the log failed; `retrying` false: for good. */
  | { readonly type: 'standby-follow-error'; readonly error: unknown; readonly retrying: boolean }
  /** The log was silent for `takeoverAfterMillis`: the standby tries to take over with boot id `bootId`. */
  | { readonly type: 'takeover-started'; readonly position: number; readonly bootId: string }
  /** The active coordinator appended before the takeover: the standby follows on. */
  | { readonly type: 'takeover-lost-race'; readonly position: number }
  /** The takeover failed: retried no sooner than `retryInMillis` when the log was unavailable, else (`retryInMillis` undefined) for good. */
  | { readonly type: 'takeover-failed'; readonly error: unknown; readonly retryInMillis: number | undefined }
  /** A bug: a step of the supervisor threw. It keeps running. */
  | { readonly type: 'step-failed'; readonly error: unknown };

/** Receives every {@link SupervisorEvent}; it must not throw (a throw is reported as a process warning and ignored). */
export type SupervisorObserver = (event: SupervisorEvent) => void;

/** A timer the supervisor can cancel. */
export interface SupervisorTimer {
  cancel(): void;
}

/**
 * The options of every coordinator the supervisor opens: those of {@link DurableCoordinator.open}
 * except the ones the supervisor owns (the log, the boot clock, the burn point, the takeover
 * version and the status hook; `onAppend` is passed through).
 */
export type SupervisedCoordinatorOptions = Omit<
  DurableCoordinatorOptions,
  'log' | 'clock' | 'burnFencesThrough' | 'takeOverAtVersion' | 'onStatusChange'
>;

/** Options of {@link CoordinatorSupervisor}. Durations are milliseconds. */
export interface CoordinatorSupervisorOptions {
  /** The log. Re-opens use this same object; the supervisor never closes it. */
  readonly log: EventLog;
  /** `'active'` recovers and serves; `'standby'` follows the log and takes over when it falls silent. @defaultValue 'active' */
  readonly role?: 'active' | 'standby';
  /** Options of each coordinator it opens. */
  readonly coordinator: SupervisedCoordinatorOptions;
  /** Standby only: take over after the log has had no append for this long. Positive integer; required for a standby. */
  readonly takeoverAfterMillis?: number;
  /** Upper bound of the first wait before re-opening. Positive integer. @defaultValue 100 */
  readonly reopenInitialDelayMillis?: number;
  /** Upper bound of every wait before re-opening. Integer ≥ `reopenInitialDelayMillis`. @defaultValue 5_000 */
  readonly reopenMaxDelayMillis?: number;
  /** The monotonic clock of a boot whose id (clock domain) is `bootId`; also the standby's clock for measuring silence. @defaultValue lease-fence's `createMonotonicClock` */
  readonly newClock?: (bootId: string) => Clock;
  /** A boot id never used before in this log. @defaultValue node:crypto's `randomUUID` */
  readonly newBootId?: () => string;
  /** Runs `run` after `delayMillis`; the timer must not keep the process alive. @defaultValue an unref'd `setTimeout` */
  readonly schedule?: (delayMillis: number, run: () => void) => SupervisorTimer;
  /** Uniform random number in [0, 1), for the backoff's jitter. @defaultValue Math.random */
  readonly random?: () => number;
  /** Receives what happens. @defaultValue none */
  readonly observer?: SupervisorObserver;
}

/**
 * No coordinator serves yet: the supervisor is recovering one (`'recovering'`) or is a standby
 * following another coordinator's log (`'standby'`). Nothing was decided; retry (on the active
 * coordinator, for a standby). `retryable` is true. The stopped coordinator's own reasons are
 * {@link CoordinatorUnavailableError}'s.
 */
export class CoordinatorNotServingError extends Error {
  readonly code = 'coordinator-unavailable';
  readonly retryable = true;

  constructor(readonly reason: 'recovering' | 'standby') {
    super(
      `coordinator unavailable (${reason}): ${
        reason === 'recovering'
          ? 'the coordinator is still replaying its log'
          : 'this is a standby coordinator: it follows the log and grants only after taking over from a silent active coordinator'
      }`,
    );
    this.name = 'CoordinatorNotServingError';
  }
}

const scheduleTimeout = (delayMillis: number, run: () => void): SupervisorTimer => {
  const timer = setTimeout(run, delayMillis);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
};

/** Holds the coordinator of this process, re-opening it after the event log failed. */
export class CoordinatorSupervisor {
  private stateValue: SupervisorState;
  /** The coordinator that serves, or served last (its position stays readable). */
  private served: DurableCoordinator | undefined;
  private bootIdValue: string;
  /** Consecutive failures to reach the log; reset once a re-opened coordinator has appended. */
  private failures = 0;
  /**
   * Highest fence minted by a coordinator of this supervisor that failed (its appends' outcome
   * unknown): the next open burns up to it. Reset once a coordinator's `CoordinatorStarted`,
   * which records the burn, is durable.
   */
  private burnFencesThrough = 0;
  /** Bumped per coordinator (and per standby), so hooks of an older one are ignored. */
  private generation = 0;
  private timer: SupervisorTimer | undefined;
  /** The step in flight (an open, a probe, a takeover), awaited at close. */
  private step: Promise<void> | undefined;
  private closing = false;
  private started = false;
  private readonly firstRecovery: Promise<RecoveryResult>;
  private settleFirstRecovery!: (result: RecoveryResult) => void;
  private readonly listeners = new Set<(state: SupervisorState) => void>();
  private readonly backoff: ReopenBackoff;
  private readonly log: EventLog;
  private readonly role: 'active' | 'standby';
  private readonly takeoverAfterMillis: number;
  private readonly schedule: (delayMillis: number, run: () => void) => SupervisorTimer;
  private readonly newClock: (bootId: string) => Clock;
  private readonly newBootId: () => string;
  private readonly observer: SupervisorObserver;

  /**
   * Creates a supervisor; nothing runs until {@link CoordinatorSupervisor.recovered}.
   * @throws TypeError / RangeError naming the option for a bad `role`, `takeoverAfterMillis` or
   *   reopen delay (a standby needs `takeoverAfterMillis`).
   */
  constructor(private readonly options: CoordinatorSupervisorOptions) {
    this.log = options.log;
    this.role = options.role ?? 'active';
    if (this.role !== 'active' && this.role !== 'standby') {
      throw new TypeError(`CoordinatorSupervisor: role must be 'active' or 'standby', got ${String(options.role)}`);
    }
    const takeover = options.takeoverAfterMillis;
    if (this.role === 'standby' && !isIntegerInRange(takeover, 1)) {
      throw new RangeError(
        `CoordinatorSupervisor: takeoverAfterMillis must be a positive integer (milliseconds) for a standby, got ${String(takeover)}`,
      );
    }
    this.takeoverAfterMillis = takeover ?? 0;
    this.backoff = createReopenBackoff({
      initialDelayMillis: options.reopenInitialDelayMillis ?? 100,
      maxDelayMillis: options.reopenMaxDelayMillis ?? 5_000,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    this.schedule = options.schedule ?? scheduleTimeout;
    this.newClock = options.newClock ?? createMonotonicClock;
    this.newBootId = options.newBootId ?? randomUUID;
    const observer = options.observer;
    this.observer = observer === undefined ? () => undefined : (event) => callHook(() => observer(event));
    this.bootIdValue = this.newBootId();
    this.stateValue = { kind: 'recovering', attempt: 1, bootId: this.bootIdValue };
    this.firstRecovery = new Promise((resolve) => {
      this.settleFirstRecovery = resolve;
    });
  }

  /**
   * Resolves once a coordinator is ready for the first time (for a standby: once it took over),
   * or with the error when recovery failed for good (a corrupt log, bad options). Stays pending
   * while the log is unavailable (it is retried), while superseded, and after close. Never rejects.
   *
   * Starts the supervisor (recovery, or following for a standby) on the first call, and nothing
   * else does: a service calls it once it can serve (its port is bound), so a process that cannot
   * serve stops without having appended to the log (a `CoordinatorStarted` would supersede the
   * coordinator already running on it). Until then the state is `recovering`.
   */
  recovered(): Promise<RecoveryResult> {
    if (!this.started) {
      this.started = true;
      if (this.role === 'standby') this.runStep(async () => this.follow());
      else this.runStep(() => this.open(1));
    }
    return this.firstRecovery;
  }

  /** Where the supervisor is now. */
  get state(): SupervisorState {
    return this.stateValue;
  }

  /**
   * Calls `listener` after every transition, with the new state.
   * @returns a function that removes the listener.
   */
  onStateChange(listener: (state: SupervisorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The boot id of the coordinator serving, being opened, or that served last (the clock domain
   * of every instant it hands out). A new one per open attempt.
   */
  get bootId(): string {
    return this.bootIdValue;
  }

  /**
   * The coordinator, for a command or a read.
   * @throws {@link CoordinatorNotServingError} `recovering` or `standby` before one serves.
   * @throws {@link CoordinatorUnavailableError} `superseded`, `unhealthy` (recovery failed for good,
   *   or the coordinator failed for a reason other than the log) or `closed`.
   * @throws {@link EventLogUnavailableError} while the supervisor waits for the event log to answer again.
   */
  current(): DurableCoordinator {
    const state = this.stateValue;
    switch (state.kind) {
      case 'ready':
        return state.coordinator; // a coordinator that just stopped refuses commands itself
      case 'recovering':
        throw new CoordinatorNotServingError('recovering');
      case 'standby':
        throw new CoordinatorNotServingError('standby');
      case 'waiting-for-log':
        if (state.cause instanceof EventLogUnavailableError) {
          throw new EventLogUnavailableError(this.log.name, {
            message: `the coordinator re-opens once the log answers (next attempt in ${state.delayMillis} ms): ${state.cause.message}`,
            cause: state.cause,
          });
        }
        throw new CoordinatorUnavailableError('unhealthy', { cause: state.cause });
      case 'superseded':
        throw new CoordinatorUnavailableError('superseded', { cause: state.cause });
      case 'failed':
        throw new CoordinatorUnavailableError('unhealthy', { cause: state.error });
      case 'closed':
        throw new CoordinatorUnavailableError('closed');
    }
  }

  /** The log position the last coordinator acknowledged (a standby's: the position it has seen), or `undefined` before any. */
  position(): number | undefined {
    const state = this.stateValue;
    return state.kind === 'standby' ? state.standby.position : this.served?.position;
  }

  /** Readiness (`/readyz`): ready only while a coordinator serves; otherwise the status and `<reason>: <detail>`. */
  readiness(): ReadinessReply {
    const state = this.stateValue;
    const position = this.position();
    const common = { bootId: this.bootIdValue, ...(position === undefined ? {} : { position }) };
    switch (state.kind) {
      case 'ready': {
        const status = state.coordinator.status;
        if (status === 'ready') return { ready: true, status, ...common };
        return { ready: false, status, reason: `${status}: ${STOPPED_REASONS[status]}`, ...common };
      }
      case 'recovering':
        return {
          ready: false,
          status: 'recovering',
          reason:
            state.attempt === 1
              ? 'recovering: replaying the event log'
              : `recovering: re-opening the coordinator on the event log (attempt ${state.attempt})`,
          ...common,
        };
      case 'waiting-for-log': {
        const detail = `${describeError(state.cause)}; next attempt in ${state.delayMillis} ms`;
        return state.cause instanceof EventLogUnavailableError
          ? { ready: false, status: 'unhealthy', reason: `event-log-unavailable: ${detail}`, ...common }
          : { ready: false, status: 'unhealthy', reason: `unhealthy: ${detail}`, ...common };
      }
      case 'standby':
        return {
          ready: false,
          status: 'standby',
          reason: `standby: following the log; takes over after ${this.takeoverAfterMillis} ms without an append (next check in ${state.standby.millisUntilSilent()} ms)`,
          ...common,
        };
      case 'superseded':
        return { ready: false, status: 'superseded', reason: `superseded: ${STOPPED_REASONS.superseded}`, ...common };
      case 'failed':
        return {
          ready: false,
          status: 'failed',
          reason: `failed: recovery failed: ${describeError(state.error)}`,
          ...common,
        };
      case 'closed':
        return { ready: false, status: 'closed', reason: 'closed: shutting down', ...common };
    }
  }

  /** Stops retrying and following, and closes the coordinator (in-flight appends finish). The log stays open: close it after. */
  async close(): Promise<void> {
    this.closing = true;
    this.timer?.cancel();
    this.timer = undefined;
    const state = this.stateValue;
    if (state.kind === 'standby') await state.standby.close();
    await this.step;
    await this.served?.close();
    this.transition({ kind: 'closed' });
  }

  // ---- transitions -------------------------------------------------------------------------

  /** Opens a coordinator (attempt `attempt`, a fresh boot id unless it is the first) and moves to the state its outcome calls for. */
  private async open(attempt: number): Promise<void> {
    if (attempt > 1) this.bootIdValue = this.newBootId();
    const bootId = this.bootIdValue;
    const generation = ++this.generation;
    this.transition({ kind: 'recovering', attempt, bootId });
    let coordinator: DurableCoordinator;
    try {
      coordinator = await DurableCoordinator.open(this.coordinatorOptions(generation, this.newClock(bootId)));
    } catch (error) {
      this.afterFailedOpen(error, attempt);
      return;
    }
    this.serve(coordinator, attempt, false);
  }

  /** A coordinator was opened (or taken over): it serves, unless close or a failure got there first. */
  private serve(coordinator: DurableCoordinator, attempt: number, tookOver: boolean): void {
    if (this.closing) {
      void coordinator.close();
      return;
    }
    this.burnFencesThrough = 0; // burned: recorded in this boot's CoordinatorStarted
    this.served = coordinator;
    this.transition({ kind: 'ready', coordinator });
    this.observer({ type: 'serving', coordinator, attempt, tookOver, recovery: coordinator.recovery });
    this.settleFirstRecovery({ ok: true, coordinator });
    // A failure reported while open() was still resolving: handle it now.
    if (coordinator.status === 'unhealthy' || coordinator.status === 'superseded')
      this.afterStopped(coordinator, coordinator.status, undefined);
  }

  private afterFailedOpen(error: unknown, attempt: number): void {
    if (this.closing || error instanceof EventLogClosedError) return;
    if (error instanceof EventLogUnavailableError) {
      this.waitForLog(error);
      return;
    }
    if (error instanceof ExpectedVersionConflictError) {
      this.observer({ type: 'superseded-while-opening', error });
      this.transition({ kind: 'superseded', cause: error });
      return;
    }
    this.observer({ type: 'open-failed', error, attempt });
    this.transition({ kind: 'failed', error });
    this.settleFirstRecovery({ ok: false, error });
  }

  /** The serving coordinator stopped (its `onStatusChange`). */
  private afterStopped(coordinator: DurableCoordinator, status: DurableCoordinatorStatus, cause: unknown): void {
    const state = this.stateValue;
    if (this.closing || state.kind !== 'ready' || state.coordinator !== coordinator) return;
    void coordinator.close(); // stops what is left (a snapshot being saved); keeps its status
    if (status === 'superseded') {
      this.observer({ type: 'stopped', status, bootId: coordinator.bootId, cause, burnFencesThrough: 0 });
      this.transition({ kind: 'superseded', cause });
      return;
    }
    // Its appends' outcome is unknown: every fence it minted may be out there. The next open burns them.
    this.burnFencesThrough = Math.max(this.burnFencesThrough, coordinator.highestMintedFence);
    this.observer({
      type: 'stopped',
      status: 'unhealthy',
      bootId: coordinator.bootId,
      cause,
      burnFencesThrough: this.burnFencesThrough,
    });
    this.waitForLog(cause);
  }

  /** Backs off, then probes the log; the next open follows once it answers. */
  private waitForLog(cause: unknown): void {
    if (this.closing) return;
    this.failures += 1;
    const delayMillis = this.backoff.delayMillis(this.failures);
    this.transition({ kind: 'waiting-for-log', failures: this.failures, delayMillis, cause });
    this.observer({ type: 'waiting-for-log', failures: this.failures, delayMillis, cause });
    this.timer = this.schedule(delayMillis, () => {
      this.timer = undefined;
      this.runStep(() => this.probe(cause));
    });
  }

  private async probe(cause: unknown): Promise<void> {
    if (this.closing) return;
    try {
      await this.log.version();
    } catch (error) {
      if (this.closing || error instanceof EventLogClosedError) return;
      this.waitForLog(error instanceof EventLogUnavailableError ? error : cause);
      return;
    }
    this.observer({ type: 'log-answers', failures: this.failures });
    await this.open(this.failures + 1);
  }

  // ---- standby -----------------------------------------------------------------------------

  private follow(): void {
    const generation = ++this.generation;
    let standby: StandbyCoordinator;
    try {
      standby = StandbyCoordinator.follow({
        ...this.coordinatorOptions(generation, this.newClock(this.bootIdValue)),
        silenceMillis: this.takeoverAfterMillis,
        onFollowError: (error, { retrying }) => this.observer({ type: 'standby-follow-error', error, retrying }),
      });
    } catch (error) {
      this.transition({ kind: 'failed', error });
      this.settleFirstRecovery({ ok: false, error });
      return;
    }
    this.transition({ kind: 'standby', standby });
    this.observer({ type: 'standby-following', takeoverAfterMillis: this.takeoverAfterMillis });
    this.scheduleTakeover(standby, standby.millisUntilSilent());
  }

  private scheduleTakeover(standby: StandbyCoordinator, delayMillis: number): void {
    if (this.closing) return;
    this.timer = this.schedule(delayMillis, () => {
      this.timer = undefined;
      this.runStep(() => this.tryTakeover(standby));
    });
  }

  private async tryTakeover(standby: StandbyCoordinator): Promise<void> {
    if (this.closing) return;
    if (!standby.isActiveSilent()) {
      this.scheduleTakeover(standby, standby.millisUntilSilent());
      return;
    }
    const bootId = this.newBootId();
    this.observer({ type: 'takeover-started', position: standby.position, bootId });
    let coordinator: DurableCoordinator | undefined;
    try {
      coordinator = await standby.takeOverIfSilent({ clock: this.newClock(bootId) });
    } catch (error) {
      if (this.closing) return;
      const retryInMillis =
        error instanceof EventLogUnavailableError ? this.backoff.delayMillis(++this.failures) : undefined;
      this.observer({ type: 'takeover-failed', error, retryInMillis });
      if (retryInMillis === undefined) {
        await standby.close();
        this.transition({ kind: 'failed', error });
        this.settleFirstRecovery({ ok: false, error });
        return;
      }
      this.scheduleTakeover(standby, Math.max(retryInMillis, standby.millisUntilSilent()));
      return;
    }
    if (coordinator === undefined) {
      this.observer({ type: 'takeover-lost-race', position: standby.position });
      this.scheduleTakeover(standby, standby.millisUntilSilent());
      return;
    }
    this.bootIdValue = bootId;
    this.failures = 0;
    this.serve(coordinator, 1, true);
  }

  // ---- plumbing ----------------------------------------------------------------------------

  /** The options of every coordinator this supervisor opens; its hooks act only while `generation` is current. */
  private coordinatorOptions(generation: number, clock: Clock): DurableCoordinatorOptions {
    const { coordinator } = this.options;
    return {
      ...coordinator,
      log: this.log,
      clock,
      burnFencesThrough: this.burnFencesThrough,
      onAppend: (info) => {
        if (generation === this.generation) this.failures = 0; // the log works again
        coordinator.onAppend?.(info);
      },
      onStatusChange: (status, cause) => {
        if (status === 'closed') {
          this.observer({ type: 'coordinator-closed', bootId: clock.domain });
          return;
        }
        const state = this.stateValue;
        if (generation === this.generation && state.kind === 'ready')
          this.afterStopped(state.coordinator, status, cause);
      },
    };
  }

  /** Runs one asynchronous step, tracked for close; a step never rejects (a bug in it is reported as `step-failed`). */
  private runStep(step: () => Promise<void>): void {
    const tracked: Promise<void> = step()
      .catch((error: unknown) => {
        this.observer({ type: 'step-failed', error });
      })
      .finally(() => {
        if (this.step === tracked) this.step = undefined;
      });
    this.step = tracked;
  }

  private transition(state: SupervisorState): void {
    this.stateValue = state;
    for (const listener of [...this.listeners]) listener(state);
  }
}

/** Why a coordinator that stopped no longer grants, for readiness. */
const STOPPED_REASONS: Readonly<Record<Exclude<DurableCoordinatorStatus, 'ready'>, string>> = {
  superseded: 'another coordinator appended to the log: this one no longer grants (not retried)',
  unhealthy: 'an append to the event log failed: this coordinator no longer grants',
  closed: 'shutting down',
};

/** An error's message, or the value as text: for readiness reasons. */
const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error));
