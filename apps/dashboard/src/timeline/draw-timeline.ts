/**
 * Draws laid-out lanes on a 2D canvas: one rectangle per bar (colour per holder), the end of each
 * bar marked by how it ended, renewal ticks (below the bar), rejection markers with counts, restart lines with
 * shaded grace windows, and the now / as-of / cursor lines. Only the rows it is given are drawn
 * (virtualisation happens in the caller).
 */
import type { HandoverPhase } from '@lease-fence/dashboard-model';
import { drawExposureBand, PLAIN_EXPOSURE_FILLS, type ExposureFills } from './draw-exposure.js';
import type { BarLayout, LaneRowLayout, RestartCluster } from './lane-layout.js';
import { CHAR_WIDTH_PX, fitBarLabel, renewalTickBox, rowsBand, tickLabelsClearOf, truncate } from './label-layout.js';
import { axisTicks, type TimeWindow } from './time-scale.js';

/** The part of `CanvasRenderingContext2D` the renderer uses (a recording double in tests). */
export interface Canvas2DLike {
  fillStyle: string | CanvasGradient | CanvasPattern;
  strokeStyle: string | CanvasGradient | CanvasPattern;
  lineWidth: number;
  font: string;
  textBaseline: CanvasTextBaseline;
  textAlign: CanvasTextAlign;
  globalAlpha: number;
  fillRect(x: number, y: number, w: number, h: number): void;
  clearRect(x: number, y: number, w: number, h: number): void;
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
  arc(x: number, y: number, radius: number, startAngle: number, endAngle: number): void;
  fill(): void;
  stroke(): void;
  fillText(text: string, x: number, y: number): void;
  rect(x: number, y: number, w: number, h: number): void;
  clip(): void;
  setLineDash(segments: number[]): void;
  save(): void;
  restore(): void;
}

/** One visible lane and where it goes. */
export interface DrawRow {
  /** Top of the row, CSS pixels from the canvas top. */
  readonly y: number;
  readonly layout: LaneRowLayout;
  readonly highlighted: boolean;
}

/** What else to draw. */
export interface DrawOptions {
  readonly widthPx: number;
  readonly heightPx: number;
  readonly rowHeightPx: number;
  /** Width of the label column on the left; the plot starts there. */
  readonly labelWidthPx: number;
  /** Height of the time axis band at the top. */
  readonly axisHeightPx: number;
  readonly window: TimeWindow;
  readonly restarts: readonly RestartCluster[];
  readonly colorOf: (holderId: string) => string;
  /** Plot x of now (live), the as-of position's time (history), and the shared cursor. */
  readonly nowX?: number | undefined;
  readonly asOfX?: number | undefined;
  readonly cursorX?: number | undefined;
  /** Fills of the exposure bands (hatch patterns made once per canvas). @defaultValue {@link PLAIN_EXPOSURE_FILLS} */
  readonly exposureFills?: ExposureFills | undefined;
}

/** Colours of the end markers and overlays, chosen to stay apart for colour-blind readers. */
export const TIMELINE_COLORS = {
  released: '#1f2937',
  expired: '#b91c1c',
  reassigned: '#d97706',
  notCarried: '#7c3aed',
  rejection: '#dc2626',
  doubleGrant: '#7c3aed',
  /** Inside the ring of a rejection its gate reported late. */
  reportedLateFill: '#ffffff',
  restart: '#111827',
  grace: 'rgba(250, 204, 21, 0.22)',
  now: '#2563eb',
  asOf: '#0f766e',
  cursor: '#6b7280',
  grid: '#e5e7eb',
  /** Fence-first handover strips, by phase. */
  handoverPending: '#f59e0b',
  handoverAdmitted: '#2563eb',
  handoverActive: '#16a34a',
  handoverBurned: '#dc2626',
  text: '#111827',
  muted: '#6b7280',
  renewalTick: 'rgba(17, 24, 39, 0.55)',
  openEnd: 'rgba(17, 24, 39, 0.6)',
} as const;

