/**
 * Where the timeline's text and small marks go, so that none of them is drawn over another: bar
 * labels that keep the fence and shorten the holder, renewal ticks below the bar (never through
 * its label), axis tick labels that give way to restart labels, and the rows' band below the time
 * axis. Pure: widths are estimated from the 11 px canvas font, with no `measureText` per frame.
 */

/** Estimated width of one character of the 11 px canvas font, CSS pixels. */
export const CHAR_WIDTH_PX = 6.2;

/** A horizontal extent of drawn text, CSS pixels from the canvas's left. */
export interface TextSpan {
  readonly left: number;
  readonly widthPx: number;
}

/** A rectangle on the canvas, CSS pixels. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/**
 * Shortens `text` with "…" to roughly `widthPx` (at {@link CHAR_WIDTH_PX} per character).
 *
 * @returns The text, a shortened copy ending in "…", or "" when fewer than two characters fit.
 */
export function truncate(text: string, widthPx: number): string {
  const max = Math.max(0, Math.floor(widthPx / CHAR_WIDTH_PX));
  return text.length <= max ? text : max <= 1 ? '' : `${text.slice(0, max - 1)}…`;
}

/**
 * A bar's label in `widthPx`: `holder · f<fence>` when it fits; else the holder is shortened
 * ("agent-…· f12") and the fence kept whole, because the fence is what tells two generations of one
 * holder apart; else the fence alone (`f12`); else nothing.
 *
 * @param holderId - The generation's holder.
 * @param fence - The generation's fence.
 * @param widthPx - Room for the text, CSS pixels.
 * @returns The text to draw, or undefined when not even the fence fits.
 */
export function fitBarLabel(holderId: string, fence: number, widthPx: number): string | undefined {
  const fenceText = `f${fence}`;
  const suffix = ` · ${fenceText}`;
  const max = Math.floor(widthPx / CHAR_WIDTH_PX);
  if (holderId.length + suffix.length <= max) return `${holderId}${suffix}`;
  const holderRoom = max - suffix.length;
  if (holderRoom >= 2) return `${holderId.slice(0, holderRoom - 1)}…${suffix}`;
  return fenceText.length <= max ? fenceText : undefined;
}

/**
 * The box a bar label's text occupies: from `left` for its characters, the font's height centred on
 * the bar (the text is drawn with `textBaseline = 'middle'` at the bar's middle).
 */
export function barLabelBox(text: string, left: number, barTop: number, barHeight: number): Box {
  const fontHeightPx = 11;
  return {
    x: left,
    y: barTop + barHeight / 2 - fontHeightPx / 2,
    width: text.length * CHAR_WIDTH_PX,
    height: fontHeightPx,
  };
}

/**
 * Where a renewal tick goes: a 1 px mark hanging just below the bar, in the gap above the row's
 * separator, so it never crosses the bar's label (which is centred on the bar).
 *
 * @param x - The tick's x, CSS pixels from the canvas's left.
 * @param barTop - Top of the bar.
 * @param barHeight - Height of the bar.
 */
export function renewalTickBox(x: number, barTop: number, barHeight: number): Box {
  return { x: Math.floor(x), y: barTop + barHeight + 1, width: 1, height: 3 };
}

/**
 * The axis tick labels that stay clear of the restart labels in the axis band: a tick label
 * (centred on its tick) that would touch a restart label (with a 4 px gap) is left out; the tick's
 * grid line is still drawn.
 *
 * @param ticks - Tick labels, each centred at `x` (CSS pixels from the canvas's left).
 * @param taken - The restart labels' spans.
 * @returns The ticks whose labels are drawn.
 */
export function tickLabelsClearOf<T extends { readonly x: number; readonly label: string }>(
  ticks: readonly T[],
  taken: readonly TextSpan[],
): T[] {
  const gap = 4;
  return ticks.filter((tick) => {
    const half = (tick.label.length * CHAR_WIDTH_PX) / 2;
    return taken.every((t) => tick.x + half + gap <= t.left || tick.x - half - gap >= t.left + t.widthPx);
  });
}

/**
 * The band the lanes are drawn in: below the time axis, so a row scrolled half out of view is cut
 * at the axis instead of being drawn inside it.
 */
export function rowsBand(widthPx: number, heightPx: number, axisHeightPx: number): Box {
  return { x: 0, y: axisHeightPx, width: widthPx, height: Math.max(0, heightPx - axisHeightPx) };
}

/** Whether two boxes overlap (touching edges do not). */
export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}
