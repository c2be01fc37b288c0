/**
 * Pure layout of the lanes for one frame: which bars, renewal ticks and markers fall in the
 * window, where, and how wide. Two rules make sure nothing hides at any zoom:
 * - a bar narrower than a pixel is drawn `minBarPx` (1 px) wide;
 * - markers closer than `clusterPx` merge into one cluster whose `count` is the number of events
 *   it stands for, so the counts on screen add up to the log.
 */
import {
  reportedLate,
  type Generation,
  type GenerationEndKind,
  type HandoverView,
  type Lane,
  type LeaseMatch,
  type RejectionView,
  type RestartView,
} from '@lease-fence/dashboard-model';
import { xOfWall, type TimeWindow } from './time-scale.js';

/** How a bar ends: still open, or one of the {@link GenerationEndKind}s. */
export type BarEnd = 'open' | GenerationEndKind;

/** One generation's bar. Pixel coordinates are relative to the plot's left edge. */
export interface BarLayout {
  readonly x: number;
  /** Never below `minBarPx`. */
  readonly width: number;
  readonly generation: Generation;
  readonly end: BarEnd;
  /** The next generation went to another holder right at this bar's end (a handover: expiry or supersession, then a grant). */
  readonly reassigned: boolean;
  /** `holder · f<fence>` when the bar is wide enough to carry it (drawn shortened by `fitBarLabel`, label-layout.ts: the holder is cut, never the fence). */
  readonly label: string | undefined;
  /** The holder and fence filters match it (always true without them); the rest are drawn dimmed. */
  readonly matches: boolean;
}

/** Renewal ticks within one pixel column bucket. */
export interface TickCluster {
  readonly x: number;
  readonly count: number;
}

/** Rejections drawn as one marker. */
export interface MarkerCluster {
  readonly x: number;
  /** Number of rejections it stands for. */
  readonly count: number;
  /** Of them, `double-grant` ones. */
  readonly doubleGrants: number;
  /** Of them, the ones their gate reported late (`reportedLate`): drawn hollow when all are. */
  readonly reportedLate: number;
  /** Of them, the ones the filter matches (all without a holder or fence filter); none: drawn dimmed. */
  readonly matching: number;
  readonly first: RejectionView;
  readonly last: RejectionView;
}

/**
 * A fence-first handover's strip: from its `FenceReserved` to the event that settled it (or, while
 * pending, to its deadline). Never narrower than `minBarPx`.
 */
export interface HandoverLayout {
  readonly x: number;
  readonly width: number;
  readonly handover: HandoverView;
}

/** Everything drawn on one lane. */
export interface LaneRowLayout {
  readonly resource: string;
  readonly bars: readonly BarLayout[];
  readonly ticks: readonly TickCluster[];
  readonly rejections: readonly MarkerCluster[];
  readonly handovers: readonly HandoverLayout[];
}

/** Restarts drawn as one marker across all lanes, with the grace window shaded. */
export interface RestartCluster {
  readonly x: number;
  /** Right edge of the latest grace window of the cluster. */
  readonly graceEndX: number;
  readonly count: number;
  readonly restarts: readonly RestartView[];
}

/** Options of {@link layoutLane} and {@link layoutRestarts}. */
export interface LayoutOptions {
  readonly window: TimeWindow;
  /** Plot width, CSS pixels. */
  readonly widthPx: number;
  /** Narrowest bar. @defaultValue 1 */
  readonly minBarPx?: number;
  /** Markers closer than this merge. @defaultValue 6 */
  readonly clusterPx?: number;
  /** Narrowest bar that gets a label. @defaultValue 72 */
  readonly labelMinPx?: number;
  /** Renewal ticks are bucketed by this many pixels. @defaultValue 3 */
  readonly tickBucketPx?: number;
  /** The compiled filter that decides {@link BarLayout.matches} and {@link MarkerCluster.matching}. @defaultValue everything matches */
  readonly match?: LeaseMatch;
}

/** Whether a generation's bar has any part in `window` (the bars laid out, and the holders the legend lists). */
export function barInWindow(g: Generation, window: TimeWindow): boolean {
  return g.endWallMillis >= window.fromWallMillis && g.startWallMillis <= window.toWallMillis;
}

/**
 * Lays out one lane in a window.
 *
 * @param lane - A lane of the view state.
 * @param options - See {@link LayoutOptions}.
 */
