/**
 * When the lanes canvas needs a new frame. Live, the window follows now at about 11 px/s (a
 * 2-minute window on 1 400 px), so redrawing every animation frame mostly repaints the same
 * pixels: the canvas is redrawn when the window moved by a whole pixel, when anything but the
 * data changed (size, scroll, props), or when new events arrived and the last frame is at least
 * `dataRedrawMillis` old. Pure: the caller passes its clock reading.
 */
import type { TimeWindow } from './time-scale.js';

/** What a frame would show, reduced to what decides whether to draw it. */
export interface FrameRequest {
  /** The window to draw, coordinator wall-clock epoch milliseconds. */
  readonly window: TimeWindow;
  /** Plot width, CSS pixels (positive). */
  readonly plotWidthPx: number;
  /** Everything else the frame depends on except the data (size, scroll, props), as one key. */
  readonly layoutKey: string;
  /** Log position of the view state to draw. */
  readonly position: number;
  /** The caller's clock now (e.g. `performance.now()`), milliseconds; only differences are used. */
  readonly atMillis: number;
}

/** A frame that was drawn: what {@link decideRedraw} compares against. */
export interface DrawnFrame {
  /** The window's left edge in whole pixels from the wall-clock epoch at the frame's scale. */
  readonly fromPx: number;
  readonly spanMillis: number;
  readonly plotWidthPx: number;
  readonly layoutKey: string;
  readonly position: number;
  readonly atMillis: number;
}

/** Default {@link decideRedraw} `dataRedrawMillis`: new events are drawn at least every 66 ms (about 15 times a second). */
export const DATA_REDRAW_MILLIS = 66;

/**
 * The window moved to the pixel grid of its scale: the left edge rounded to a whole pixel, the span
 * unchanged. Frames drawn with snapped windows differ only when the content moved by a whole pixel.
 *
 * @param window - The window, wall-clock epoch milliseconds.
 * @param plotWidthPx - Plot width, CSS pixels.
 * @returns The snapped window and its left edge in pixels (`fromPx`).
 * @throws RangeError if `plotWidthPx` is not a positive finite number or the window is empty.
 */
export function snapWindow(
  window: TimeWindow,
  plotWidthPx: number,
): { readonly window: TimeWindow; readonly fromPx: number } {
  const spanMillis = window.toWallMillis - window.fromWallMillis;
  if (!Number.isFinite(plotWidthPx) || plotWidthPx <= 0)
    throw new RangeError(`snapWindow: plotWidthPx must be a positive number of CSS pixels, got ${String(plotWidthPx)}`);
  if (!(spanMillis > 0))
    throw new RangeError(`snapWindow: window must span a positive number of milliseconds, got ${String(spanMillis)}`);
  const millisPerPx = spanMillis / plotWidthPx;
  const fromPx = Math.round(window.fromWallMillis / millisPerPx);
  const fromWallMillis = fromPx * millisPerPx;
  return { window: { fromWallMillis, toWallMillis: fromWallMillis + spanMillis }, fromPx };
}

/**
 * Whether `next` needs drawing, given the last frame drawn.
 *
 * @param previous - The last frame drawn; undefined before the first.
 * @param next - The frame that could be drawn now.
 * @param dataRedrawMillis - Least time between two frames that differ only by new events. @defaultValue {@link DATA_REDRAW_MILLIS}
 * @returns `draw`, and the frame to remember when drawn.
 */
export function decideRedraw(
  previous: DrawnFrame | undefined,
  next: FrameRequest,
  dataRedrawMillis = DATA_REDRAW_MILLIS,
): { readonly draw: boolean; readonly frame: DrawnFrame } {
  const { fromPx } = snapWindow(next.window, next.plotWidthPx);
  const frame: DrawnFrame = {
    fromPx,
    spanMillis: next.window.toWallMillis - next.window.fromWallMillis,
    plotWidthPx: next.plotWidthPx,
    layoutKey: next.layoutKey,
    position: next.position,
    atMillis: next.atMillis,
  };
  if (previous === undefined) return { draw: true, frame };
  const moved =
    previous.fromPx !== frame.fromPx ||
    previous.spanMillis !== frame.spanMillis ||
    previous.plotWidthPx !== frame.plotWidthPx ||
    previous.layoutKey !== frame.layoutKey;
  if (moved) return { draw: true, frame };
  const newData = previous.position !== frame.position;
  return { draw: newData && next.atMillis - previous.atMillis >= dataRedrawMillis, frame };
}

/**
 * What a render of the timeline hands the canvas besides the log's data: the inputs a committed
 * render may change that {@link FrameRequest}'s window, layout and position do not cover.
 * Compared by identity (`match`, `colorOf`) or value.
 */
export interface DrawInputs {
  /** The view follows now and the canvas loop runs every animation frame. */
  readonly animate: boolean;
  /** The view state (live, the fold changes in place: a new one is another log or position). */
  readonly state: unknown;
  /** How many lanes are shown (a lane appearing shifts the rows). */
  readonly laneCount: number;
  /** The compiled filter (which bars are dimmed). */
  readonly match: unknown;
  /** The colour of each holder. */
  readonly colorOf: unknown;
  readonly selectedResource: string | undefined;
  readonly cursorWallMillis: number | undefined;
  readonly asOfWallMillis: number | undefined;
}

/**
 * Whether a committed render must be drawn at once. Following now, the dashboard renders with
 * every loaded batch (about 7 times a second) while its data reaches the canvas through
 * {@link decideRedraw}'s position and `dataRedrawMillis`: such a commit alone is not drawn, so
 * the canvas is not redrawn in the same frame as the page's render, layout and paint. Any other
 * commit is drawn at once: one that changes a {@link DrawInputs} field, and every commit while
 * not animating (nothing else would draw it later).
 *
 * @param previous - The inputs of the last commit; undefined before the first.
 * @param next - The inputs of this commit.
 */
export function commitNeedsRedraw(previous: DrawInputs | undefined, next: DrawInputs): boolean {
  if (previous === undefined || !previous.animate || !next.animate) return true;
  return (
    previous.state !== next.state ||
    previous.laneCount !== next.laneCount ||
    previous.match !== next.match ||
    previous.colorOf !== next.colorOf ||
    previous.selectedResource !== next.selectedResource ||
    previous.cursorWallMillis !== next.cursorWallMillis ||
    previous.asOfWallMillis !== next.asOfWallMillis
  );
}
