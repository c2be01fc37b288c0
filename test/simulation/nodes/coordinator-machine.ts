/**
 * The coordinator machine: the simulated processes that serve the coordinator over the
 * {@link SimulatedDisk}. Each process — a boot — runs coordinator-core's real
 * `CoordinatorSupervisor` (which opens the real `DurableCoordinator`, re-opens it after the log
 * failed, burning the fences of an append whose outcome is unknown, and, for a standby, takes over
 * a silent log), or the {@link DeciderShell} where a defect needs a seam inside the shell. The
 * supervisor's clock, timers, boot ids and jitter are the world's: virtual time, deterministic.
 * Processes crash and restart on faults; each boot recovers from the durable log with a fresh
 * clock domain (`coord.b<N>`, and `coord.b<N>.<k>` for the k-th re-open or takeover within it).
 * Expiry sweeps and uptime checkpoints run on virtual timers (`runTimers: false`).
 *
 * With a standby (`standby` option), two processes run: the active one and a standby following
 * the log; a crashed process comes back as a standby, and whichever serves answers requests (one
 * address, as behind a load balancer). While no process runs the machine answers nothing; while
 * none serves it answers `unavailable`.
 */
import {
  CoordinatorNotServingError,
  CoordinatorSupervisor,
  CoordinatorUnavailableError,
  EventLogUnavailableError,
  type EventLog,
  type FenceFirstOptions,
  type SupervisorEvent,
} from '@lease-fence/coordinator-core';
import type { ScheduledAction } from '../world/scheduler.js';
import { SimClock, type Oscillator } from '../world/sim-clock.js';
import type { CoordinatorService } from './coordinator-service.js';
import { DeciderShell, type DecideFunction } from './decider-shell.js';
import type { CoordinatorRequest, CoordinatorResponse, WorldContext } from './messages.js';
import { BootLog, type SimulatedDisk } from './simulated-disk.js';

/** Which shell runs the coordinator. */
export type CoordinatorShell = 'durable' | 'decider';

/** How the coordinator machine is set up. Durations are milliseconds. */
export interface CoordinatorMachineOptions {
  readonly namespace: string;
  /** Default (and only) lease TTL. */
  readonly ttlMillis: number;
  readonly shell: CoordinatorShell;
  /** Events between snapshots. */
  readonly snapshotEvery: number;
  /** Acquire grants remembered for idempotent retries. */
  readonly replayCacheSize: number;
  /** Period of the expiry sweep (virtual timer). */
  readonly sweepIntervalMillis: number;
  /** Period of the uptime checkpoint (virtual timer). */
  readonly checkpointIntervalMillis: number;
  /** The machine's clock rate schedule (shared by all boots). */
  readonly oscillator: Oscillator;
  /** Each boot's clock origin (its reading at start), arbitrary and non-negative. */
  readonly bootOriginMillis: (boot: number) => number;
  /** Virtual wall clock (epoch ms, display only). */
  readonly wallClock: () => number;
  /** Registers each boot's clock with the world's clock book. */
  readonly registerClock: (clock: SimClock) => void;
  /** Jitter of the supervisor's re-open backoff, in [0, 1): a choice stream of the world. */
  readonly random: () => number;
  /** DeciderShell only: a substitute decide (a defect). */
  readonly decide?: DecideFunction;
  /** A substitute boot log (a defect); default {@link BootLog}. */
  readonly bootLog?: (disk: SimulatedDisk, handle: EventLog) => BootLog;
  /** Fence-first handover on every resource (durable shell only): the gate port and its timeout. */
  readonly fenceFirst?: Pick<FenceFirstOptions, 'timeoutMillis' | 'admit'>;
  /** Durable shell only: run a standby beside the active process; it takes over once the log was silent this long. */
  readonly standby?: { readonly takeoverAfterMillis: number };
}

/** The supervisor's re-open backoff: waits of 10–20 ms doubling up to 200–400 ms (short, like the faults). */
const REOPEN = { reopenInitialDelayMillis: 20, reopenMaxDelayMillis: 400 };

/** One simulated process (a boot). */
interface Process {
  readonly boot: number;
  readonly role: 'active' | 'standby';
  alive: boolean;
  bootLog: BootLog | undefined;
  /** Durable shell: the supervisor of this process. */
  supervisor: CoordinatorSupervisor | undefined;
  /** DeciderShell: the shell once recovered. */
  shell: DeciderShell | undefined;
  timersStarted: boolean;
}

const createBootLog = (disk: SimulatedDisk, handle: EventLog): BootLog => new BootLog(disk, handle);

