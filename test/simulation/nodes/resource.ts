/**
 * A fenced resource: it applies writes only through its gate — the real `lease-fence`
 * {@link FenceGate}, or a defect's substitute — and reports each refusal to the coordinator
 * (retrying until acknowledged) when reporting is on. A write takes virtual time: the gate lets
 * it start (the moment it is applied, as far as the ledger is concerned), and the holder is
 * answered when it finishes.
 *
 * A durable resource keeps its data, its gate's floor and sequence, and its report outbox across
 * a restart; a volatile one comes back as a new incarnation with nothing (and a new gate id, so
 * its new rejection numbers are not mistaken for duplicates of the old ones).
 *
 * @see docs/design.md § "The library's rules" (FenceGate; a resource restores its floor after its own restart)
 */
import { FenceGate, type FenceGateOptions, type FenceToken, type GateFloor, type RejectionRecord } from 'lease-fence';
import type { ChoiceStream } from '../world/choices.js';
import type { RejectionReport } from './coordinator-service.js';
import {
  describeResponse,
  type CoordinatorRequest,
  type CoordinatorResponse,
  type ResourceRequest,
  type ResourceResponse,
  type WorldContext,
} from './messages.js';

/** A write in progress; a gate substitute may wait for it to finish. */
export interface PendingWrite {
  /** Calls `callback` when the write has finished (at once if it already has). */
  whenDone(callback: () => void): void;
}

/** What a resource needs of its gate: the surface of `FenceGate` it uses. */
export interface SimGate {
  readonly floor: GateFloor | undefined;
  readonly nextSeq: number;
  readonly rejections: readonly RejectionRecord[];
  commit<T>(token: FenceToken, fn: () => T): T;
  admit(token: FenceToken): void;
}

/** Makes a resource's gate. The default is the real `new FenceGate(resource, options)`. */
export type GateFactory = (resource: string, options: FenceGateOptions, world: WorldContext) => SimGate;

/** How a resource behaves. Durations are true-time milliseconds. */
export interface ResourceOptions {
  readonly name: string;
  /** Data, floor, sequence and outbox survive a restart. */
  readonly durable: boolean;
  /** A durable resource restores its gate's floor at restart (false only in a defect). */
  readonly restoreFloor: boolean;
  /** Refusals are reported to the coordinator. */
  readonly reporting: boolean;
  readonly minWriteMillis: number;
  readonly maxWriteMillis: number;
  /** Resend period of an unacknowledged rejection report. */
  readonly reportRetryMillis: number;
  readonly gate?: GateFactory;
  /**
   * Send each report as soon as its refusal is made, all at once, instead of one at a time in
   * seq order (true only in a defect: the coordinator may then see seq 3 before seq 2).
   */
  readonly reportConcurrently?: boolean;
}

/** The coordinator, as a resource reaches it. */
export interface CoordinatorEndpoint {
  receive(from: string, message: CoordinatorRequest, reply: (response: CoordinatorResponse) => void): void;
}

const realGate: GateFactory = (resource, options) => new FenceGate(resource, options);

/** A fenced resource node. */
export class ResourceNode {
  private incarnation = 1;
  private epoch = 0;
  private up = true;
  private gate: SimGate;
  private readonly outbox = new Map<number, RejectionReport>();
  /** The report on its way (one at a time, lowest seq first), or `undefined`. */
  private reportInFlight: { readonly seq: number } | undefined;
  private applied = 0;
  private refusedCount = 0;

  constructor(
    private readonly world: WorldContext,
    private readonly timing: ChoiceStream,
    private readonly coordinator: CoordinatorEndpoint,
    private readonly options: ResourceOptions,
  ) {
    this.gate = this.makeGate(undefined, 1);
    world.checker.resourceStarted(this.incarnationKey, undefined);
  }

  /** Writes applied so far. */
  get writesApplied(): number {
    return this.applied;
  }

  /** Writes and pushes refused so far. */
  get refusals(): number {
    return this.refusedCount;
  }

