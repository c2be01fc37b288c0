/**
 * Rates read from the log: grants, renewals, releases, expiries, rejections and restarts per
 * second over a wall-time window, as of a position; and the distribution of hold durations.
 * Denials are not in the log (they change no state): they come from the stream's `stats` frames.
 *
 * @see docs/design.md § "The event-sourced coordinator" (denials are counted, not logged)
 */
import { isRestart } from './coordinator-start.js';
import type { EventIndex } from './event-index.js';
import type { ViewState } from './view-state.js';

/** One bin of {@link logRates}: events per second of each kind, over `[wallMillis, wallMillis + widthMillis)`. */
export interface RateBin {
  /** Bin start, coordinator wall-clock epoch milliseconds. */
  readonly wallMillis: number;
  readonly grants: number;
  readonly renewals: number;
  readonly releases: number;
  readonly expiries: number;
  readonly rejections: number;
  readonly restarts: number;
}

/** Options of {@link logRates}. */
export interface LogRatesOptions {
  /** Count only events at or before this position (the view's as-of position). */
  readonly asOfPosition: number;
  /** Window start, coordinator wall epoch milliseconds. */
  readonly fromWallMillis: number;
  /** Window end (exclusive), coordinator wall epoch milliseconds. */
  readonly toWallMillis: number;
  /** Most bins to return; bins are whole seconds wide. Integer ≥ 1. @defaultValue 120 */
  readonly maxBins?: number;
}

/**
 * The width of {@link logRates}' bins for a window of `spanMillis`: the fewest whole seconds that
 * keep the window within `maxBins` bins (at least one second).
 *
 * @param spanMillis - Window length, milliseconds (positive).
 * @param maxBins - Most bins; integer ≥ 1.
 * @returns Bin width, milliseconds (a multiple of 1 000).
 */
export function rateBinWidthMillis(spanMillis: number, maxBins: number): number {
  return Math.max(1, Math.ceil(spanMillis / maxBins / 1_000)) * 1_000;
}

/**
 * Per-second rates of logged events in a wall-time window, as of a position. Bins are a whole
 * number of seconds wide, aligned to multiples of their width; rates are count ÷ width in seconds.
 *
 * @returns The bins in time order, plus their width in milliseconds.
 * @throws RangeError if the window is empty or `maxBins` is not a positive integer.
 */
export function logRates(
  index: EventIndex,
  options: LogRatesOptions,
): { readonly bins: RateBin[]; readonly widthMillis: number } {
  const { asOfPosition, fromWallMillis, toWallMillis } = options;
  const maxBins = options.maxBins ?? 120;
  if (!(toWallMillis > fromWallMillis))
    throw new RangeError(
      `logRates: toWallMillis must be above fromWallMillis (milliseconds), got ${fromWallMillis}..${toWallMillis}`,
    );
  if (!Number.isSafeInteger(maxBins) || maxBins < 1)
    throw new RangeError(`logRates: maxBins must be a positive integer, got ${String(maxBins)}`);
  const widthMillis = rateBinWidthMillis(toWallMillis - fromWallMillis, maxBins);
  const first = Math.floor(fromWallMillis / widthMillis) * widthMillis;
  const count = Math.ceil((toWallMillis - first) / widthMillis);
  const counts = Array.from({ length: count }, () => [0, 0, 0, 0, 0, 0]);
  const events = index.events();
  for (let i = index.indexAtWall(first); i < events.length; i += 1) {
    const recorded = events[i];
    if (
      recorded === undefined ||
      recorded.position > asOfPosition ||
      index.wallMaxAt(i) >= first + count * widthMillis + widthMillis
    )
      break;
    const bin = Math.floor((recorded.event.data.wallMillis - first) / widthMillis);
    const row = counts[bin];
    if (row === undefined) continue;
    switch (recorded.event.type) {
      case 'LeaseGranted':
        row[0] = (row[0] ?? 0) + 1;
        break;
      case 'LeaseRenewed':
        row[1] = (row[1] ?? 0) + 1;
        break;
      case 'LeaseReleased':
        row[2] = (row[2] ?? 0) + 1;
        break;
      case 'LeaseExpired':
        row[3] = (row[3] ?? 0) + 1;
        break;
      case 'FenceRejected':
        row[4] = (row[4] ?? 0) + 1;
        break;
      case 'CoordinatorStarted':
        if (isRestart(recorded.event.data)) row[5] = (row[5] ?? 0) + 1;
        break;
      default:
        break;
    }
  }
  const perSecond = 1_000 / widthMillis;
  const bins = counts.map((row, b) => ({
    wallMillis: first + b * widthMillis,
    grants: (row[0] ?? 0) * perSecond,
    renewals: (row[1] ?? 0) * perSecond,
    releases: (row[2] ?? 0) * perSecond,
    expiries: (row[3] ?? 0) * perSecond,
    rejections: (row[4] ?? 0) * perSecond,
    restarts: (row[5] ?? 0) * perSecond,
  }));
  return { bins, widthMillis };
}