/** The coordinator machine. */
export class CoordinatorMachine {
  private readonly processes: Process[] = [];
  private boots = 0;
  private crashCount = 0;
  private reopenCount = 0;
  private takeoverCount = 0;
  /** Restarts scheduled after crashes, oldest first. */
  private readonly restarts: { readonly action: ScheduledAction; readonly role: 'active' | 'standby' }[] = [];

  constructor(
    private readonly world: WorldContext,
    private readonly disk: SimulatedDisk,
    private readonly options: CoordinatorMachineOptions,
  ) {
    if (options.standby !== undefined && options.shell !== 'durable')
      throw new TypeError('CoordinatorMachine: a standby needs the durable shell');
  }

  /** Number of crashes so far. */
  get crashes(): number {
    return this.crashCount;
  }

  /** Coordinators re-opened by a supervisor after the log failed (each burning the failed one's fences). */
  get reopens(): number {
    return this.reopenCount;
  }

  /** Standby takeovers so far. */
  get takeovers(): number {
    return this.takeoverCount;
  }

  /** Starts the first boot (and the standby's, with a standby). */
  start(): void {
    this.launch('active');
    if (this.options.standby !== undefined) this.launch('standby');
  }

  /**
   * Kills the process that serves (else the newest running one): in-flight appends land or are
   * lost (`landInFlight`), pending replies are never sent. It starts again after `downMillis`
   * (as a standby, with a standby).
   */
  crash(downMillis: number, landInFlight: boolean): void {
    const target = this.serving() ?? this.alive().at(-1);
    if (target === undefined) return;
    this.crashCount += 1;
    target.alive = false;
    target.bootLog?.crash(landInFlight);
    this.world.progress();
    this.world.trace.step(
      'coordinator',
      `✗ crashes (in-flight appends ${landInFlight ? 'land' : 'are lost'}); restarts in ${downMillis}ms`,
    );
    const role: 'active' | 'standby' = this.options.standby === undefined ? 'active' : 'standby';
    const restart = {
      role,
      action: this.world.scheduler.after(downMillis, () => {
        this.restarts.splice(this.restarts.indexOf(restart), 1);
        this.launch(role);
      }),
    };
    this.restarts.push(restart);
  }

  /** Restarts now if no process runs (the drain phase needs a coordinator). */
  restartIfDown(): void {
    if (this.alive().length > 0) return;
    const next = this.restarts.shift();
    if (next === undefined) return;
    this.world.scheduler.cancel(next.action);
    this.launch(next.role);
  }

  /** Handles a request from `from`; `reply` sends the answer back over the network. */
  receive(from: string, message: CoordinatorRequest, reply: (response: CoordinatorResponse) => void): void {
    if (this.alive().length === 0) {
      this.world.trace.step('coordinator', `✗ ${message.type} from ${from} lost: coordinator is down`);
      return;
    }
    const process = this.serving();
    const service = process === undefined ? undefined : this.serviceOf(process);
    if (process === undefined || service === undefined) {
      reply({ type: 'unavailable' });
      return;
    }
    this.world.progress();
    this.call(service, message).then(
      (response) => {
        this.world.progress();
        if (process.alive) reply(response);
      },
      (error: unknown) => {
        this.world.progress();
        if (!process.alive) return;
        if (isUnavailable(error)) reply({ type: 'unavailable' });
        else this.world.harnessError(error);
      },
    );
  }

  private async call(service: CoordinatorService, message: CoordinatorRequest): Promise<CoordinatorResponse> {
    switch (message.type) {
      case 'acquire': {
        const { resource, holderId, requestId, ttlMillis } = message.request;
        const outcome = await service.acquire({ resource, holderId, requestId, ttlMillis });
        // Fence-first's burned fence is a 503 over HTTP: the client retries.
        if (!outcome.ok && outcome.reason === 'fence-unavailable') return { type: 'unavailable' };
        return { type: 'acquire', outcome: wire(outcome) };
      }
      case 'renew': {
        const { resource, holderId, fence, requestId, ttlMillis } = message.request;
        return {
          type: 'renew',
          outcome: wire(await service.renew({ resource, holderId, fence, requestId, ttlMillis })),
        };
      }
      case 'release':
        return { type: 'release', outcome: await service.release(message.token) };
      case 'report':
        return { type: 'report', outcome: await service.recordRejection(message.report) };
    }
  }

  private alive(): Process[] {
    return this.processes.filter((p) => p.alive);
  }

