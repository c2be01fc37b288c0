/**
 * The one matching rule of the dashboard's filters, per bar, marker and row: which generations
 * (bars), rejections (markers and rows) and events (rows) a {@link LaneFilter} matches, which
 * lanes it keeps, and the counts shown next to the filters. The canvas, the tables, the counts and
 * the lane filter all call it, so they cannot disagree. Pure.
 *
 * - A **generation** matches when its holder id contains the holder text (case-insensitive) and
 *   its fence is in the fence range.
 * - A **current holder** (a row of _Current holders_) matches as its lease's bar does on its lane:
 *   its resource matches the resource pattern and its holder · fence the holder and fence filters.
 * - A **rejection** matches when its resource matches the resource pattern and either side of it
 *   does: the refused holder · fence, or the gate's floor (current) holder · fence.
 * - An **event** matches when it names a resource that matches the pattern and a holder · fence
 *   that matches (for a `FenceRejected`, either side, as for a rejection). An event that names no
 *   holder (a restart, a checkpoint, a `RejectionsMissing`) matches only an empty holder and fence
 *   filter.
 * - A **lane** is kept when its resource matches the pattern, it has a rejection if "with
 *   rejections" is set, and — only with `hideUnmatchedLanes` — it has a matching generation or
 *   rejection. Without `hideUnmatchedLanes` the holder and fence filters dim, they never remove.
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import type { HolderRow } from './current-holders.js';
import type { LaneFilter } from './lane-filter.js';
import type { Generation, Lane, RejectionView, ViewState } from './view-state.js';

/** A filter compiled once (per filter change) and applied per bar, marker, row and lane. */
export interface LeaseMatch {
  /** The holder or the fence range is set: bars and markers are matched one by one. */
  readonly byLease: boolean;
  /**
   * A holder, fence or resource filter is set: the tables show only matching rows and the counts
   * are shown. ("With rejections" alone only keeps lanes.)
   */
  readonly active: boolean;
  /** Whether a resource id matches the resource pattern (true when there is none). */
  resource(resource: string): boolean;
  /** Whether a bar matches the holder and fence filters (true when neither is set). */
  generation(generation: Generation): boolean;
  /** Whether a current holder matches: its resource, and its holder · fence as its bar would. */
  holder(row: Pick<HolderRow, 'resource' | 'holderId' | 'fence'>): boolean;
  /** Whether a rejection matches: its resource, and its refused or its floor holder · fence. */
  rejection(rejection: RejectionView): boolean;
  /** Whether a logged event matches (see the module comment for which fields count). */
  event(recorded: RecordedEvent): boolean;
  /** Whether a lane is kept. */
  lane(lane: Lane): boolean;
}

/**
 * Compiles a filter into its matchers. Blank holder and resource texts are no filter.
 *
 * @param filter - The URL's filter; every field optional.
 * @returns Matchers that allocate nothing per call.
 */
export function compileLeaseMatch(filter: LaneFilter): LeaseMatch {
  const resourcePattern = compileResourcePattern(filter.resource);
  const holder = filter.holder?.trim().toLowerCase() || undefined;
  const fenceMin = filter.fenceMin ?? -Infinity;
  const fenceMax = filter.fenceMax ?? Infinity;
  const byLease = holder !== undefined || filter.fenceMin !== undefined || filter.fenceMax !== undefined;
  const active = byLease || resourcePattern !== undefined;
  const side = (holderId: string, fence: number): boolean =>
    (holder === undefined || holderId.toLowerCase().includes(holder)) && fence >= fenceMin && fence <= fenceMax;
  const resource = (id: string): boolean => resourcePattern === undefined || resourcePattern(id);
  const generation = (g: Generation): boolean => !byLease || side(g.holderId, g.fence);
  const holderRow = (row: Pick<HolderRow, 'resource' | 'holderId' | 'fence'>): boolean =>
    resource(row.resource) && (!byLease || side(row.holderId, row.fence));
  const rejection = (r: RejectionView): boolean =>
    resource(r.resource) &&
    (!byLease || side(r.rejected.holderId, r.rejected.fence) || side(r.current.holderId, r.current.fence));
  const event = (recorded: RecordedEvent): boolean => {
    const e = recorded.event;
    switch (e.type) {
      case 'FenceRejected':
        return (
          resource(e.data.resource) &&
          (!byLease ||
            side(e.data.rejected.holderId, e.data.rejected.fence) ||
            side(e.data.current.holderId, e.data.current.fence))
        );
      case 'LeaseGranted':
      case 'LeaseRenewed':
      case 'LeaseReleased':
      case 'LeaseExpired':
      case 'FenceAdmitted':
      case 'FenceFloorReported':
      case 'FenceReserved':
      case 'FenceBurned':
        return resource(e.data.resource) && (!byLease || side(e.data.holderId, e.data.fence));
      case 'RejectionsMissing':
        return resource(e.data.resource) && !byLease;
      case 'CoordinatorStarted':
      case 'SnapshotTaken':
      case 'CoordinatorCheckpointed':
        return !active;
    }
  };
  const lane = (l: Lane): boolean => {
    if (!resource(l.resource)) return false;
    if (filter.hasRejections === true && l.rejections.length === 0) return false;
    if (filter.hideUnmatchedLanes !== true || !byLease) return true;
    return l.generations.some(generation) || l.rejections.some(rejection);
  };
  return { byLease, active, resource, generation, holder: holderRow, rejection, event, lane };
}