export function layoutLane(lane: Lane, options: LayoutOptions): LaneRowLayout {
  const { window, widthPx } = options;
  const minBarPx = options.minBarPx ?? 1;
  const labelMinPx = options.labelMinPx ?? 72;
  const tickBucketPx = options.tickBucketPx ?? 3;
  const match = options.match;
  const bars: BarLayout[] = [];
  const tickBuckets = new Map<number, number>();
  const gens = lane.generations;
  for (let i = 0; i < gens.length; i += 1) {
    const g = gens[i] as Generation;
    if (!barInWindow(g, window)) continue;
    const x0 = xOfWall(window, widthPx, g.startWallMillis);
    const x1 = xOfWall(window, widthPx, g.endWallMillis);
    const width = Math.max(minBarPx, x1 - x0);
    const next = gens[i + 1];
    const reassigned =
      next !== undefined &&
      g.end !== undefined &&
      g.end.kind !== 'released' &&
      next.holderId !== g.holderId &&
      (next.firstSeen.position === g.end.stamp.position || next.firstSeen.position === g.end.stamp.position + 1);
    bars.push({
      x: x0,
      width,
      generation: g,
      end: g.end?.kind ?? 'open',
      reassigned,
      label: width >= labelMinPx ? `${g.holderId} · f${g.fence}` : undefined,
      matches: match === undefined || match.generation(g),
    });
    const walls = g.renewalWallMillis;
    for (let k = 0; k < walls.length; k += 1) {
      const w = walls[k] as number;
      if (w < window.fromWallMillis || w > window.toWallMillis) continue;
      const bucket = Math.floor(xOfWall(window, widthPx, w) / tickBucketPx);
      tickBuckets.set(bucket, (tickBuckets.get(bucket) ?? 0) + 1);
    }
  }
  const ticks = [...tickBuckets]
    .sort((a, b) => a[0] - b[0])
    .map(([bucket, count]) => ({ x: bucket * tickBucketPx + tickBucketPx / 2, count }));
  const inWindow = lane.rejections.filter(
    (r) => r.stamp.wallMillis >= window.fromWallMillis && r.stamp.wallMillis <= window.toWallMillis,
  );
  const rejections = cluster(inWindow, (r) => xOfWall(window, widthPx, r.stamp.wallMillis), options.clusterPx ?? 6).map(
    (c) => ({
      x: c.x,
      count: c.items.length,
      doubleGrants: c.items.filter((r) => r.kind === 'double-grant').length,
      reportedLate: countWhere(c.items, reportedLate),
      matching: match?.byLease === true ? countWhere(c.items, match.rejection) : c.items.length,
      first: c.items[0] as RejectionView,
      last: c.items[c.items.length - 1] as RejectionView,
    }),
  );
  const handovers: HandoverLayout[] = [];
  for (const handover of lane.handovers) {
    const start = handover.reserved.wallMillis;
    const end = Math.max(start, handover.settled?.wallMillis ?? handover.deadlineWallMillis);
    if (end < window.fromWallMillis || start > window.toWallMillis) continue;
    const x = xOfWall(window, widthPx, start);
    handovers.push({ x, width: Math.max(minBarPx, xOfWall(window, widthPx, end) - x), handover });
  }
  return { resource: lane.resource, bars, ticks, rejections, handovers };
}

/**
 * Lays out coordinator restarts: a line across all lanes at each `CoordinatorStarted`, with the
 * grace window of carried leases shaded up to `graceEndX`. Close restarts merge with a count.
 */
export function layoutRestarts(restarts: readonly RestartView[], options: LayoutOptions): RestartCluster[] {
  const { window, widthPx } = options;
  const visible = restarts.filter(
    (r) => r.graceEndWallMillis >= window.fromWallMillis && r.stamp.wallMillis <= window.toWallMillis,
  );
  return cluster(visible, (r) => xOfWall(window, widthPx, r.stamp.wallMillis), options.clusterPx ?? 6).map((c) => ({
    x: c.x,
    graceEndX: Math.max(...c.items.map((r) => xOfWall(window, widthPx, r.graceEndWallMillis))),
    count: c.items.length,
    restarts: c.items,
  }));
}

/**
 * The rows to draw for a vertical scroll position (virtualisation): `[first, last)`, with
 * `overscan` extra rows on each side, clamped to `[0, rowCount)`.
 */
export function visibleRows(
  scrollTopPx: number,
  viewportHeightPx: number,
  rowHeightPx: number,
  rowCount: number,
  overscan = 3,
): { readonly first: number; readonly last: number } {
  if (rowCount <= 0 || rowHeightPx <= 0) return { first: 0, last: 0 };
  const first = Math.max(0, Math.floor(scrollTopPx / rowHeightPx) - overscan);
  const last = Math.min(rowCount, Math.ceil((scrollTopPx + viewportHeightPx) / rowHeightPx) + overscan);
  return { first: Math.min(first, last), last };
}

/** How many of `items` satisfy `predicate` (no array allocated: this runs per marker per frame). */
function countWhere<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  let n = 0;
  for (const item of items) if (predicate(item)) n += 1;
  return n;
}

/** Greedy clustering in x order: an item joins the cluster when within `clusterPx` of its first item. */
function cluster<T>(items: readonly T[], xOf: (item: T) => number, clusterPx: number): { x: number; items: T[] }[] {
  const placed = items.map((item) => ({ item, x: xOf(item) })).sort((a, b) => a.x - b.x);
  const clusters: { x: number; items: T[]; startX: number; sumX: number }[] = [];
  for (const { item, x } of placed) {
    const current = clusters[clusters.length - 1];
    if (current !== undefined && x - current.startX <= clusterPx) {
      current.items.push(item);
      current.sumX += x;
      current.x = current.sumX / current.items.length;
    } else {
      clusters.push({ x, items: [item], startX: x, sumX: x });
    }
  }
  return clusters.map(({ x, items }) => ({ x, items }));
}