  /** The newest running process with a coordinator serving, if any. */
  private serving(): Process | undefined {
    return this.alive()
      .reverse()
      .find((p) => this.serviceOf(p) !== undefined);
  }

  /** The coordinator `process` serves with, if it serves. */
  private serviceOf(process: Process): CoordinatorService | undefined {
    if (process.shell !== undefined) return process.shell;
    const state = process.supervisor?.state;
    return state?.kind === 'ready' && state.coordinator.status === 'ready' ? state.coordinator : undefined;
  }

  /** Starts a process: a new boot that recovers (or, as a standby, follows) the durable log. */
  private launch(role: 'active' | 'standby'): void {
    const boot = (this.boots += 1);
    const process: Process = {
      boot,
      role,
      alive: true,
      bootLog: undefined,
      supervisor: undefined,
      shell: undefined,
      timersStarted: false,
    };
    this.processes.push(process);
    const { trace } = this.world;
    const clock = this.newClock(`coord.b${boot}`, boot, 0);
    trace.step(
      'coordinator',
      role === 'active'
        ? `boot ${boot} starts, replays the log (clock ${clock.domain})`
        : `boot ${boot} starts as a standby, follows the log (clock ${clock.domain})`,
    );
    this.world.progress();
    const open = async (): Promise<void> => {
      const handle = await this.disk.openHandle();
      if (!process.alive) return;
      const log = (this.options.bootLog ?? createBootLog)(this.disk, handle);
      process.bootLog = log;
      if (this.options.shell === 'decider') {
        const { namespace, ttlMillis, replayCacheSize, wallClock } = this.options;
        const shell = await DeciderShell.open({
          log,
          namespace,
          clock,
          wallClock,
          defaultTtlMillis: ttlMillis,
          replayCacheSize,
          ...(this.options.decide === undefined ? {} : { decide: this.options.decide }),
        });
        this.world.progress();
        if (!process.alive) return;
        process.shell = shell;
        trace.step('coordinator', `boot ${boot} ready`);
        this.startTimers(process);
        return;
      }
      process.supervisor = this.supervise(process, log, clock);
      await process.supervisor.recovered();
      this.world.progress();
    };
    open().catch((error: unknown) => {
      this.world.progress();
      if (process.alive) this.world.checker.recoveryFailed(error);
    });
  }

  /** The real supervisor of `process`, on the world's clock, timers and choices. */
  private supervise(process: Process, log: EventLog, firstClock: SimClock): CoordinatorSupervisor {
    const { boot } = process;
    const { namespace, ttlMillis, snapshotEvery, replayCacheSize, wallClock, standby } = this.options;
    let bootIds = 0;
    return new CoordinatorSupervisor({
      log,
      role: process.role,
      ...(standby === undefined ? {} : { takeoverAfterMillis: standby.takeoverAfterMillis }),
      ...REOPEN,
      coordinator: {
        namespace,
        wallClock,
        defaultTtlMillis: ttlMillis,
        snapshotEvery,
        replayCacheSize,
        runTimers: false,
        // A standby tells an idle active coordinator from a dead one by its checkpoints.
        ...(standby === undefined ? {} : { heartbeat: true }),
        ...this.fenceFirstOf(process),
      },
      newBootId: () => (bootIds++ === 0 ? firstClock.domain : `${firstClock.domain}.${bootIds - 1}`),
      newClock: (bootId) => (bootId === firstClock.domain ? firstClock : this.newClock(bootId, boot, bootIds - 1)),
      schedule: (delayMillis, run) => {
        const action = this.world.scheduler.after(delayMillis, () => {
          if (!process.alive) return;
          this.world.progress();
          run();
        });
        return { cancel: () => this.world.scheduler.cancel(action) };
      },
      random: this.options.random,
      observer: (event) => this.observe(process, event),
    });
  }

