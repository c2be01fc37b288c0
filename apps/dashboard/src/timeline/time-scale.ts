/**
 * The timeline's x axis: coordinator wall time (epoch milliseconds) ⇄ pixels, zoom, pan and
 * axis ticks. Pure.
 */

/** A wall-time window `[fromWallMillis, toWallMillis)`, coordinator wall-clock epoch milliseconds. */
export interface TimeWindow {
  readonly fromWallMillis: number;
  readonly toWallMillis: number;
}

/** Narrowest window: 10 ms. */
export const MIN_SPAN_MILLIS = 10;
/** Widest window: 30 days. */
export const MAX_SPAN_MILLIS = 30 * 24 * 3_600_000;

/** Pixel x (from the left of the plot) of a wall time. */
export function xOfWall(window: TimeWindow, widthPx: number, wallMillis: number): number {
  return ((wallMillis - window.fromWallMillis) / (window.toWallMillis - window.fromWallMillis)) * widthPx;
}

/** Wall time at pixel x (from the left of the plot). */
export function wallOfX(window: TimeWindow, widthPx: number, x: number): number {
  return window.fromWallMillis + (x / widthPx) * (window.toWallMillis - window.fromWallMillis);
}

/**
 * Zooms by `factor` (< 1 zooms in, > 1 out) keeping `anchorWallMillis` at the same pixel. The span
 * stays within [{@link MIN_SPAN_MILLIS}, {@link MAX_SPAN_MILLIS}].
 *
 * @throws RangeError if `factor` is not a positive finite number.
 */
export function zoomWindow(window: TimeWindow, factor: number, anchorWallMillis: number): TimeWindow {
  if (!Number.isFinite(factor) || factor <= 0)
    throw new RangeError(`zoomWindow: factor must be a positive number, got ${String(factor)}`);
  const span = window.toWallMillis - window.fromWallMillis;
  const next = Math.min(MAX_SPAN_MILLIS, Math.max(MIN_SPAN_MILLIS, span * factor));
  const ratio = span === 0 ? 0.5 : (anchorWallMillis - window.fromWallMillis) / span;
  const from = anchorWallMillis - ratio * next;
  return { fromWallMillis: from, toWallMillis: from + next };
}

/** Moves the window by `deltaMillis` (positive: later). */
export function panWindow(window: TimeWindow, deltaMillis: number): TimeWindow {
  return { fromWallMillis: window.fromWallMillis + deltaMillis, toWallMillis: window.toWallMillis + deltaMillis };
}

const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/**
 * Axis ticks at a "nice" step with at least `minSpacingPx` between them; labels are UTC
 * (`HH:MM`, `HH:MM:SS` or `HH:MM:SS.mmm` depending on the step).
 */
export function axisTicks(
  window: TimeWindow,
  widthPx: number,
  minSpacingPx = 90,
): { readonly wallMillis: number; readonly x: number; readonly label: string }[] {
  const span = window.toWallMillis - window.fromWallMillis;
  if (!(span > 0) || !(widthPx > 0)) return [];
  const step = STEPS.find((s) => (s / span) * widthPx >= minSpacingPx) ?? (STEPS[STEPS.length - 1] as number);
  const ticks: { wallMillis: number; x: number; label: string }[] = [];
  for (let t = Math.ceil(window.fromWallMillis / step) * step; t < window.toWallMillis; t += step) {
    const iso = new Date(t).toISOString();
    const label = step < 1_000 ? iso.slice(11, 23) : step < 60_000 ? iso.slice(11, 19) : iso.slice(11, 16);
    ticks.push({ wallMillis: t, x: xOfWall(window, widthPx, t), label });
  }
  return ticks;
}