/** What the filter matches in a view, as the counts beside the filters say it. */
export interface MatchCounts {
  /** Generations (bars) of the kept lanes that match. */
  readonly leases: number;
  /** Rejections of the kept lanes that match (the rows of the filtered Rejections table). */
  readonly rejections: number;
  /** Kept lanes with at least one matching generation or rejection. */
  readonly lanesWithMatch: number;
}

/**
 * Counts what `match` matches among `lanes` (the kept lanes of a view state).
 *
 * @param lanes - The lanes {@link filterLanes} kept.
 * @param match - The same filter, compiled.
 */
export function countMatches(lanes: readonly Lane[], match: LeaseMatch): MatchCounts {
  let leases = 0;
  let rejections = 0;
  let lanesWithMatch = 0;
  for (const lane of lanes) {
    let here = 0;
    for (const g of lane.generations) if (match.generation(g)) here += 1;
    leases += here;
    for (const r of lane.rejections) {
      if (!match.rejection(r)) continue;
      here += 1;
      rejections += 1;
    }
    if (here > 0) lanesWithMatch += 1;
  }
  return { leases, rejections, lanesWithMatch };
}

/**
 * The rejections of a view that `match` keeps, in log order (all of them when no filter is set).
 *
 * @param state - The view state.
 */
export function matchingRejections(state: ViewState, match: LeaseMatch): readonly RejectionView[] {
  return match.active ? state.rejections.filter(match.rejection) : state.rejections;
}

/**
 * The current holders that `match` keeps, in the order of `rows` (`rows` itself when no filter is
 * set).
 *
 * @param rows - `currentHolders` of a view state; not modified.
 */
export function matchingHolderRows(rows: readonly HolderRow[], match: LeaseMatch): readonly HolderRow[] {
  return match.active ? rows.filter(match.holder) : rows;
}

/**
 * The lanes of `state` that `filter` keeps (see {@link LeaseMatch.lane}), sorted by resource id,
 * and how many there are in all.
 *
 * @returns `lanes` (kept, sorted) and `total` (every lane of the state).
 */
export function filterLanes(
  state: ViewState,
  filter: LaneFilter | LeaseMatch,
): { readonly lanes: Lane[]; readonly total: number } {
  const match = 'lane' in filter ? filter : compileLeaseMatch(filter);
  const lanes: Lane[] = [];
  for (const lane of state.lanes.values()) if (match.lane(lane)) lanes.push(lane);
  lanes.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  return { lanes, total: state.lanes.size };
}

/**
 * Positions of the loaded events that one filter matches, found incrementally: the log only
 * grows, so each call scans only the events appended since the last one. The events table and its
 * count read it as of any position by binary search. Create a new one when the filter or the loaded
 * log (a reset) changes.
 */
export class MatchingEvents {
  readonly #match: LeaseMatch;
  readonly #positions: number[] = [];
  #scanned = 0;

  /** @param match - The compiled filter. */
  constructor(match: LeaseMatch) {
    this.#match = match;
  }

  /**
   * Scans the events of `events` not yet seen (those after the ones passed before).
   *
   * @param events - Every loaded event in position order; only ever appended to between calls.
   * @returns this.
   */
  update(events: readonly RecordedEvent[]): this {
    for (let i = this.#scanned; i < events.length; i += 1) {
      const recorded = events[i] as RecordedEvent;
      if (this.#match.event(recorded)) this.#positions.push(recorded.position);
    }
    this.#scanned = Math.max(this.#scanned, events.length);
    return this;
  }

  /** How many matching events are at or before `position`. */
  countUpTo(position: number): number {
    return upperBound(this.#positions, position);
  }

  /**
   * The matching positions around `focusPosition`, in order: up to `radius` before it and up to
   * `radius + 1` from it on (as the unfiltered table lists the focus and `radius` on each side),
   * none beyond `asOfPosition`.
   */
  around(focusPosition: number, radius: number, asOfPosition: number): number[] {
    const end = upperBound(this.#positions, asOfPosition);
    const split = Math.min(end, upperBound(this.#positions, focusPosition - 1));
    return this.#positions.slice(Math.max(0, split - radius), Math.min(end, split + radius + 1));
  }
}

/** Index of the first element of sorted `values` greater than `value`. */
function upperBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A resource pattern: with `*` or `?` a wildcard pattern of the whole id, otherwise a
 * case-insensitive substring. Undefined when blank.
 */
function compileResourcePattern(pattern: string | undefined): ((resource: string) => boolean) | undefined {
  const p = pattern?.trim();
  if (p === undefined || p === '') return undefined;
  if (!/[*?]/.test(p)) {
    const needle = p.toLowerCase();
    return (resource) => resource.toLowerCase().includes(needle);
  }
  const source = p
    .split('')
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const regex = new RegExp(`^${source}$`, 'i');
  return (resource) => regex.test(resource);
}