/**
 * Opacity of a bar or rejection marker the holder and fence filters do not match (matching ones
 * are drawn opaque): still visible, so the lane keeps its context, but clearly behind.
 */
export const DIMMED_ALPHA = 0.2;

/** Opacity of a bar whose grant is not in the loaded events (an imported slice, a carried lease). */
export const UNKNOWN_GRANT_ALPHA = 0.6;

/**
 * Draws one frame.
 *
 * @returns Number of shapes drawn (bars + ticks + markers), for the debug hook and benchmarks.
 */
export function drawTimeline(ctx: Canvas2DLike, rows: readonly DrawRow[], options: DrawOptions): number {
  const { widthPx, heightPx, rowHeightPx, labelWidthPx, axisHeightPx } = options;
  const plotWidth = widthPx - labelWidthPx;
  let shapes = 0;
  ctx.clearRect(0, 0, widthPx, heightPx);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';

  // Grid (the axis labels come last, clear of the restart labels)
  const ticks = axisTicks(options.window, plotWidth).map((t) => ({ ...t, x: labelWidthPx + t.x }));
  ctx.fillStyle = TIMELINE_COLORS.grid;
  for (const tick of ticks) ctx.fillRect(tick.x, axisHeightPx, 1, heightPx - axisHeightPx);

  // Grace windows under everything
  for (const r of options.restarts) {
    const x0 = Math.max(0, r.x);
    drawGrace(ctx, labelWidthPx + x0, axisHeightPx, r.graceEndX - x0, heightPx - axisHeightPx);
  }

  const plot = { left: labelWidthPx, width: plotWidth, window: options.window };
  const exposureFills = options.exposureFills ?? PLAIN_EXPOSURE_FILLS;
  const openEndX = options.asOfX ?? options.nowX;
  // Rows are cut at the axis: a row scrolled half out of view never draws inside the axis band.
  ctx.save();
  const band = rowsBand(widthPx, heightPx, axisHeightPx);
  ctx.beginPath();
  ctx.rect(band.x, band.y, band.width, band.height);
  ctx.clip();
  for (const row of rows) {
    const top = row.y;
    if (top + rowHeightPx < axisHeightPx || top > heightPx) continue;
    if (row.highlighted) {
      ctx.fillStyle = 'rgba(37, 99, 235, 0.08)';
      ctx.fillRect(0, top, widthPx, rowHeightPx);
    }
    ctx.fillStyle = TIMELINE_COLORS.grid;
    ctx.fillRect(0, top + rowHeightPx - 1, widthPx, 1);
    ctx.textAlign = 'left';
    ctx.fillStyle = TIMELINE_COLORS.text;
    ctx.fillText(truncate(row.layout.resource, labelWidthPx - 8), 4, top + rowHeightPx / 2);
    const barTop = top + 4;
    const barHeight = rowHeightPx - 9;
    // Exposure bands under the bars (not counted in `shapes`: they add no bar, tick or marker).
    for (const bar of row.layout.bars) drawExposureBand(ctx, bar, plot, top, rowHeightPx - 1, exposureFills, openEndX);
    for (const bar of row.layout.bars) {
      drawBar(ctx, bar, labelWidthPx, plotWidth, barTop, barHeight, options.colorOf);
      shapes += 1;
    }
    for (const tick of row.layout.ticks) {
      const x = labelWidthPx + tick.x;
      if (x < labelWidthPx || x > widthPx) continue;
      drawRenewalTick(ctx, x, barTop, barHeight);
      shapes += 1;
    }
    for (const strip of row.layout.handovers) {
      drawHandoverStrip(ctx, labelWidthPx + strip.x, top, strip.width, strip.handover.phase);
      shapes += 1;
    }
    for (const marker of row.layout.rejections) {
      drawRejectionMarker(ctx, labelWidthPx + marker.x, barTop + barHeight / 2, {
        count: marker.count,
        doubleGrant: marker.doubleGrants > 0,
        matches: marker.matching > 0,
        reportedLate: marker.reportedLate === marker.count,
      });
      shapes += 1;
    }
  }
  ctx.restore();

  const labels: (RestartLabelPlacement | undefined)[] = [];
  for (const r of options.restarts) {
    const x = labelWidthPx + r.x;
    if (x < labelWidthPx || x > widthPx) continue;
    drawRestartLine(ctx, x, axisHeightPx, heightPx);
    const only = r.restarts[0];
    labels.push(
      placeRestartLabel(
        r.count > 1 || only === undefined
          ? `⟲ ${r.count} restarts`
          : `⟲ restart · fence ${only.recoveredFence} · ${only.eventsReplayed} replayed in ${Math.round(only.replayMillis)} ms · ${only.carriedLeases.length} carried`,
        x,
        labelWidthPx,
        widthPx,
      ),
    );
    shapes += 1;
  }
  // The labels go in the axis band (never over the top lane's bars); one that would run into the
  // next restart's label is shortened, and axis tick labels they would touch are left out.
  const restartLabels = separateLabels(labels);
  ctx.fillStyle = TIMELINE_COLORS.restart;
  ctx.textAlign = 'left';
  for (const label of restartLabels) ctx.fillText(label.text, label.left, axisHeightPx / 2);
  ctx.fillStyle = TIMELINE_COLORS.muted;
  ctx.textAlign = 'center';
  for (const tick of tickLabelsClearOf(ticks, restartLabels)) ctx.fillText(tick.label, tick.x, axisHeightPx / 2);

  for (const [x, color, dash] of [
    [options.nowX, TIMELINE_COLORS.now, []],
    [options.asOfX, TIMELINE_COLORS.asOf, [2, 2]],
    [options.cursorX, TIMELINE_COLORS.cursor, [3, 3]],
  ] as const) {
    if (x === undefined || x < 0 || x > plotWidth) continue;
    ctx.strokeStyle = color;
    ctx.lineWidth = 1;
    ctx.setLineDash([...dash]);
    line(ctx, labelWidthPx + x, axisHeightPx, labelWidthPx + x, heightPx);
    ctx.setLineDash([]);
  }
  return shapes;
}

