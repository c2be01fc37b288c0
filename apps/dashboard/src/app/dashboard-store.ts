/**
 * The dashboard's live data outside React: the loaded log and its fold ({@link ViewHistory}), the
 * stats ring, the connection state and clock offset. The stream client writes to it; React reads
 * immutable {@link DashboardSnapshot}s through `useSyncExternalStore` (see use-dashboard-store.ts),
 * notified at most once per animation frame however fast events arrive.
 */
import type { RecordedEvent, StreamFrame } from '@lease-fence/protocol';
import { ViewHistory, type ViewHistoryOptions } from '@lease-fence/dashboard-model';
import { StatsHistory } from '../stream/stats-history.js';
import type { ConnectionState } from '../stream/stream-client.js';

/** Options of {@link DashboardStore}. */
export interface DashboardStoreOptions extends ViewHistoryOptions {
  /** Runs a callback soon (the browser: `requestAnimationFrame`); notifications are batched into it. */
  readonly schedule: (callback: () => void) => void;
}

/** Most problems kept for display. */
const MAX_PROBLEMS = 20;

/**
 * What a problem is about: `connection` (the coordinator could not be reached or answered an
 * error; cleared once the stream is live again) or `data` (an invalid frame, a gap; kept until dismissed).
 */
export type ProblemKind = 'connection' | 'data';

/** A problem shown to the operator. */
export interface DashboardProblem {
  readonly message: string;
  readonly kind: ProblemKind;
  /** When it happened: this browser's wall clock, epoch milliseconds. */
  readonly atMillis: number;
}

/**
 * What the store holds at one version, frozen: a new object whenever anything changes, the same
 * object while nothing does (so `useSyncExternalStore` re-renders exactly on change). The loaded
 * log itself ({@link DashboardStore.history}) is too large to copy per frame and is folded in
 * place; `loadedPosition` and `statsSize` say how far it and the stats ring had got.
 */
export interface DashboardSnapshot {
  /** Changes on every update. */
  readonly version: number;
  readonly connection: ConnectionState;
  /** True once the catch-up reached the head of the log at least once. */
  readonly caughtUp: boolean;
  /** Highest position the coordinator has mentioned (at least the loaded position). */
  readonly headPosition: number;
  /** Last loaded log position (`history.position`) at this version. */
  readonly loadedPosition: number;
  /** Coordinator wall clock minus this browser's clock, milliseconds. */
  readonly clockOffsetMillis: number;
  /** Recent problems, newest last. */
  readonly problems: readonly DashboardProblem[];
  /** Samples in the stats ring at this version. */
  readonly statsSize: number;
  /** True while loading is held at a position (a paused view does not load further). */
  readonly held: boolean;
}

/** Shared state of one dashboard session. */
export class DashboardStore {
  /** The loaded log and its fold. */
  readonly history: ViewHistory;
  /** Rates from `stats` frames (denials are not logged). */
  readonly stats = new StatsHistory();
  #connection: ConnectionState = { status: 'connecting', after: 0, attempt: 0 };
  #caughtUp = false;
  #headPosition = 0;
  #clockOffsetMillis = 0;
  #problems: DashboardProblem[] = [];
  #held = false;
  #version = 0;
  #snapshot: DashboardSnapshot | undefined;
  #scheduled = false;
  readonly #listeners = new Set<() => void>();
  readonly #schedule: (callback: () => void) => void;

  constructor(options: DashboardStoreOptions) {
    this.history = new ViewHistory(options);
    this.#schedule = options.schedule;
  }

  /** Changes on every update; React's snapshot. */
  get version(): number {
    return this.#version;
  }

  /** The stream client's state, as last reported. */
  get connection(): ConnectionState {
    return this.#connection;
  }

  /** True once the catch-up reached the head of the log at least once. */
  get caughtUp(): boolean {
    return this.#caughtUp;
  }