  /** Traces what the supervisor of `process` did; a recovery that failed for good is a finding. */
  private observe(process: Process, event: SupervisorEvent): void {
    if (!process.alive) return;
    const { trace, checker } = this.world;
    const { boot } = process;
    switch (event.type) {
      case 'serving':
        this.world.progress();
        if (event.tookOver) this.takeoverCount += 1;
        else if (event.attempt > 1) this.reopenCount += 1;
        if (event.tookOver)
          trace.step('coordinator', `boot ${boot} took over the log (clock ${event.coordinator.bootId})`);
        else if (event.attempt > 1)
          trace.step(
            'coordinator',
            `boot ${boot} re-opened the coordinator (clock ${event.coordinator.bootId}, fence counter ${event.recovery.recoveredFence})`,
          );
        else trace.step('coordinator', `boot ${boot} ready`);
        this.startTimers(process);
        return;
      case 'stopped':
        trace.step(
          'coordinator',
          event.status === 'superseded'
            ? `boot ${boot} superseded: another coordinator appended to the log`
            : `boot ${boot} unhealthy: an append failed (outcome unknown); fences through ${event.burnFencesThrough} will be burned`,
        );
        return;
      case 'waiting-for-log':
        trace.step(
          'coordinator',
          `boot ${boot} waits for the log (failure ${event.failures}); next attempt in ${event.delayMillis}ms`,
        );
        return;
      case 'superseded-while-opening':
        trace.step('coordinator', `boot ${boot} superseded while opening: another coordinator appended to the log`);
        // With one process nobody else appends: a conflict means the log does not recover.
        if (this.options.standby === undefined) checker.recoveryFailed(event.error);
        return;
      case 'takeover-started':
        trace.step(
          'coordinator',
          `boot ${boot} (standby) finds the log silent at position ${event.position}; takes over`,
        );
        return;
      case 'takeover-lost-race':
        trace.step('coordinator', `boot ${boot} (standby): the active coordinator appended first; follows on`);
        return;
      case 'takeover-failed':
        if (event.retryInMillis !== undefined)
          trace.step(
            'coordinator',
            `boot ${boot} (standby): taking over failed (log unavailable); checks again in ≥ ${event.retryInMillis}ms`,
          );
        else checker.recoveryFailed(event.error);
        return;
      case 'open-failed':
        checker.recoveryFailed(event.error);
        return;
      case 'step-failed':
        this.world.harnessError(event.error);
        return;
      case 'standby-follow-error':
        if (!event.retrying) this.world.harnessError(event.error);
        return;
      case 'log-answers':
      case 'coordinator-closed':
      case 'standby-following':
        return;
    }
  }

  /** A clock of `process`'s machine for boot id `domain`: the `k`-th clock of boot `boot` (0 = its first), registered with the world. */
  private newClock(domain: string, boot: number, k: number): SimClock {
    const { scheduler } = this.world;
    const clock = new SimClock(
      domain,
      this.options.oscillator,
      scheduler,
      scheduler.nowMillis,
      this.options.bootOriginMillis(boot) + 7_777 * k,
    );
    this.options.registerClock(clock);
    return clock;
  }

  /** Starts the expiry sweep and the checkpoint of `process`, once: they run while it lives, on whichever coordinator it serves with. */
  private startTimers(process: Process): void {
    if (process.timersStarted) return;
    process.timersStarted = true;
    this.every(this.options.sweepIntervalMillis, process, (service) => service.expireDue());
    this.every(this.options.checkpointIntervalMillis, process, (service) => service.checkpoint());
  }

  /** Fence-first options for `process`: a gate's answer that arrives after the process died is never delivered to it. */
  private fenceFirstOf(process: Process): { fenceFirst?: FenceFirstOptions } {
    const fenceFirst = this.options.fenceFirst;
    if (fenceFirst === undefined) return {};
    return {
      fenceFirst: {
        appliesTo: () => true,
        timeoutMillis: fenceFirst.timeoutMillis,
        admit: (request) =>
          new Promise((resolve) => {
            fenceFirst.admit(request).then(
              (answer) => {
                this.world.progress();
                if (process.alive) resolve(answer);
              },
              () => undefined,
            );
          }),
      },
    };
  }

  /** Runs `action` every `intervalMillis` of true time while `process` lives, whenever it serves. */
  private every(
    intervalMillis: number,
    process: Process,
    action: (service: CoordinatorService) => Promise<unknown>,
  ): void {
    this.world.scheduler.after(intervalMillis, () => {
      if (!process.alive) return;
      const service = this.serviceOf(process);
      if (service !== undefined) {
        this.world.progress();
        action(service).then(
          () => this.world.progress(),
          (error: unknown) => {
            this.world.progress();
            if (process.alive && !isUnavailable(error)) this.world.harnessError(error);
          },
        );
      }
      this.every(intervalMillis, process, action);
    });
  }
}

/** Whether `error` is a refusal a client sees as 503 (retry later), not a harness failure. */
const isUnavailable = (error: unknown): boolean =>
  error instanceof CoordinatorUnavailableError ||
  error instanceof CoordinatorNotServingError ||
  error instanceof EventLogUnavailableError;

/** An outcome as it crosses the wire: instants become `{ millis, domain }` (as over HTTP). */
const wire = <T>(outcome: T): T => JSON.parse(JSON.stringify(outcome)) as T;