/** Where a restart line's label goes: its text (possibly shortened), left edge and estimated width. */
export interface RestartLabelPlacement {
  readonly text: string;
  /** Left edge of the text, CSS pixels from the canvas's left. */
  readonly left: number;
  readonly widthPx: number;
}

/**
 * Places a restart line's label so that it stays inside the plot: right of the line when it fits,
 * else left of it, else shortened (with …) on the wider side. Pure.
 *
 * @param text - The full label.
 * @param lineX - The restart line, CSS pixels from the canvas's left.
 * @param plotLeft - Left edge of the plot (the label column ends there).
 * @param plotRight - Right edge of the plot (the canvas width).
 * @returns The placement, or undefined when not even one character fits.
 */
export function placeRestartLabel(
  text: string,
  lineX: number,
  plotLeft: number,
  plotRight: number,
): RestartLabelPlacement | undefined {
  const gap = 3;
  const full = text.length * CHAR_WIDTH_PX;
  const right = plotRight - (lineX + gap);
  const left = lineX - gap - plotLeft;
  if (full <= right) return { text, left: lineX + gap, widthPx: full };
  if (full <= left) return { text, left: lineX - gap - full, widthPx: full };
  const room = Math.max(right, left);
  const shown = truncate(text, room);
  if (shown === '') return undefined;
  const widthPx = shown.length * CHAR_WIDTH_PX;
  return { text: shown, left: right >= left ? lineX + gap : lineX - gap - widthPx, widthPx };
}

/**
 * Shortens (or drops) each label that would run into the next one, in x order, so restart labels
 * never overprint each other. Pure.
 */
