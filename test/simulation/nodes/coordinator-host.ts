/**
 * The coordinator machine: one process at a time — a boot — running the real
 * `DurableCoordinator` (or the {@link DeciderShell} where a defect needs a seam inside the
 * shell) over the {@link SimulatedDisk}. It crashes and restarts on faults; each boot recovers
 * from the durable log with a fresh clock domain (`coord.b<N>`). Its expiry sweeps and uptime
 * checkpoints run on virtual timers (`runTimers: false`: no real timer inside the coordinator).
 *
 * While down it answers nothing; while recovering it answers `unavailable`.
 */
import { CoordinatorUnavailableError, DurableCoordinator, type EventLog, type FenceFirstOptions } from '@lease-fence/coordinator-core';
import { SimClock, type Oscillator } from '../world/sim-clock.js';
import type { CoordinatorService } from './coordinator-service.js';
import { DeciderShell, type DecideFunction } from './decider-shell.js';
import type { CoordinatorRequest, CoordinatorResponse, WorldContext } from './messages.js';
import { BootLog, type SimulatedDisk } from './simulated-disk.js';

/** Which shell runs the coordinator. */
export type CoordinatorShell = 'durable' | 'decider';

/** How the coordinator machine is set up. Durations are milliseconds. */
export interface CoordinatorHostOptions {
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
  /** DeciderShell only: a substitute decide (a defect). */
  readonly decide?: DecideFunction;
  /** A substitute boot log (a defect); default {@link BootLog}. */
  readonly bootLog?: (disk: SimulatedDisk, handle: EventLog) => BootLog;
  /** Fence-first handover on every resource (durable shell only): the gate port and its timeout. */
  readonly fenceFirst?: Pick<FenceFirstOptions, 'timeoutMillis' | 'admit'>;
}

const createBootLog = (disk: SimulatedDisk, handle: EventLog): BootLog => new BootLog(disk, handle);

/** The coordinator machine. */
export class CoordinatorHost {
  private status: 'down' | 'recovering' | 'up' = 'down';
  private boots = 0;
  /** Bumped on every crash and every start: callbacks of an older epoch are ignored. */
  private epoch = 0;
  private service: CoordinatorService | undefined;
  private bootLog: BootLog | undefined;
  private crashCount = 0;

  constructor(
    private readonly world: WorldContext,
    private readonly disk: SimulatedDisk,
    private readonly options: CoordinatorHostOptions,
  ) {}

  /** Number of crashes so far. */
  get crashes(): number {
    return this.crashCount;
  }

  /** Whether a boot is serving. */
  get isUp(): boolean {
    return this.status === 'up';
  }

  /** Whether no process is running (crashed, restart pending). */
  get isDown(): boolean {
    return this.status === 'down';
  }

  /** Starts the first boot. */
  start(): void {
    this.recover();
  }

  /**
   * Kills the running boot: in-flight appends land or are lost (`landInFlight`), pending
   * replies are never sent. A new boot starts after `downMillis`.
   */
  crash(downMillis: number, landInFlight: boolean): void {
    if (this.status === 'down') return;
    this.crashCount += 1;
    this.epoch += 1;
    this.status = 'down';
    this.bootLog?.crash(landInFlight);
    this.bootLog = undefined;
    this.service = undefined;
    this.world.progress();
    this.world.trace.step('coordinator', `✗ crashes (in-flight appends ${landInFlight ? 'land' : 'are lost'}); restarts in ${downMillis}ms`);
    const epoch = this.epoch;
    this.world.scheduler.after(downMillis, () => {
      if (epoch === this.epoch) this.recover();
    });
  }

  /** Restarts now if down (the drain phase needs a coordinator). */
  restartIfDown(): void {
    if (this.status === 'down') this.recover();
  }

