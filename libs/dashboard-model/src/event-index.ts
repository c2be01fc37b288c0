/**
 * The loaded part of the log, kept in position order with the lookups the dashboard needs:
 * by position, by resource, by wall time, and the positions of rejections and restarts
 * (the `n` / `p` jumps). Append-only.
 *
 * @see docs/design.md § "The event-sourced coordinator" (one ordered log per namespace)
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { isRestart } from './coordinator-start.js';

/** Kinds of event the timeline marks and `n` / `p` jump between. */
export type MarkerKind = 'rejection' | 'restart';

/** An event worth jumping to: a `FenceRejected` or a restart's `CoordinatorStarted` (not a fresh log's first start). */
export interface MarkerRef {
  readonly position: number;
  readonly kind: MarkerKind;
}

/**
 * Loaded events in increasing position order. Positions need not be contiguous (an imported
 * investigation holds a slice of the log) but always increase.
 */
export class EventIndex {
  readonly #events: RecordedEvent[] = [];
  #wallMax = new Float64Array(1024);
  readonly #byResource = new Map<string, number[]>();
  readonly #markers: MarkerRef[] = [];
  readonly #holderIds: string[] = [];
  readonly #holders = new Set<string>();

  /** Number of loaded events. */
  get size(): number {
    return this.#events.length;
  }

  /** Position of the first loaded event; 0 when empty. */
  get firstPosition(): number {
    return this.#events[0]?.position ?? 0;
  }

  /** Position of the last loaded event; 0 when empty. */
  get lastPosition(): number {
    return this.#events[this.#events.length - 1]?.position ?? 0;
  }