export function separateLabels(labels: readonly (RestartLabelPlacement | undefined)[]): RestartLabelPlacement[] {
  const placed = labels.filter((l): l is RestartLabelPlacement => l !== undefined).sort((a, b) => a.left - b.left);
  const out: RestartLabelPlacement[] = [];
  for (let i = 0; i < placed.length; i += 1) {
    const label = placed[i] as RestartLabelPlacement;
    const next = placed[i + 1];
    const room = next === undefined ? Infinity : next.left - 8 - label.left;
    if (label.widthPx <= room) {
      out.push(label);
      continue;
    }
    const text = truncate(label.text, room);
    if (text !== '') out.push({ text, left: label.left, widthPx: text.length * CHAR_WIDTH_PX });
  }
  return out;
}

/**
 * Draws one generation's bar: its fill in the holder's colour, the mark of how it ended, the
 * carried-across-a-restart strip and its label; all at {@link DIMMED_ALPHA} when the filter does
 * not match it. The lanes and the legend's swatches both draw with it.
 *
 * @param left - The plot's left edge, CSS pixels (bar x is relative to it).
 * @param plotWidth - The plot's width, CSS pixels (a bar is clipped 2 px beyond it).
 */
export function drawBar(
  ctx: Canvas2DLike,
  bar: BarLayout,
  left: number,
  plotWidth: number,
  top: number,
  height: number,
  colorOf: (holderId: string) => string,
): void {
  const x0 = Math.max(-2, bar.x);
  const x1 = Math.min(plotWidth + 2, bar.x + bar.width);
  const w = Math.max(1, x1 - x0);
  const alpha = bar.matches ? 1 : DIMMED_ALPHA;
  ctx.fillStyle = colorOf(bar.generation.holderId);
  ctx.globalAlpha = alpha * (bar.generation.granted === undefined ? UNKNOWN_GRANT_ALPHA : 1);
  ctx.fillRect(left + x0, top, w, height);
  ctx.globalAlpha = alpha;
  const endX = left + bar.x + bar.width;
  if (bar.width >= 4 && endX <= left + plotWidth) {
    switch (bar.end) {
      case 'released':
        ctx.fillStyle = TIMELINE_COLORS.released;
        ctx.fillRect(endX - 2, top, 2, height);
        break;
      case 'expired':
      case 'superseded':
        ctx.fillStyle = bar.reassigned ? TIMELINE_COLORS.reassigned : TIMELINE_COLORS.expired;
        ctx.beginPath();
        ctx.moveTo(endX, top);
        ctx.lineTo(endX - Math.min(6, bar.width), top + height / 2);
        ctx.lineTo(endX, top + height);
        ctx.closePath();
        ctx.fill();
        break;
      case 'not-carried':
        ctx.fillStyle = TIMELINE_COLORS.notCarried;
        ctx.fillRect(endX - 3, top, 3, height);
        break;
      case 'open':
        ctx.strokeStyle = TIMELINE_COLORS.openEnd;
        ctx.lineWidth = 1;
        ctx.setLineDash([2, 2]);
        line(ctx, endX - 0.5, top, endX - 0.5, top + height);
        ctx.setLineDash([]);
        break;
    }
  }
  if (bar.generation.carried.length > 0 && bar.width >= 6) {
    ctx.fillStyle = TIMELINE_COLORS.restart;
    ctx.fillRect(left + x0, top + height - 2, w, 2);
  }
  const label =
    bar.label === undefined ? undefined : fitBarLabel(bar.generation.holderId, bar.generation.fence, w - 10);
  if (label !== undefined) {
    ctx.fillStyle = TIMELINE_COLORS.text;
    ctx.textAlign = 'left';
    ctx.fillText(label, left + x0 + 4, top + height / 2);
  }
  ctx.globalAlpha = 1;
}

/** The shaded grace window after a restart (leases carried across it are honoured until its end). */
export function drawGrace(ctx: Canvas2DLike, x: number, top: number, width: number, height: number): void {
  ctx.fillStyle = TIMELINE_COLORS.grace;
  ctx.fillRect(x, top, Math.max(1, width), height);
}