  /** Rejection reports not yet acknowledged by the coordinator. */
  get pendingReports(): number {
    return this.outbox.size;
  }

  private get incarnationKey(): string {
    return `${this.options.name}#${this.incarnation}`;
  }

  /** The id the gate reports under (what a fence-first admit names). */
  get gateName(): string {
    return this.gateId;
  }

  private get gateId(): string {
    return this.options.durable ? `gate-${this.options.name}` : `gate-${this.options.name}.${this.incarnation}`;
  }

  /** Handles a write or a handover push from `from`. */
  receive(from: string, request: ResourceRequest, reply: (response: ResourceResponse) => void): void {
    const { trace } = this.world;
    const name = this.options.name;
    if (!this.up) {
      trace.step(name, `✗ ${request.type} from ${from} lost: ${name} is down`);
      return;
    }
    const { token } = request;
    try {
      if (request.type === 'admit') {
        this.gate.admit(token);
        this.world.checker.admitted(this.incarnationKey, token);
        trace.step(name, `admits fence ${token.fence} (${token.holderId}) as its floor`);
        reply({ type: 'admitted' });
        return;
      }
      const writeMillis = this.timing.between(this.options.minWriteMillis, this.options.maxWriteMillis);
      this.gate.commit(token, () => this.beginWrite(token, request.writeId, writeMillis, reply));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== 'stale-fence' && code !== 'double-grant') {
        this.world.harnessError(error);
        return;
      }
      this.refusedCount += 1;
      const rejection = (error as { rejection?: RejectionRecord }).rejection;
      trace.step(
        name,
        `refuses ${request.type === 'write' ? request.writeId : 'push'} fence ${token.fence} (${token.holderId}): ${String(code)}` +
          (rejection === undefined
            ? ''
            : `, floor ${rejection.current.fence} (${rejection.current.holderId}), #${rejection.seq}`),
      );
      this.world.checker.refused(
        { incarnation: this.incarnationKey, gateId: this.gateId, token, error, gateRejections: this.gate.rejections },
        this.options.reporting,
      );
      reply({ type: 'refused', code: String(code) });
    }
  }

  /** The resource goes down for `downMillis`; writes in progress are never answered. */
  restart(downMillis: number): void {
    if (!this.up) return;
    const { trace, scheduler, checker } = this.world;
    this.up = false;
    this.epoch += 1;
    this.reportInFlight = undefined;
    const floor = this.gate.floor;
    const nextSeq = this.gate.nextSeq;
    trace.step(
      this.options.name,
      `✗ restarts (${this.options.durable ? 'durable' : 'volatile'} store), back in ${downMillis}ms`,
    );
    scheduler.after(downMillis, () => {
      this.up = true;
      this.epoch += 1;
      if (this.options.durable) {
        const restored = this.options.restoreFloor ? floor : undefined;
        this.gate = this.makeGate(restored, nextSeq);
        trace.step(
          this.options.name,
          `back up, floor ${restored === undefined ? 'none' : `${restored.fence} (${restored.holderId})`}`,
        );
        this.sendReports();
      } else {
        checker.reportsLost(this.gateId, this.options.name, [...this.outbox.keys()]);
        this.outbox.clear();
        this.incarnation += 1;
        this.gate = this.makeGate(undefined, 1);
        checker.resourceStarted(this.incarnationKey, undefined);
        trace.step(this.options.name, `back up as incarnation ${this.incarnation}, empty`);
      }
    });
  }

  /** Resends every unacknowledged report (the drain phase). */
  flushReports(): void {
    if (this.up) this.sendReports();
  }

  private makeGate(floor: GateFloor | undefined, initialSeq: number): SimGate {
    const options: FenceGateOptions = {
      ...(floor === undefined ? {} : { initialFloor: floor }),
      initialSeq,
      onRejection: (rejection) => this.queueReport(rejection),
    };
    return (this.options.gate ?? realGate)(this.options.name, options, this.world);
  }

  private beginWrite(
    token: FenceToken,
    writeId: string,
    writeMillis: number,
    reply: (response: ResourceResponse) => void,
  ): PendingWrite {
    const { checker, trace, scheduler } = this.world;
    this.applied += 1;
    checker.writeApplied(this.incarnationKey, token);
    trace.step(
      this.options.name,
      `applies ${writeId} under fence ${token.fence} (${token.holderId}), ${writeMillis}ms`,
    );
    const epoch = this.epoch;
    const waiting: (() => void)[] = [];
    let done = false;
    scheduler.after(writeMillis, () => {
      done = true;
      for (const callback of waiting.splice(0)) callback();
      if (epoch === this.epoch) reply({ type: 'applied', writeId });
    });
    return {
      whenDone(callback: () => void): void {
        if (done) callback();
        else waiting.push(callback);
      },
    };
  }

  private queueReport(rejection: RejectionRecord): void {
    if (!this.options.reporting) return;
    const { seq, resource, kind, rejected, current } = rejection;
    this.outbox.set(seq, {
      gateId: this.gateId,
      resource,
      seq,
      kind,
      rejected: { ...rejected },
      current: { ...current },
    });
    const epoch = this.epoch;
    // Sent after the refusal is answered, as a background report.
    this.world.scheduler.after(0, () => {
      if (epoch !== this.epoch) return;
      if (this.options.reportConcurrently === true) this.sendReport(seq);
      else this.sendReports();
    });
  }

  /**
   * Sends the outbox as the SDK's `reportRejections` does: one report at a time, lowest seq
   * first, the next only once the coordinator has answered this one; unanswered, the same one is
   * sent again after `reportRetryMillis`. The coordinator reads a seq above the next one it
   * expects as lost refusals (`RejectionsMissing`), so reports must arrive in order.
   */
  private sendReports(): void {
    if (this.options.reportConcurrently === true) {
      for (const seq of this.outbox.keys()) this.sendReport(seq);
      return;
    }
    if (!this.up || this.reportInFlight !== undefined) return;
    const seq = Math.min(...this.outbox.keys());
    if (!Number.isFinite(seq)) return;
    const inFlight = { seq };
    this.reportInFlight = inFlight;
    const settle = (): boolean => {
      if (this.reportInFlight !== inFlight) return false; // a restart or a resend took over
      this.reportInFlight = undefined;
      return true;
    };
    this.sendReport(
      seq,
      () => {
        if (!settle()) return;
        this.outbox.delete(seq);
        this.sendReports();
      },
      () => {
        if (settle()) this.sendReports();
      },
    );
  }

  /**
   * Sends the report of `seq` once. `onAnswered` runs when the coordinator's answer arrives;
   * `onUnanswered` after `reportRetryMillis` whatever happened. Without them (the concurrent
   * defect) it removes an answered report itself and resends an unanswered one.
   */
  private sendReport(seq: number, onAnswered?: () => void, onUnanswered?: () => void): void {
    const report = this.outbox.get(seq);
    if (report === undefined || !this.up) return;
    const { network, scheduler } = this.world;
    const name = this.options.name;
    const epoch = this.epoch;
    network.send(
      name,
      'coordinator',
      `report refusal #${seq}: fence ${report.rejected.fence} (${report.rejected.holderId}) < floor ${report.current.fence}`,
      () =>
        this.coordinator.receive(name, { type: 'report', report }, (response) =>
          network.send('coordinator', name, describeResponse(response), () => {
            // Recorded, a duplicate, or denied for good (not retryable as is): either way it leaves
            // the outbox. A genuine report that was denied never reaches the log, which I6 reports.
            if (response.type !== 'report' || epoch !== this.epoch) return;
            if (onAnswered !== undefined) onAnswered();
            else this.outbox.delete(seq);
          }),
        ),
    );
    scheduler.after(this.options.reportRetryMillis, () => {
      if (epoch !== this.epoch) return;
      if (onUnanswered !== undefined) onUnanswered();
      else if (this.outbox.has(seq)) this.sendReport(seq);
    });
  }
}