  /**
   * Adds the next event.
   *
   * @param recorded - A schema-valid event whose position is above {@link EventIndex.lastPosition}.
   * @throws RangeError if the position does not increase; nothing is added.
   */
  append(recorded: RecordedEvent): void {
    const last = this.lastPosition;
    if (!Number.isSafeInteger(recorded.position) || recorded.position <= last) {
      throw new RangeError(
        `EventIndex.append: recorded.position must be an integer above ${last} (log positions only grow), got ${String(recorded.position)}`,
      );
    }
    const i = this.#events.length;
    if (i === this.#wallMax.length) {
      const grown = new Float64Array(this.#wallMax.length * 2);
      grown.set(this.#wallMax);
      this.#wallMax = grown;
    }
    const wall = recorded.event.data.wallMillis;
    this.#wallMax[i] = i === 0 ? wall : Math.max(wall, this.#wallMax[i - 1] ?? wall);
    this.#events.push(recorded);
    const { event } = recorded;
    if ('resource' in event.data) {
      let positions = this.#byResource.get(event.data.resource);
      if (positions === undefined) {
        positions = [];
        this.#byResource.set(event.data.resource, positions);
      }
      positions.push(recorded.position);
    }
    if (event.type === 'FenceRejected') this.#markers.push({ position: recorded.position, kind: 'rejection' });
    else if (event.type === 'CoordinatorStarted' && isRestart(event.data))
      this.#markers.push({ position: recorded.position, kind: 'restart' });
    switch (event.type) {
      case 'FenceRejected':
        this.#noteHolder(event.data.current.holderId);
        this.#noteHolder(event.data.rejected.holderId);
        break;
      case 'CoordinatorStarted':
        for (const carried of event.data.carriedLeases) this.#noteHolder(carried.holderId);
        break;
      case 'SnapshotTaken':
      case 'CoordinatorCheckpointed':
      case 'RejectionsMissing':
        break;
      default:
        this.#noteHolder(event.data.holderId);
    }
  }

  /**
   * Every holder the loaded events name, in order of first appearance (grants, renewals, ends,
   * admissions, rejections, carried leases). Append-only, so a prefix of the log gives a prefix
   * of this list: the order (and the colours assigned by it) agree live and in replay. Read-only.
   */
  holderIds(): readonly string[] {
    return this.#holderIds;
  }

  #noteHolder(holderId: string): void {
    if (this.#holders.has(holderId)) return;
    this.#holders.add(holderId);
    this.#holderIds.push(holderId);
  }

  /** Every loaded event in position order. Read-only: do not modify. */
  events(): readonly RecordedEvent[] {
    return this.#events;
  }

  /**
   * The index (0-based, into {@link EventIndex.events}) of the first event at or after `position`;
   * {@link EventIndex.size} when there is none.
   */
  indexOf(position: number): number {
    const events = this.#events;
    const first = events[0];
    if (first === undefined) return 0;
    const direct = position - first.position;
    if (direct >= 0 && direct < events.length && events[direct]?.position === position) return direct;
    let lo = 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((events[mid]?.position ?? Infinity) < position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The event at `position`, or undefined when it is not loaded. */
  at(position: number): RecordedEvent | undefined {
    const e = this.#events[this.indexOf(position)];
    return e?.position === position ? e : undefined;
  }

  /** Loaded events with `fromPosition <= position <= toPosition`, in order. */
  between(fromPosition: number, toPosition: number): RecordedEvent[] {
    if (toPosition < fromPosition) return [];
    return this.#events.slice(this.indexOf(fromPosition), this.indexOf(toPosition + 1));
  }

  /** Positions of the loaded events that name `resource` (grants, renewals, ends, rejections, admissions). */
  positionsOf(resource: string): readonly number[] {
    return this.#byResource.get(resource) ?? [];
  }

  /**
   * The last position whose event (and every event before it) has a coordinator wall time at or
   * before `wallMillis`: the log "as of" that wall time. Uses the running maximum of wall times,
   * so a wall clock that stepped backwards cannot make the answer go back in the log.
   *
   * @param wallMillis - Coordinator wall-clock epoch milliseconds.
   * @returns A loaded position, or 0 when no event is that early.
   */
  lastPositionAtOrBeforeWall(wallMillis: number): number {
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#wallMax[mid] ?? Infinity) <= wallMillis) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : (this.#events[lo - 1]?.position ?? 0);
  }

  /**
   * The index (into {@link EventIndex.events}) of the first event from which on every wall time
   * may be at or after `wallMillis` (the running maximum reaches it); {@link EventIndex.size} when none.
   */
  indexAtWall(wallMillis: number): number {
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#wallMax[mid] ?? Infinity) < wallMillis) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The running maximum of wall times up to index `i` (epoch milliseconds); NaN out of range. */
  wallMaxAt(i: number): number {
    return i >= 0 && i < this.#events.length ? (this.#wallMax[i] ?? Number.NaN) : Number.NaN;
  }

  /** Every rejection and restart, in log order. Read-only. */
  markers(): readonly MarkerRef[] {
    return this.#markers;
  }

  /**
   * The nearest rejection or restart strictly after (`direction` 1) or before (`direction` -1)
   * `position`.
   *
   * @returns Its position, or undefined when there is none in that direction.
   */
  nextMarker(position: number, direction: 1 | -1, kinds: ReadonlySet<MarkerKind> = ALL_MARKERS): number | undefined {
    const markers = this.#markers;
    let lo = 0;
    let hi = markers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((markers[mid]?.position ?? Infinity) <= position) lo = mid + 1;
      else hi = mid;
    }
    // lo = first marker after position
    if (direction === 1) {
      for (let i = lo; i < markers.length; i += 1) {
        const m = markers[i];
        if (m !== undefined && kinds.has(m.kind)) return m.position;
      }
    } else {
      for (let i = lo - 1; i >= 0; i -= 1) {
        const m = markers[i];
        if (m !== undefined && m.position < position && kinds.has(m.kind)) return m.position;
      }
    }
    return undefined;
  }
}

const ALL_MARKERS: ReadonlySet<MarkerKind> = new Set<MarkerKind>(['rejection', 'restart']);