/** One renewal tick (a cluster of renewals within a few pixels), where `renewalTickBox` puts it. */
export function drawRenewalTick(ctx: Canvas2DLike, x: number, barTop: number, barHeight: number): void {
  ctx.fillStyle = TIMELINE_COLORS.renewalTick;
  const mark = renewalTickBox(x, barTop, barHeight);
  ctx.fillRect(mark.x, mark.y, mark.width, mark.height);
}

/** A fence-first handover's strip along the top of its lane, coloured by phase: pending → admitted → active, or burned. */
export function drawHandoverStrip(
  ctx: Canvas2DLike,
  x: number,
  laneTop: number,
  width: number,
  phase: HandoverPhase,
): void {
  ctx.fillStyle = HANDOVER_COLOR[phase];
  ctx.fillRect(x, laneTop + 1, width, 3);
}

/** A coordinator restart: a dashed line from `top` to `bottom`. */
export function drawRestartLine(ctx: Canvas2DLike, x: number, top: number, bottom: number): void {
  ctx.strokeStyle = TIMELINE_COLORS.restart;
  ctx.lineWidth = 2;
  ctx.setLineDash([6, 3]);
  line(ctx, x, top, x, bottom);
  ctx.setLineDash([]);
}

const HANDOVER_COLOR: Readonly<Record<HandoverPhase, string>> = {
  pending: TIMELINE_COLORS.handoverPending,
  admitted: TIMELINE_COLORS.handoverAdmitted,
  active: TIMELINE_COLORS.handoverActive,
  burned: TIMELINE_COLORS.handoverBurned,
};

/** How one rejection marker is drawn: see {@link drawRejectionMarker}. */
export interface RejectionMarkerStyle {
  /** Rejections it stands for; above 1 the marker is larger and shows the count. */
  readonly count: number;
  /** It includes a double grant: purple instead of red. */
  readonly doubleGrant: boolean;
  /** The filter matches at least one of them; none: drawn at {@link DIMMED_ALPHA}. @defaultValue true */
  readonly matches?: boolean;
  /**
   * Every one of them was reported late by its gate (`reportedLate` in
   * libs/dashboard-model/src/explain-rejection.ts): drawn hollow, a ring at the record's time, because
   * the write was refused earlier by the gate's own clock, a time the coordinator's axis cannot place.
   * @defaultValue false
   */
  readonly reportedLate?: boolean;
}

/**
 * A rejection marker: a red dot (purple when it includes a double grant), larger with its count
 * when it stands for several; a ring of that colour when every one was reported late; at
 * {@link DIMMED_ALPHA} when the filter matches none of them.
 */
export function drawRejectionMarker(ctx: Canvas2DLike, x: number, y: number, style: RejectionMarkerStyle): void {
  const { count, doubleGrant, matches = true, reportedLate = false } = style;
  const radius = count > 1 ? 7 : 4.5;
  const color = doubleGrant ? TIMELINE_COLORS.doubleGrant : TIMELINE_COLORS.rejection;
  ctx.globalAlpha = matches ? 1 : DIMMED_ALPHA;
  ctx.fillStyle = reportedLate ? TIMELINE_COLORS.reportedLateFill : color;
  ctx.beginPath();
  ctx.arc(x, y, radius, 0, Math.PI * 2);
  ctx.fill();
  ctx.strokeStyle = reportedLate ? color : '#ffffff';
  ctx.lineWidth = reportedLate ? 2 : 1.5;
  ctx.stroke();
  if (count > 1) {
    ctx.fillStyle = reportedLate ? color : '#ffffff';
    ctx.textAlign = 'center';
    ctx.fillText(count > 99 ? '99+' : String(count), x, y + 0.5);
  }
  ctx.globalAlpha = 1;
}

function line(ctx: Canvas2DLike, x0: number, y0: number, x1: number, y1: number): void {
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.stroke();
}
