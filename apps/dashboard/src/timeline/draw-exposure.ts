/**
 * The exposure band of a handover on its lane: a hatched band from the grant to the first log
 * evidence that the gate's floor reached the new fence (see `exposure.ts` in
 * `@lease-fence/dashboard-model`), drawn under the bars over the lane's full height, so it shows
 * above and below the new holder's bar. A measured window is hatched in amber; an unknown one
 * (the generation ended with no evidence) or one still open (no evidence yet, drawn to now or to
 * the generation's end) is hatched in grey with a dashed outline. Never narrower than 1 px.
 *
 * Allocation-free per frame: it reads the bars the layout already made, and the hatch patterns
 * are made once per canvas ({@link createExposureFills}).
 */
import type { BarLayout } from './lane-layout.js';
import { xOfWall, type TimeWindow } from './time-scale.js';

/**
 * The canvas calls a band needs: a part of `CanvasRenderingContext2D` (draw-timeline.ts's
 * `Canvas2DLike` has them all; named here so that file can import this one without a cycle).
 */
export type ExposureCanvas = Pick<
  CanvasRenderingContext2D,
  'fillStyle' | 'strokeStyle' | 'lineWidth' | 'fillRect' | 'beginPath' | 'moveTo' | 'lineTo' | 'stroke' | 'setLineDash'
>;

/** The fills of the two kinds of band: a hatch pattern on a real canvas, a translucent colour elsewhere. */
export interface ExposureFills {
  readonly measured: string | CanvasPattern;
  readonly unknown: string | CanvasPattern;
}

/** Solid colours: bands narrower than a hatch period, and the fills where no pattern can be made. */
export const EXPOSURE_COLORS = {
  measured: 'rgba(217, 119, 6, 0.45)',
  measuredStripe: 'rgba(217, 119, 6, 0.9)',
  unknown: 'rgba(107, 114, 128, 0.35)',
  unknownStripe: 'rgba(75, 85, 99, 0.85)',
  unknownOutline: 'rgba(75, 85, 99, 0.9)',
} as const;

/** Fallback fills (no pattern). */
export const PLAIN_EXPOSURE_FILLS: ExposureFills = {
  measured: EXPOSURE_COLORS.measured,
  unknown: EXPOSURE_COLORS.unknown,
};

/** Period of the diagonal hatch, CSS pixels. */
const HATCH_PX = 6;
/** Dash of an unknown window's end (made once: `setLineDash` copies it). */
const UNKNOWN_DASH = [3, 2];
const NO_DASH: number[] = [];

/**
 * Makes the two hatch patterns for `ctx` (call once per canvas, not per frame).
 *
 * @param ctx - The timeline's 2D context.
 * @param createCanvas - Makes the small tile canvas. @defaultValue `document.createElement('canvas')`
 * @returns The patterns, or {@link PLAIN_EXPOSURE_FILLS} when a tile cannot be made (no DOM canvas).
 */
export function createExposureFills(
  ctx: Pick<CanvasRenderingContext2D, 'createPattern'>,
  createCanvas: () => HTMLCanvasElement | undefined = () =>
    typeof document === 'undefined' ? undefined : document.createElement('canvas'),
): ExposureFills {
  const tile = (ground: string, stripe: string): CanvasPattern | undefined => {
    const canvas = createCanvas();
    const tileCtx = canvas?.getContext('2d');
    if (canvas === undefined || tileCtx === null || tileCtx === undefined) return undefined;
    canvas.width = HATCH_PX;
    canvas.height = HATCH_PX;
    tileCtx.fillStyle = ground;
    tileCtx.fillRect(0, 0, HATCH_PX, HATCH_PX);
    tileCtx.strokeStyle = stripe;
    tileCtx.lineWidth = 1.5;
    tileCtx.beginPath();
    // One diagonal plus its wrap-around corners, so the tiles join into continuous stripes.
    tileCtx.moveTo(0, HATCH_PX);
    tileCtx.lineTo(HATCH_PX, 0);
    tileCtx.moveTo(-1, 1);
    tileCtx.lineTo(1, -1);
    tileCtx.moveTo(HATCH_PX - 1, HATCH_PX + 1);
    tileCtx.lineTo(HATCH_PX + 1, HATCH_PX - 1);
    tileCtx.stroke();
    return ctx.createPattern(canvas, 'repeat') ?? undefined;
  };
  const measured = tile('rgba(254, 243, 199, 0.9)', EXPOSURE_COLORS.measuredStripe);
  const unknown = tile('rgba(243, 244, 246, 0.9)', EXPOSURE_COLORS.unknownStripe);
  return measured === undefined || unknown === undefined ? PLAIN_EXPOSURE_FILLS : { measured, unknown };
}

/**
 * Draws the exposure band of `bar`'s generation, when it has one.
 *
 * @param ctx - The canvas.
 * @param bar - A laid-out bar (its `x` is the grant).
 * @param plot - Left edge and width of the plot, and the window, CSS pixels.
 * @param top - Top of the lane row; `height` its height.
 * @param openEndX - Plot x where an open window ends (now, or the as-of time); undefined: the bar's end.
 * @returns 1 when a band was drawn, else 0.
 */
export function drawExposureBand(
  ctx: ExposureCanvas,
  bar: BarLayout,
  plot: { readonly left: number; readonly width: number; readonly window: TimeWindow },
  top: number,
  height: number,
  fills: ExposureFills,
  openEndX: number | undefined,
): number {
  const exposure = bar.generation.exposure;
  if (exposure === undefined || bar.generation.granted === undefined) return 0;
  const barEnd = bar.x + bar.width;
  const endX =
    exposure.endWallMillis !== undefined
      ? xOfWall(plot.window, plot.width, exposure.endWallMillis)
      : Math.min(barEnd, openEndX ?? barEnd);
  const x0 = Math.max(-2, bar.x);
  const x1 = Math.min(plot.width + 2, endX);
  if (x1 < -2 || x0 > plot.width + 2) return 0;
  const width = Math.max(1, x1 - x0);
  const measured = exposure.status === 'closed';
  ctx.fillStyle =
    width < HATCH_PX
      ? measured
        ? EXPOSURE_COLORS.measuredStripe
        : EXPOSURE_COLORS.unknownStripe
      : measured
        ? fills.measured
        : fills.unknown;
  ctx.fillRect(plot.left + x0, top, width, height);
  if (!measured && width >= HATCH_PX) {
    ctx.strokeStyle = EXPOSURE_COLORS.unknownOutline;
    ctx.lineWidth = 1;
    ctx.setLineDash(UNKNOWN_DASH);
    ctx.beginPath();
    ctx.moveTo(plot.left + x0 + width - 0.5, top);
    ctx.lineTo(plot.left + x0 + width - 0.5, top + height);
    ctx.stroke();
    ctx.setLineDash(NO_DASH);
  }
  return 1;
}
