/**
 * The coordinator machine's disk: a real EventLog adapter (memory or SQLite) that outlives
 * every coordinator boot, seen by each boot through a {@link BootLog} that gives appends a
 * virtual write latency. An append resolves only when its events have landed in the real log
 * (persist before ack); a crash leaves each in-flight append either landed (the write finished,
 * the reply was never sent) or lost, as the fault says. Reads, version and snapshots go straight
 * to the real adapter.
 *
 * Every event that lands is reported to `onLanded` in log order: the ledger's view of what is
 * durable.
 *
 * An outage ({@link SimulatedDisk.outage}) makes the log unavailable for a while: appends that
 * come due fail with `EventLogUnavailableError`, their events lost or, as the fault says, written
 * anyway (the outcome the coordinator cannot know); reads, `version()` and snapshots fail too.
 */
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import {
  AppendFailureBarrier,
  createMemoryEventLog,
  createMemoryEventLogStorage,
  EventLogUnavailableError,
  readPagesOf,
  type AppendOptions,
  type AppendResult,
  type CoordinatorEvent,
  type EventLog,
  type MemoryEventLogStorage,
  type ReadRange,
  type RecordedEvent,
  type Snapshot,
  type Subscription,
} from '@lease-fence/coordinator-core';
import type { ChoiceStream } from '../world/choices.js';
import type { VirtualScheduler } from '../world/scheduler.js';

/** Which real adapter stores the log. */
export type LogKind = 'memory' | 'sqlite';

/** How the disk behaves. Durations are true-time milliseconds. */
export interface DiskOptions {
  readonly kind: LogKind;
  /** SQLite only: the database file (a fresh temp file per run). */
  readonly file?: string;
  /** Shortest and longest append latency. */
  readonly minAppendMillis: number;
  readonly maxAppendMillis: number;
  /** Virtual wall clock for `recordedAtMillis` (display only). */
  readonly wallClock: () => number;
}

/**
 * The durable storage shared by all boots: opens a fresh real adapter handle per boot (as a
 * restarted process would) on the same memory storage or the same SQLite file.
 */
export class SimulatedDisk {
  private readonly storage: MemoryEventLogStorage = createMemoryEventLogStorage();
  private readonly handles: EventLog[] = [];
  private landed = 0;
  private unavailableUntilMillis = Number.NEGATIVE_INFINITY;
  private outageWrites = false;

  constructor(
    readonly options: DiskOptions,
    readonly scheduler: VirtualScheduler,
    readonly timing: ChoiceStream,
    /** Called for each event that lands, in log order. */
    readonly onLanded: (event: CoordinatorEvent) => void,
    /** Called whenever asynchronous work made progress (the world settles on it). */
    readonly onProgress: () => void,
  ) {}

  /** Events landed in the real log so far (its version). */
  get landedCount(): number {
    return this.landed;
  }

  /** An event landed in the real log: count it and report it. */
  recordLanded(event: CoordinatorEvent): void {
    this.landed += 1;
    this.onLanded(event);
  }

  /**
   * The log is unavailable for `durationMillis` from now: every call fails with
   * `EventLogUnavailableError`; an append that comes due meanwhile is written anyway when
   * `writesLand` (its reply is still the error), else lost.
   */
  outage(durationMillis: number, writesLand: boolean): void {
    this.unavailableUntilMillis = this.scheduler.nowMillis + durationMillis;
    this.outageWrites = writesLand;
    this.onProgress();
  }

  /** Whether an outage is on now. */
  get unavailable(): boolean {
    return this.scheduler.nowMillis < this.unavailableUntilMillis;
  }

  /** Whether an append that comes due during the outage is written anyway. */
  get outageWritesLand(): boolean {
    return this.outageWrites;
  }

  /** The error every call gets during an outage. */
  unavailableError(): EventLogUnavailableError {
    return new EventLogUnavailableError(this.options.kind, { message: 'simulated outage: the log does not answer' });
  }

  /** Opens a new handle on the durable storage (a new process's view of the same data). */
  async openHandle(): Promise<EventLog> {
    const { kind, file, wallClock } = this.options;
    const handle =
      kind === 'memory'
        ? createMemoryEventLog({ storage: this.storage, wallClock })
        : await openSqliteEventLog({ file: requireFile(file), wallClock, durability: 'normal' });
    this.handles.push(handle);
    return handle;
  }

  /** The next append latency, from the timing choices (0 choice → shortest). */
  nextAppendLatency(): number {
    return this.timing.between(this.options.minAppendMillis, this.options.maxAppendMillis);
  }

  /** Closes every handle (end of run). */
  async close(): Promise<void> {
    for (const handle of this.handles.splice(0)) await handle.close();
  }
}

const requireFile = (file: string | undefined): string => {
  if (file === undefined) throw new TypeError('SimulatedDisk: options.file is required for the sqlite log');
  return file;
};

