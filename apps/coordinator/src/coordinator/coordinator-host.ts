/**
 * Owns the process's {@link DurableCoordinator} and keeps one running for as long as the process
 * lives, as a small state machine:
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
 *  any ──(shutdown)──────────────────────────────► closed
 * ```
 *
 * - `recovering`: `DurableCoordinator.open` runs (snapshot + replay + `CoordinatorStarted`) with a
 *   NEW boot id each attempt; commands get 503 `recovering`.
 * - `waiting-for-log`: the log failed (an append of the coordinator, or an attempt to open it);
 *   after a capped exponential backoff with jitter the host probes the log (`version()`) and, once
 *   it answers, opens the coordinator again on the SAME log object, burning every fence the failed
 *   coordinator minted (`burnFencesThrough` = its `highestMintedFence`). Commands get 503
 *   `event-log-unavailable` (`unhealthy` when the failure was not the log's).
 * - `superseded`: another coordinator appended to the log. Never retried: it owns the log now.
 * - `standby` (`LEASE_FENCE_ROLE=standby`): follows the log with a catch-up subscription and takes
 *   over once it has had no append for `takeoverAfterMillis`; commands get 503 `standby`.
 *
 * Every transition is logged (pino). The host hands the coordinator to the routes, and closes it
 * at shutdown before the event log is closed.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Recovery, single writer) and § Scale (a standby per shard)
 */
import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Inject, Injectable, Optional } from '@nestjs/common';
import {
  CoordinatorUnavailableError,
  DurableCoordinator,
  EventLogClosedError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
  StandbyCoordinator,
  type DurableCoordinatorOptions,
  type DurableCoordinatorStatus,
  type EventLog,
} from '@lease-fence/coordinator-core';
import { type ReadinessReply, resourceMatches } from '@lease-fence/protocol';
import { createMonotonicClock, type Clock } from 'lease-fence';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { EVENT_LOG } from '../event-log/event-log.tokens.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { LOGGER } from '../logging/logger.js';
import { GateLinks } from '../gate-link/gate-links.js';
import { OutcomeCounters } from './outcome-counters.js';
import { createReopenBackoff, type ReopenBackoff } from './reopen-backoff.js';

/** How the first recovery ended: the coordinator, or the error that stopped it for good. */
export type RecoveryResult = { readonly ok: true; readonly coordinator: DurableCoordinator } | { readonly ok: false; readonly error: unknown };

/** Where the host is; see the diagram in this file's header. */
export type HostState =
  /** `DurableCoordinator.open` runs: attempt `attempt` (1 = first), with boot id `bootId`. */
  | { readonly kind: 'recovering'; readonly attempt: number; readonly bootId: string }
  /** A coordinator serves (its own `status` says when it stops; the host then moves on). */
  | { readonly kind: 'ready'; readonly coordinator: DurableCoordinator }
  /** The log failed `failures` times in a row (`cause` = the last failure); the next probe runs in `delayMillis`. */
  | { readonly kind: 'waiting-for-log'; readonly failures: number; readonly delayMillis: number; readonly cause: unknown }
  /** Following another coordinator's log; takes over once it has had no append for `takeoverAfterMillis`. */
  | { readonly kind: 'standby'; readonly standby: StandbyCoordinator }
  /** Another coordinator appended to the log: never retried. */
  | { readonly kind: 'superseded'; readonly cause: unknown }
  /** Recovery failed in a way retrying cannot fix (a corrupt log, a namespace mismatch). */
  | { readonly kind: 'failed'; readonly error: unknown }
  /** Shut down. */
  | { readonly kind: 'closed' };

/** A timer the host can cancel. */
export interface HostTimer {
  cancel(): void;
}

