/**
 * The log plus its fold at every position: the live state (head) and periodic checkpoints of
 * the fold, so any earlier position is rebuilt by folding at most `checkpointEvery` events from
 * the nearest checkpoint. Live mode and time travel share this one fold.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Time travel: any position can be folded)
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { cloneViewState } from './clone-view-state.js';
import { EventIndex } from './event-index.js';
import { evolveView } from './evolve-view.js';
import { createViewState, type ViewState } from './view-state.js';

/** Options of {@link ViewHistory}. */
export interface ViewHistoryOptions {
  /**
   * Positions between checkpoints of the fold. A jump folds at most this many events.
   * Positive integer. @defaultValue 10_000
   */
  readonly checkpointEvery?: number;
}

/** Default {@link ViewHistoryOptions.checkpointEvery}. */
export const DEFAULT_CHECKPOINT_EVERY = 10_000;

/** Rebuilt states kept for repeated `stateAt` calls. */
const STATES_CACHED = 4;

/**
 * Loaded events, the fold at the last one, and checkpoints for jumps.
 * States it returns are read-only and shared: never modify them.
 */
export class ViewHistory {
  /** The loaded events. */
  readonly index = new EventIndex();
  readonly #checkpointEvery: number;
  readonly #head: ViewState = createViewState();
  readonly #checkpoints: ViewState[] = [];
  /** The last few states rebuilt by stateAt, most recent first (a view and an investigation alternate). */
  #cached: ViewState[] = [];

  /**
   * @param options - See {@link ViewHistoryOptions}.
   * @throws RangeError if `checkpointEvery` is not a positive integer.
   */
  constructor(options: ViewHistoryOptions = {}) {
    const every = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    if (!Number.isSafeInteger(every) || every < 1) {
      throw new RangeError(`ViewHistory: checkpointEvery must be a positive integer (positions), got ${String(every)}`);
    }
    this.#checkpointEvery = every;
  }

  /** The fold of every loaded event. Read-only. */
  get head(): ViewState {
    return this.#head;
  }

  /** Position of the last loaded event; 0 when none. */
  get position(): number {
    return this.#head.position;
  }

  /** Positions of the checkpoints kept, ascending. */
  get checkpointPositions(): readonly number[] {
    return this.#checkpoints.map((c) => c.position);
  }

  /**
   * Loads the next event: indexes it, folds it into the head, and keeps a checkpoint when it
   * crosses a multiple of `checkpointEvery`.
   *
   * @throws RangeError if its position is not above {@link ViewHistory.position}; nothing changes.
   */
  append(recorded: RecordedEvent): void {
    const before = this.#head.position;
    this.index.append(recorded);
    evolveView(this.#head, recorded);
    if (Math.floor(recorded.position / this.#checkpointEvery) > Math.floor(before / this.#checkpointEvery)) {
      this.#checkpoints.push(cloneViewState(this.#head));
    }
  }

  /**
   * The view state as of `position`: the fold of every loaded event at or before it.
   * Beyond the last loaded event this is the head. Folds from the nearest checkpoint.
   *
   * @param position - A log position, integer ≥ 0.
   * @returns A read-only state whose `position` is the last loaded position ≤ `position`.
   * @throws RangeError if `position` is negative or not an integer.
   */
  stateAt(position: number): ViewState {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new RangeError(
        `ViewHistory.stateAt: position must be a non-negative integer (log position), got ${String(position)}`,
      );
    }
    if (position >= this.#head.position) return this.#head;
    const target = this.#lastLoadedAtOrBefore(position);
    const cached = this.#cached.find((c) => c.position === target);
    if (cached !== undefined) return cached;
    const checkpoint = this.#checkpointAtOrBefore(target);
    if (checkpoint !== undefined && checkpoint.position === target) return checkpoint;
    const state = checkpoint === undefined ? createViewState() : cloneViewState(checkpoint);
    const events = this.index.events();
    for (let i = this.index.indexOf(state.position + 1); i < events.length; i += 1) {
      const recorded = events[i];
      if (recorded === undefined || recorded.position > target) break;
      evolveView(state, recorded);
    }
    this.#cached = [state, ...this.#cached.slice(0, STATES_CACHED - 1)];
    return state;
  }

  /**
   * The last loaded position at or before a coordinator wall time (see
   * {@link EventIndex.lastPositionAtOrBeforeWall}); 0 when none.
   */
  positionAtWall(wallMillis: number): number {
    return this.index.lastPositionAtOrBeforeWall(wallMillis);
  }

  #lastLoadedAtOrBefore(position: number): number {
    const i = this.index.indexOf(position + 1) - 1;
    return i < 0 ? 0 : (this.index.events()[i]?.position ?? 0);
  }

  #checkpointAtOrBefore(position: number): ViewState | undefined {
    let lo = 0;
    let hi = this.#checkpoints.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#checkpoints[mid]?.position ?? Infinity) <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : this.#checkpoints[lo - 1];
  }
}