interface InFlight {
  readonly events: readonly CoordinatorEvent[];
  readonly options: AppendOptions;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/**
 * One boot's view of the disk: appends land after a virtual latency, in order, and resolve
 * only then. {@link BootLog.crash} kills the boot: in-flight appends land or vanish, and every
 * later call hangs forever (a dead process gets no answers).
 */
export class BootLog implements EventLog {
  readonly name: string;
  /** Writes land in FIFO order ({@link BootLog.scheduleLanding}), so the coordinator pipelines its appends here too. */
  readonly appendsInCallOrder = true;
  /** The rule of `appendsInCallOrder`: appends called before a failed one was seen are refused, not landed. */
  private readonly barrier: AppendFailureBarrier;
  protected dead = false;
  protected readonly inFlight: InFlight[] = [];
  private landingAt = 0;

  constructor(
    protected readonly disk: SimulatedDisk,
    protected readonly handle: EventLog,
  ) {
    this.name = handle.name;
    this.barrier = new AppendFailureBarrier(handle.name);
  }

  /** Schedules the write; resolves once the events are in the real log. */
  append(events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.dead) return hang();
    this.disk.onProgress();
    const epoch = this.barrier.enter();
    return new Promise<AppendResult>((resolve, reject) => {
      const fail = (error: unknown): void => {
        this.barrier.failed(epoch);
        reject(error);
      };
      const pending: InFlight = { events, options, resolve, reject: fail };
      this.inFlight.push(pending);
      this.scheduleLanding(() => {
        this.remove(pending);
        if (this.dead) return;
        const refused = this.barrier.refusal(epoch);
        if (refused !== undefined) return reject(refused);
        if (this.disk.unavailable) {
          const error = this.disk.unavailableError();
          if (!this.disk.outageWritesLand) return fail(error);
          this.land(pending.events, pending.options).then(() => fail(error), fail);
          return;
        }
        this.land(pending.events, pending.options).then(resolve, fail);
      });
    });
  }

  /**
   * The process dies. In-flight appends land (the write completed; nobody hears of it) when
   * `landInFlight` is true, else they are lost. Later calls never answer.
   */
  crash(landInFlight: boolean): void {
    this.dead = true;
    this.disk.onProgress();
    for (const pending of this.inFlight.splice(0)) {
      if (landInFlight) this.land(pending.events, pending.options).catch(() => undefined);
    }
  }

  read(range: ReadRange): AsyncIterable<RecordedEvent> {
    return this.disk.unavailable ? failing(this.disk.unavailableError()) : this.handle.read(range);
  }

  readPages(range: ReadRange): AsyncIterable<readonly RecordedEvent[]> {
    return this.disk.unavailable ? failing(this.disk.unavailableError()) : readPagesOf(this.handle, range);
  }

  version(): Promise<number> {
    if (this.dead) return hang();
    return this.disk.unavailable ? Promise.reject(this.disk.unavailableError()) : this.handle.version();
  }

  subscribe(options: { readonly after: number }): Subscription {
    return this.handle.subscribe(options);
  }

  latestSnapshot(): Promise<Snapshot | undefined> {
    if (this.dead) return hang();
    return this.disk.unavailable ? Promise.reject(this.disk.unavailableError()) : this.handle.latestSnapshot();
  }

  saveSnapshot(snapshot: Snapshot): Promise<void> {
    if (this.dead) return hang();
    return this.disk.unavailable ? Promise.reject(this.disk.unavailableError()) : this.handle.saveSnapshot(snapshot);
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** Writes to the real log and reports each landed event. */
  protected async land(events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult> {
    const result = await this.handle.append(events, options);
    for (const event of events) this.disk.recordLanded(event);
    this.disk.onProgress();
    return result;
  }

  /** How long the next write takes to land (ms): the disk's latency. */
  protected nextLatency(): number {
    return this.disk.nextAppendLatency();
  }

  /** Runs `write` after the next latency, never before an earlier write of this boot (FIFO). */
  protected scheduleLanding(write: () => void): void {
    const { scheduler } = this.disk;
    this.landingAt = Math.max(this.landingAt, scheduler.nowMillis + this.nextLatency());
    scheduler.at(this.landingAt, () => {
      this.disk.onProgress(); // the write's promise settles after this step: let the world settle it
      write();
    });
  }

  private remove(pending: InFlight): void {
    const index = this.inFlight.indexOf(pending);
    if (index >= 0) this.inFlight.splice(index, 1);
  }
}

/** An iterable whose first step fails with `error`: a read during an outage. */
const failing = <T>(error: unknown): AsyncIterable<T> => ({
  [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
});

/** A promise that never settles: what a dead process's calls get. */
const hang = <T>(): Promise<T> => new Promise<T>(() => undefined);