/** Injection point for tests: the host's timers, randomness and clocks. */
export interface CoordinatorHostOptions {
  /**
   * The monotonic clock of a boot whose id (clock domain) is `bootId`; also the standby's clock
   * for measuring silence. @defaultValue lease-fence's `createMonotonicClock`
   */
  readonly newClock?: (bootId: string) => Clock;
  /** Runs `run` after `delayMillis` (milliseconds); the timer must not keep the process alive. @defaultValue an unref'd `setTimeout` */
  readonly schedule?: (delayMillis: number, run: () => void) => HostTimer;
  /** Uniform random number in [0, 1), for the backoff's jitter. @defaultValue Math.random */
  readonly random?: () => number;
}

/** DI token of optional {@link CoordinatorHostOptions} (absent in the application: real timers and `Math.random`). */
export const COORDINATOR_HOST_OPTIONS = Symbol('lease-fence:coordinator-host-options');

const scheduleTimeout = (delayMillis: number, run: () => void): HostTimer => {
  const timer = setTimeout(run, delayMillis);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
};

/** Holds the coordinator of this process, re-opening it after the event log failed. */
@Injectable()
export class CoordinatorHost implements BeforeApplicationShutdown {
  private stateValue: HostState;
  /** The coordinator that serves, or served last (its position stays readable). */
  private served: DurableCoordinator | undefined;
  private bootIdValue = randomUUID();
  /** Consecutive failures to reach the log; reset once a re-opened coordinator has appended. */
  private failures = 0;
  /** Highest fence minted by a coordinator of this process that failed: the next open burns up to it. */
  private burnFencesThrough = 0;
  /** Bumped per coordinator (and per standby), so hooks of an older one are ignored. */
  private generation = 0;
  private timer: HostTimer | undefined;
  /** The step in flight (an open, a probe, a takeover), awaited at shutdown. */
  private step: Promise<void> | undefined;
  private closing = false;
  private started = false;
  private readonly firstRecovery: Promise<RecoveryResult>;
  private settleFirstRecovery!: (result: RecoveryResult) => void;
  private readonly listeners = new Set<(state: HostState) => void>();
  private readonly backoff: ReopenBackoff;
  private readonly schedule: (delayMillis: number, run: () => void) => HostTimer;
  private readonly newClock: (bootId: string) => Clock;

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: CoordinatorMetrics,
    private readonly counters: OutcomeCounters,
    @Optional() @Inject(COORDINATOR_HOST_OPTIONS) options?: CoordinatorHostOptions,
    @Optional() private readonly gateLinks?: GateLinks,
  ) {
    this.stateValue = { kind: 'recovering', attempt: 1, bootId: this.bootIdValue };
    this.backoff = createReopenBackoff({
      initialDelayMillis: config.reopenInitialDelayMillis,
      maxDelayMillis: config.reopenMaxDelayMillis,
      ...(options?.random === undefined ? {} : { random: options.random }),
    });
    this.schedule = options?.schedule ?? scheduleTimeout;
    this.newClock = options?.newClock ?? createMonotonicClock;
    this.firstRecovery = new Promise((resolve) => { this.settleFirstRecovery = resolve; });
    metrics.readPositionFrom(() => this.served?.position);
  }

  /**
   * Resolves once this process's coordinator is ready for the first time (for a standby: once
   * it took over), or with the error when recovery failed for good (a corrupt log, bad options).
   * Stays pending while the log is unavailable (it is retried), while superseded, and after
   * shutdown. Never rejects.
   *
   * Starts the host (recovery, or following for a standby) on the first call, and nothing else
   * does: `main.ts` calls it once the port is bound, so a process that cannot listen exits
   * without having appended to the log (a `CoordinatorStarted` would supersede the coordinator
   * already running on it). Until then the host is `recovering` (`/readyz` answers 503).
   */
  recovered(): Promise<RecoveryResult> {
    if (!this.started) {
      this.started = true;
      if (this.config.role === 'standby') this.runStep(async () => this.follow());
      else this.runStep(() => this.open(1));
    }
    return this.firstRecovery;
  }

  /** Where the host is now. */
  get state(): HostState {
    return this.stateValue;
  }

  /**
   * Calls `listener` after every transition, with the new state. For tests and diagnostics.
   * @returns a function that removes the listener.
   */
  onStateChange(listener: (state: HostState) => void): () => void {
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
   * @throws {@link CoordinatorUnavailableError} `recovering`, `standby`, `superseded`, `unhealthy`
   *   (recovery failed for good, or the coordinator failed for a reason other than the log) or
   *   `closed` while none serves.
   * @throws {@link EventLogUnavailableError} while the host waits for the event log to answer again
   *   (the filter answers 503 `event-log-unavailable`).
   */
  current(): DurableCoordinator {
    const state = this.stateValue;
    switch (state.kind) {
      case 'ready':
        return state.coordinator; // a coordinator that just stopped refuses commands itself
      case 'recovering':
        throw new CoordinatorUnavailableError('recovering');
      case 'standby':
        throw new CoordinatorUnavailableError('standby');
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

  /** `/readyz`: ready only while a coordinator serves; otherwise the status and `<reason>: <detail>`. */
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
          reason: state.attempt === 1 ? 'recovering: replaying the event log' : `recovering: re-opening the coordinator on the event log (attempt ${state.attempt})`,
          ...common,
        };
      case 'waiting-for-log': {
        const detail = `${describe(state.cause)}; next attempt in ${state.delayMillis} ms`;
        return state.cause instanceof EventLogUnavailableError
          ? { ready: false, status: 'unhealthy', reason: `event-log-unavailable: ${detail}`, ...common }
          : { ready: false, status: 'unhealthy', reason: `unhealthy: ${detail}`, ...common };
      }
      case 'standby':
        // The readiness schema has no 'standby' status (`ReadinessReplySchema` in libs/protocol/src/http.ts): 'recovering' is the
        // nearest (not ready yet, will be without intervention); the reason says which.
        return {
          ready: false,
          status: 'recovering',
          reason: `standby: following the log; takes over after ${this.config.takeoverAfterMillis} ms without an append (next check in ${state.standby.millisUntilSilent()} ms)`,
          ...common,
        };
      case 'superseded':
        return { ready: false, status: 'superseded', reason: `superseded: ${STOPPED_REASONS.superseded}`, ...common };
      case 'failed':
        return { ready: false, status: 'failed', reason: `failed: recovery failed: ${describe(state.error)}`, ...common };
      case 'closed':
        return { ready: false, status: 'closed', reason: 'closed: shutting down', ...common };
    }
  }

  /** Stops retrying and following, and closes the coordinator (in-flight appends finish) before the event log is closed. */
  async beforeApplicationShutdown(): Promise<void> {
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
    if (attempt > 1) this.bootIdValue = randomUUID();
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
    this.serve(coordinator, attempt > 1 ? 'coordinator re-opened' : undefined);
  }

  /** A coordinator was opened (or taken over): it serves, unless shutdown or a failure got there first. */
  private serve(coordinator: DurableCoordinator, message: string | undefined): void {
    if (this.closing) {
      void coordinator.close();
      return;
    }
    this.metrics.recordRecovery(coordinator.recovery);
    this.burnFencesThrough = 0; // burned: recorded in this boot's CoordinatorStarted
    this.served = coordinator;
    this.transition({ kind: 'ready', coordinator });
    if (message !== undefined) {
      this.logger.info({ bootId: coordinator.bootId, position: coordinator.position, issuedFence: coordinator.issuedFence, recovery: coordinator.recovery }, message);
    }
    this.settleFirstRecovery({ ok: true, coordinator });
    // A failure reported while open() was still resolving: handle it now.
    if (coordinator.status === 'unhealthy' || coordinator.status === 'superseded') this.afterStopped(coordinator, coordinator.status, undefined);
  }

  private afterFailedOpen(error: unknown, attempt: number): void {
    if (this.closing || error instanceof EventLogClosedError) return;
    if (error instanceof EventLogUnavailableError) {
      this.waitForLog(error);
      return;
    }
    if (error instanceof ExpectedVersionConflictError) {
      this.logger.error({ err: error }, 'coordinator superseded while opening: another coordinator appended to the log; not retrying');
      this.transition({ kind: 'superseded', cause: error });
      return;
    }
    if (attempt > 1) this.logger.error({ err: error, attempt }, `re-opening the coordinator failed for good: ${describe(error)}; not retrying`);
    this.transition({ kind: 'failed', error });
    this.settleFirstRecovery({ ok: false, error });
  }

  /** The serving coordinator stopped (its `onStatusChange`). */
  private afterStopped(coordinator: DurableCoordinator, status: DurableCoordinatorStatus, cause: unknown): void {
    const state = this.stateValue;
    if (this.closing || state.kind !== 'ready' || state.coordinator !== coordinator) return;
    void coordinator.close(); // stops what is left (a snapshot being saved); keeps its status
    if (status === 'superseded') {
      this.logger.error({ err: cause, bootId: coordinator.bootId }, 'coordinator superseded: another coordinator appended to the log; it no longer grants and is not retried');
      this.transition({ kind: 'superseded', cause });
      return;
    }
    this.burnFencesThrough = Math.max(this.burnFencesThrough, coordinator.highestMintedFence);
    this.logger.error(
      { err: cause, bootId: coordinator.bootId, burnFencesThrough: this.burnFencesThrough },
      'coordinator unhealthy: it no longer grants; it is re-opened once the event log answers',
    );
    this.waitForLog(cause);
  }

  /** Backs off, then probes the log; the next open follows once it answers. */
  private waitForLog(cause: unknown): void {
    if (this.closing) return;
    this.failures += 1;
    const delayMillis = this.backoff.delayMillis(this.failures);
    this.transition({ kind: 'waiting-for-log', failures: this.failures, delayMillis, cause });
    this.logger.warn({ err: cause, failures: this.failures, delayMillis }, `event log unavailable: next attempt in ${delayMillis} ms`);
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
    this.logger.info({ failures: this.failures }, 'event log answers again: re-opening the coordinator');
    await this.open(this.failures + 1);
  }

  // ---- standby -----------------------------------------------------------------------------

  private follow(): void {
    const generation = ++this.generation;
    let standby: StandbyCoordinator;
    try {
      standby = StandbyCoordinator.follow({
        ...this.coordinatorOptions(generation, this.newClock(this.bootIdValue)),
        silenceMillis: this.config.takeoverAfterMillis,
        onFollowError: (error, { retrying }) => {
          if (retrying) this.logger.warn({ err: error }, 'standby: lost the log; following again shortly');
          else this.logger.error({ err: error }, `standby: following the log failed for good: ${describe(error)}`);
        },
      });
    } catch (error) {
      this.transition({ kind: 'failed', error });
      this.settleFirstRecovery({ ok: false, error });
      return;
    }
    this.transition({ kind: 'standby', standby });
    this.logger.info({ takeoverAfterMillis: this.config.takeoverAfterMillis, heartbeat: this.config.heartbeat }, 'standby: following the log; commands are refused until it takes over');
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
    const bootId = randomUUID();
    this.logger.info({ position: standby.position, bootId }, 'standby: the log is silent; taking over');
    let coordinator: DurableCoordinator | undefined;
    try {
      coordinator = await standby.takeOverIfSilent({ clock: this.newClock(bootId) });
    } catch (error) {
      if (this.closing) return;
      const delayMillis = error instanceof EventLogUnavailableError ? this.backoff.delayMillis(++this.failures) : undefined;
      if (delayMillis === undefined) {
        this.logger.error({ err: error }, `standby: taking over failed for good: ${describe(error)}`);
        await standby.close();
        this.transition({ kind: 'failed', error });
        this.settleFirstRecovery({ ok: false, error });
        return;
      }
      this.logger.warn({ err: error, delayMillis }, `standby: taking over failed (the log is unavailable); still following, next check in at least ${delayMillis} ms`);
      this.scheduleTakeover(standby, Math.max(delayMillis, standby.millisUntilSilent()));
      return;
    }
    if (coordinator === undefined) {
      this.logger.info({ position: standby.position }, 'standby: the active coordinator appended first; following on');
      this.scheduleTakeover(standby, standby.millisUntilSilent());
      return;
    }
    this.bootIdValue = bootId;
    this.failures = 0;
    this.serve(coordinator, 'standby: took over the log');
  }

  // ---- plumbing ----------------------------------------------------------------------------

  /** The options of every coordinator this host opens; the hooks act only while `generation` is current. */
  /** Fence-first handover for `LEASE_FENCE_FENCE_FIRST`'s resources, through the gate links; `{}` when none is configured. */
  private fenceFirstOptions(): Pick<DurableCoordinatorOptions, 'fenceFirst'> {
    const { fenceFirstPatterns: patterns, fenceFirstTimeoutMillis: timeoutMillis } = this.config;
    const links = this.gateLinks;
    if (patterns.length === 0 || links === undefined) return {};
    return {
      fenceFirst: {
        appliesTo: (resource) => patterns.some((pattern) => resourceMatches(pattern, resource)),
        timeoutMillis,
        admit: (request) => links.admit(request),
      },
    };
  }

  private coordinatorOptions(generation: number, clock: Clock): DurableCoordinatorOptions {
    const { config } = this;
    return {
      log: this.log,
      namespace: config.namespace,
      clock,
      defaultTtlMillis: config.defaultTtlMillis,
      minTtlMillis: config.minTtlMillis,
      maxTtlMillis: config.maxTtlMillis,
      snapshotEvery: config.snapshotEvery,
      checkpointIntervalMillis: config.checkpointIntervalMillis,
      heartbeat: config.heartbeat,
      floorWaitMillis: config.floorWaitMillis,
      lostFenceMarginFences: config.lostFenceMarginFences,
      burnFencesThrough: this.burnFencesThrough,
      ...this.fenceFirstOptions(),
      lockDelays: config.lockDelays,
      onAppend: (info) => {
        if (generation === this.generation) this.failures = 0; // the log works again
        this.metrics.recordAppend(info);
        for (const event of info.appended) {
          if (event.type !== 'RejectionsMissing') continue;
          const { gateId, resource, fromSeq, throughSeq, reportedSeq } = event.data;
          this.logger.warn({ gateId, resource, fromSeq, throughSeq, reportedSeq }, `refusals missing: gate ${gateId} on ${resource} reported #${reportedSeq}, but #${fromSeq}..#${throughSeq} never reached the log (RejectionsMissing)`);
        }
      },
      onOutcome: (command, outcome) => {
        this.counters.record(command, outcome);
        this.metrics.recordOutcome(command, outcome);
      },
      onStatusChange: (status, cause) => {
        if (status === 'closed') {
          this.logger.info({ status }, 'coordinator closed');
          return;
        }
        const state = this.stateValue;
        if (generation === this.generation && state.kind === 'ready') this.afterStopped(state.coordinator, status, cause);
      },
      onSnapshot: (result) => {
        if (result.error !== undefined) this.logger.warn({ err: result.error, position: result.position }, 'snapshot failed (the log is complete; recovery replays more)');
        else this.logger.debug({ position: result.position }, 'snapshot saved');
      },
    };
  }

  /** Runs one asynchronous step, tracked for shutdown; a step never rejects (a bug in it is logged). */
  private runStep(step: () => Promise<void>): void {
    const tracked: Promise<void> = step()
      .catch((error: unknown) => {
        this.logger.error({ err: error }, `bug: coordinator host step failed: ${describe(error)}`);
      })
      .finally(() => {
        if (this.step === tracked) this.step = undefined;
      });
    this.step = tracked;
  }

  private transition(state: HostState): void {
    this.stateValue = state;
    for (const listener of [...this.listeners]) listener(state);
  }
}

/** Why a coordinator that stopped no longer grants, for `/readyz`. */
const STOPPED_REASONS: Readonly<Record<Exclude<DurableCoordinatorStatus, 'ready'>, string>> = {
  superseded: 'another coordinator appended to the log: this one no longer grants (not retried)',
  unhealthy: 'an append to the event log failed: this coordinator no longer grants',
  closed: 'shutting down',
};

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