  /** Highest position the coordinator has mentioned. */
  get headPosition(): number {
    return Math.max(this.#headPosition, this.history.position);
  }

  /** Coordinator wall clock minus this browser's clock, milliseconds (from heartbeats and stats). */
  get clockOffsetMillis(): number {
    return this.#clockOffsetMillis;
  }

  /** Recent problems (invalid frames, gaps, HTTP errors), newest last. */
  get problems(): readonly DashboardProblem[] {
    return this.#problems;
  }

  /** Registers a listener; returns the unsubscribe function. */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Snapshot for `useSyncExternalStore`. */
  getVersion = (): number => this.#version;

  /** The current {@link DashboardSnapshot} (the same object until the next change). */
  getSnapshot = (): DashboardSnapshot => {
    if (this.#snapshot?.version !== this.#version) {
      this.#snapshot = Object.freeze({
        version: this.#version,
        connection: this.#connection,
        caughtUp: this.#caughtUp,
        headPosition: this.headPosition,
        loadedPosition: this.history.position,
        clockOffsetMillis: this.#clockOffsetMillis,
        problems: this.#problems,
        statsSize: this.stats.size,
        held: this.#held,
      });
    }
    return this.#snapshot;
  };

  /** Records whether loading is held at a position (the stream client's `heldAt` is set). */
  setHeld(held: boolean): void {
    if (held === this.#held) return;
    this.#held = held;
    this.#changed();
  }

  /** Loads the next event (from the stream, an HTTP page or an import). */
  appendEvent(recorded: RecordedEvent): void {
    this.history.append(recorded);
    this.#changed();
  }

  /**
   * Applies a non-event frame.
   *
   * @param localNowMillis - This browser's clock when the frame arrived (for the clock offset).
   */
  applyFrame(frame: Exclude<StreamFrame, { type: 'event' }>, localNowMillis: number): void {
    switch (frame.type) {
      case 'caught-up':
        this.#caughtUp = true;
        this.#headPosition = Math.max(this.#headPosition, frame.position);
        break;
      case 'heartbeat':
        this.#headPosition = Math.max(this.#headPosition, frame.position);
        this.#clockOffsetMillis = frame.wallMillis - localNowMillis;
        break;
      case 'stats':
        this.stats.push(frame);
        this.#clockOffsetMillis = frame.wallMillis - localNowMillis;
        break;
      case 'closing':
        this.#headPosition = Math.max(this.#headPosition, frame.position);
        break;
    }
    this.#changed();
  }

  /** Records a head position learned elsewhere (an HTTP page). */
  noteHead(position: number): void {
    if (position > this.#headPosition) {
      this.#headPosition = position;
      this.#changed();
    }
  }

  /** Records the stream client's state. Live again: connection problems are over, so they are cleared. */
  setConnection(state: ConnectionState): void {
    this.#connection = state;
    if (state.status === 'live' && this.#problems.some((p) => p.kind === 'connection')) {
      this.#problems = this.#problems.filter((p) => p.kind !== 'connection');
    }
    this.#changed();
  }

  /**
   * Records a problem to show (keeps the last {@link MAX_PROBLEMS}).
   *
   * @param atMillis - This browser's wall clock when it happened, epoch milliseconds.
   */
  reportProblem(message: string, kind: ProblemKind, atMillis: number): void {
    this.#problems = [...this.#problems.slice(-(MAX_PROBLEMS - 1)), { message, kind, atMillis }];
    this.#changed();
  }

  /** Forgets every problem shown (the operator dismissed them). */
  dismissProblems(): void {
    if (this.#problems.length === 0) return;
    this.#problems = [];
    this.#changed();
  }

  /** Forces listeners to run (e.g. after a UI-only change that reads the store). */
  touch(): void {
    this.#changed();
  }

  #changed(): void {
    this.#version += 1;
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#schedule(() => {
      this.#scheduled = false;
      for (const listener of this.#listeners) listener();
    });
  }
}