  /** Handles a request from `from`; `reply` sends the answer back over the network. */
  receive(from: string, message: CoordinatorRequest, reply: (response: CoordinatorResponse) => void): void {
    if (this.status === 'down') {
      this.world.trace.step('coordinator', `✗ ${message.type} from ${from} lost: coordinator is down`);
      return;
    }
    if (this.status === 'recovering' || this.service === undefined) {
      reply({ type: 'unavailable' });
      return;
    }
    const epoch = this.epoch;
    this.world.progress();
    this.call(this.service, message).then(
      (response) => {
        this.world.progress();
        if (epoch === this.epoch) reply(response);
      },
      (error: unknown) => {
        this.world.progress();
        if (epoch !== this.epoch) return;
        if (error instanceof CoordinatorUnavailableError) reply({ type: 'unavailable' });
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
        return { type: 'renew', outcome: wire(await service.renew({ resource, holderId, fence, requestId, ttlMillis })) };
      }
      case 'release':
        return { type: 'release', outcome: await service.release(message.token) };
      case 'report':
        return { type: 'report', outcome: await service.recordRejection(message.report) };
    }
  }

  private recover(): void {
    this.epoch += 1;
    const epoch = this.epoch;
    this.status = 'recovering';
    this.boots += 1;
    const boot = this.boots;
    const { scheduler, trace } = this.world;
    const clock = new SimClock(`coord.b${boot}`, this.options.oscillator, scheduler, scheduler.nowMillis, this.options.bootOriginMillis(boot));
    this.options.registerClock(clock);
    trace.step('coordinator', `boot ${boot} starts, replays the log (clock ${clock.domain})`);
    this.world.progress();
    const open = async (): Promise<void> => {
      const handle = await this.disk.openHandle();
      if (epoch !== this.epoch) return;
      const log = (this.options.bootLog ?? createBootLog)(this.disk, handle);
      this.bootLog = log;
      const { namespace, ttlMillis, snapshotEvery, replayCacheSize, wallClock } = this.options;
      const service: CoordinatorService = this.options.shell === 'durable'
        ? await DurableCoordinator.open({ log, namespace, clock, wallClock, defaultTtlMillis: ttlMillis, snapshotEvery, replayCacheSize, runTimers: false, ...this.fenceFirstOf(epoch) })
        : await DeciderShell.open({
          log, namespace, clock, wallClock, defaultTtlMillis: ttlMillis, replayCacheSize,
          ...(this.options.decide === undefined ? {} : { decide: this.options.decide }),
        });
      this.world.progress();
      if (epoch !== this.epoch) return;
      this.service = service;
      this.status = 'up';
      trace.step('coordinator', `boot ${boot} ready`);
      this.every(this.options.sweepIntervalMillis, epoch, () => service.expireDue());
      this.every(this.options.checkpointIntervalMillis, epoch, () => service.checkpoint());
    };
    open().catch((error: unknown) => {
      this.world.progress();
      if (epoch !== this.epoch) return;
      this.world.checker.recoveryFailed(error);
    });
  }

  /** Fence-first options for the boot of `epoch`: a gate's answer that arrives after this boot died is never delivered to it. */
  private fenceFirstOf(epoch: number): { fenceFirst?: FenceFirstOptions } {
    const fenceFirst = this.options.fenceFirst;
    if (fenceFirst === undefined) return {};
    return {
      fenceFirst: {
        appliesTo: () => true,
        timeoutMillis: fenceFirst.timeoutMillis,
        admit: (request) => new Promise((resolve) => {
          fenceFirst.admit(request).then((answer) => {
            this.world.progress();
            if (epoch === this.epoch) resolve(answer);
          }, () => undefined);
        }),
      },
    };
  }

  /** Runs `action` every `intervalMillis` of true time while this boot lives. */
  private every(intervalMillis: number, epoch: number, action: () => Promise<unknown>): void {
    this.world.scheduler.after(intervalMillis, () => {
      if (epoch !== this.epoch || this.status !== 'up') return;
      this.world.progress();
      action().then(
        () => this.world.progress(),
        (error: unknown) => {
          this.world.progress();
          if (epoch === this.epoch && !(error instanceof CoordinatorUnavailableError)) this.world.harnessError(error);
        },
      );
      this.every(intervalMillis, epoch, action);
    });
  }
}

/** An outcome as it crosses the wire: instants become `{ millis, domain }` (as over HTTP). */
const wire = <T>(outcome: T): T => JSON.parse(JSON.stringify(outcome)) as T;
