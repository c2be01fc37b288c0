/**
 * The simulated network between nodes: every message is delayed, and may be dropped,
 * duplicated (each copy with its own delay, so copies reorder) or held up by a slow path; a
 * partitioned node neither sends nor receives. Every decision is read from the network's
 * {@link ChoiceStream}, where a 0 choice is the benign outcome (delivered once, shortest delay).
 */
import type { ChoiceStream } from './choices.js';
import type { VirtualScheduler } from './scheduler.js';
import type { Trace } from './trace.js';

/** How hostile the network is. All durations are true-time milliseconds. */
export interface NetworkProfile {
  /** Shortest one-way delay. Integer ≥ 0. */
  readonly minDelayMillis: number;
  /** Longest ordinary one-way delay. Integer ≥ minDelayMillis. */
  readonly maxDelayMillis: number;
  /** Probability that a message is lost. */
  readonly dropProbability: number;
  /** Probability that a message is delivered twice. */
  readonly duplicateProbability: number;
  /** Probability that a copy takes a slow path (reordering far behind later messages). */
  readonly slowProbability: number;
  /** Longest slow-path delay. Integer ≥ maxDelayMillis. */
  readonly slowMaxDelayMillis: number;
}

/** The network: sends messages between named nodes through the virtual scheduler. */
export class Network {
  private readonly isolatedUntil = new Map<string, number>();
  private reliable = false;
  private sentCount = 0;
  private droppedCount = 0;

  constructor(
    private readonly scheduler: VirtualScheduler,
    private readonly choices: ChoiceStream,
    private readonly trace: Trace,
    private readonly profile: NetworkProfile,
  ) {}

  /** Messages sent so far. */
  get sent(): number {
    return this.sentCount;
  }

  /** Messages lost so far (drops and partitions). */
  get dropped(): number {
    return this.droppedCount;
  }

  /** From now on every message is delivered once with the shortest delay (the drain phase). */
  makeReliable(): void {
    this.reliable = true;
    this.isolatedUntil.clear();
  }

  /** Cuts `node` off from everyone until true time `untilMillis`. */
  isolate(node: string, untilMillis: number): void {
    if (this.reliable) return;
    this.isolatedUntil.set(node, Math.max(untilMillis, this.isolatedUntil.get(node) ?? 0));
  }

  /** Whether `node` is cut off now. */
  isIsolated(node: string): boolean {
    return (this.isolatedUntil.get(node) ?? -1) > this.scheduler.nowMillis;
  }

  /**
   * Sends one message: traces `from → to  text` with its fate, and calls `deliver` at each
   * arrival (never if it was dropped or the receiver is cut off at arrival).
   */
  send(from: string, to: string, text: string, deliver: () => void): void {
    this.sentCount += 1;
    const head = `${from} → ${to}`;
    if (this.reliable) {
      this.trace.step(head, `${text}  +${this.profile.minDelayMillis}ms`);
      this.deliverAfter(this.profile.minDelayMillis, from, to, text, deliver);
      return;
    }
    const dropped = this.choices.chance(this.profile.dropProbability);
    const duplicated = this.choices.chance(this.profile.duplicateProbability);
    const first = this.delay();
    if (this.isIsolated(from) || this.isIsolated(to)) {
      this.droppedCount += 1;
      this.trace.step(head, `${text}  ✗ lost (partition)`);
      return;
    }
    if (dropped) {
      this.droppedCount += 1;
      this.trace.step(head, `${text}  ✗ dropped`);
      return;
    }
    if (duplicated) {
      const second = this.delay();
      this.trace.step(head, `${text}  +${first}ms, copy +${second}ms`);
      this.deliverAfter(first, from, to, text, deliver);
      this.deliverAfter(second, from, to, text, deliver);
      return;
    }
    this.trace.step(head, `${text}  +${first}ms`);
    this.deliverAfter(first, from, to, text, deliver);
  }

  private delay(): number {
    const { minDelayMillis, maxDelayMillis, slowProbability, slowMaxDelayMillis } = this.profile;
    const ordinary = this.choices.between(minDelayMillis, maxDelayMillis);
    const slow = this.choices.chance(slowProbability);
    return slow ? this.choices.between(maxDelayMillis, slowMaxDelayMillis) : ordinary;
  }

  private deliverAfter(delayMillis: number, from: string, to: string, text: string, deliver: () => void): void {
    this.scheduler.after(delayMillis, () => {
      if (this.isIsolated(to)) {
        this.droppedCount += 1;
        this.trace.step(`${from} → ${to}`, `${text}  ✗ lost on arrival (partition)`);
        return;
      }
      deliver();
    });
  }
}
