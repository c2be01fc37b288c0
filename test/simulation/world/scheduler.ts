/**
 * The simulation's virtual time: a priority queue of actions keyed by (true time, insertion
 * order). No real timer, no `Date.now`: time moves only when {@link VirtualScheduler.runNext}
 * pops the next action, so the same inputs always give the same order of events.
 *
 * @see docs/simulation.md (seeded, deterministic)
 */

/** A scheduled action; pass it to {@link VirtualScheduler.cancel} to drop it. */
export interface ScheduledAction {
  /** True (simulation) time the action runs at, in milliseconds. */
  readonly atMillis: number;
  /** Insertion order: ties on `atMillis` run first-scheduled first. */
  readonly order: number;
  /** Set by {@link VirtualScheduler.cancel}; a cancelled action is skipped. */
  cancelled: boolean;
  readonly run: () => void;
}

/**
 * A binary min-heap of {@link ScheduledAction}s and the current true time. True time is the
 * simulation's own axis (milliseconds since the world started); every node's clock is a
 * function of it (see `SimClock`). Only the simulation reads it; the code under test reads
 * node clocks.
 */
export class VirtualScheduler {
  private readonly heap: ScheduledAction[] = [];
  private nextOrder = 0;
  private currentMillis = 0;
  private executed = 0;

  /** The current true time in milliseconds (starts at 0, never goes backwards). */
  get nowMillis(): number {
    return this.currentMillis;
  }

  /** Number of actions run so far (cancelled ones excluded). */
  get actionsRun(): number {
    return this.executed;
  }

  /** Whether any action (cancelled or not) is still queued. */
  get isEmpty(): boolean {
    return this.heap.length === 0;
  }

  /**
   * Schedules `run` at true time `atMillis`.
   * @throws RangeError if `atMillis` is not finite or lies before the current time.
   */
  at(atMillis: number, run: () => void): ScheduledAction {
    if (!Number.isFinite(atMillis) || atMillis < this.currentMillis) {
      throw new RangeError(
        `VirtualScheduler.at: atMillis must be a finite time at or after now (${this.currentMillis} ms), got ${atMillis}`,
      );
    }
    const action: ScheduledAction = { atMillis, order: this.nextOrder++, cancelled: false, run };
    this.push(action);
    return action;
  }

  /**
   * Schedules `run` after `delayMillis` of true time.
   * @throws RangeError if `delayMillis` is negative or not finite.
   */
  after(delayMillis: number, run: () => void): ScheduledAction {
    if (!Number.isFinite(delayMillis) || delayMillis < 0) {
      throw new RangeError(
        `VirtualScheduler.after: delayMillis must be a finite, non-negative number of milliseconds, got ${delayMillis}`,
      );
    }
    return this.at(this.currentMillis + delayMillis, run);
  }

  /** Drops a scheduled action (idempotent). */
  cancel(action: ScheduledAction | undefined): void {
    if (action !== undefined) action.cancelled = true;
  }

  /**
   * Runs the earliest action whose time is at most `untilMillis`, moving the current time to it.
   * @returns false when no such action is left (the time is then unchanged).
   */
  runNext(untilMillis = Number.POSITIVE_INFINITY): boolean {
    for (;;) {
      const head = this.heap[0];
      if (head === undefined || head.atMillis > untilMillis) return false;
      this.pop();
      if (head.cancelled) continue;
      this.currentMillis = head.atMillis;
      this.executed += 1;
      head.run();
      return true;
    }
  }

  private static before(a: ScheduledAction, b: ScheduledAction): boolean {
    return a.atMillis < b.atMillis || (a.atMillis === b.atMillis && a.order < b.order);
  }

  private push(action: ScheduledAction): void {
    const heap = this.heap;
    heap.push(action);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!VirtualScheduler.before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && VirtualScheduler.before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && VirtualScheduler.before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === index) return;
      [heap[index], heap[smallest]] = [heap[smallest]!, heap[index]!];
      index = smallest;
    }
  }
}
