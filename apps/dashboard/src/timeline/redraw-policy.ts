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