/** One bar of {@link holdDurations}. */
export interface HoldDurationBin {
  readonly label: string;
  /** Lower bound, milliseconds (inclusive). */
  readonly fromMillis: number;
  readonly count: number;
}

/** Upper bounds of the hold-duration bins, milliseconds. */
const HOLD_BOUNDS = [100, 1_000, 10_000, 60_000, 600_000, Infinity];
const HOLD_LABELS = ['< 100 ms', '0.1–1 s', '1–10 s', '10 s–1 min', '1–10 min', '≥ 10 min'];

/**
 * How long ended generations were held (bar length, wall milliseconds): counts per bin, and
 * the median and 95th percentile. Generations whose grant is not loaded are left out.
 */
export function holdDurations(state: ViewState): {
  readonly bins: HoldDurationBin[];
  readonly count: number;
  readonly p50Millis: number | undefined;
  readonly p95Millis: number | undefined;
} {
  let ended = 0;
  for (const lane of state.lanes.values()) {
    for (const g of lane.generations) if (g.end !== undefined && g.granted !== undefined) ended += 1;
  }
  // A typed array sorts numerically without a comparator call per pair (several times faster at 20 000 generations).
  const durations = new Float64Array(ended);
  let n = 0;
  for (const lane of state.lanes.values()) {
    for (const g of lane.generations) {
      if (g.end !== undefined && g.granted !== undefined) durations[n++] = g.endWallMillis - g.startWallMillis;
    }
  }
  durations.sort();
  const counts = HOLD_BOUNDS.map(() => 0);
  let bin = 0;
  for (const d of durations) {
    while (d >= (HOLD_BOUNDS[bin] ?? Infinity)) bin += 1;
    counts[bin] = (counts[bin] ?? 0) + 1;
  }
  return {
    bins: counts.map((count, i) => ({
      label: HOLD_LABELS[i] ?? '',
      fromMillis: i === 0 ? 0 : (HOLD_BOUNDS[i - 1] ?? 0),
      count,
    })),
    count: durations.length,
    p50Millis: quantileOfSorted(durations, 0.5),
    p95Millis: quantileOfSorted(durations, 0.95),
  };
}

/**
 * The nearest-rank quantile of ascending `sorted` values: the smallest value with at least `q × n`
 * of the `n` values at or below it, i.e. `sorted[ceil(q × n) − 1]` (1-based rank `ceil(q × n)`).
 * With two values the median is the smaller one; p99 of 100 values is the 99th, not the maximum.
 *
 * @param sorted - Values in ascending order.
 * @param q - The quantile, 0 to 1 (0.5: the median).
 * @returns The value, or undefined when `sorted` is empty.
 */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  // Less a hair: q × n of a whole rank can land above it in binary (0.07 × 100 = 7.000000000000001).
  const rank = Math.ceil(q * sorted.length - 1e-9);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
