/**
 * The legend's swatches, drawn by the lanes' own drawing functions (`draw-timeline.ts`) with the
 * same colours and alphas, so the legend cannot drift from the lanes: a change to how a bar end,
 * a tick or a marker looks changes its swatch with it.
 */
import type { ExposureView, Generation, HandoverPhase } from '@lease-fence/dashboard-model';
import { drawExposureBand, PLAIN_EXPOSURE_FILLS, type ExposureFills } from './draw-exposure.js';
import {
  drawBar,
  drawGrace,
  drawHandoverStrip,
  drawRejectionMarker,
  drawRenewalTick,
  drawRestartLine,
  type Canvas2DLike,
} from './draw-timeline.js';
import type { BarEnd, BarLayout } from './lane-layout.js';

/** One entry of the legend, as drawn. */
export type LegendSwatch =
  | { readonly kind: 'holder'; readonly holderId: string }
  | { readonly kind: 'end'; readonly end: Exclude<BarEnd, 'open'> | 'open'; readonly reassigned?: boolean }
  | { readonly kind: 'carried' }
  | { readonly kind: 'unknown-grant' }
  | { readonly kind: 'renewals' }
  | { readonly kind: 'restart' }
  | { readonly kind: 'grace' }
  | { readonly kind: 'handover'; readonly phase: HandoverPhase }
  | { readonly kind: 'exposure'; readonly status: ExposureView['status'] }
  | {
      readonly kind: 'rejection';
      readonly count: number;
      readonly doubleGrant: boolean;
      readonly reportedLate?: boolean;
    }
  | { readonly kind: 'dimmed' };

/** Size of a swatch, CSS pixels. */
export const SWATCH_WIDTH_PX = 44;
/** Height of a swatch: one lane's bar area. */
export const SWATCH_HEIGHT_PX = 18;

/** The neutral holder colour of the swatches that show a shape rather than a holder. */
const SAMPLE_COLOR = '#94a3b8';

/**
 * Draws one swatch on a `SWATCH_WIDTH_PX` × `SWATCH_HEIGHT_PX` canvas (CSS pixels).
 *
 * @param colorOf - The lanes' holder colours (for `holder` swatches).
 * @param exposureFills - The hatch patterns of the exposure band, made for this canvas with
 *   `createExposureFills` (`draw-exposure.ts`); the plain colours where no pattern can be made.
 */
export function drawLegendSwatch(
  ctx: Canvas2DLike,
  swatch: LegendSwatch,
  colorOf: (holderId: string) => string,
  exposureFills: ExposureFills = PLAIN_EXPOSURE_FILLS,
): void {
  const w = SWATCH_WIDTH_PX;
  const h = SWATCH_HEIGHT_PX;
  const barTop = 3;
  const barHeight = h - 6;
  ctx.clearRect(0, 0, w, h);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  const sample = (holderId: string): string => (holderId === '' ? SAMPLE_COLOR : colorOf(holderId));
  switch (swatch.kind) {
    case 'holder':
      // Wider than the swatch: its end is outside, as for a bar running past the window.
      drawBar(ctx, swatchBar({ holderId: swatch.holderId, width: w + 10 }), 0, w, barTop, barHeight, sample);
      break;
    case 'end':
      drawBar(
        ctx,
        swatchBar({ end: swatch.end, reassigned: swatch.reassigned === true, width: w - 4 }),
        0,
        w,
        barTop,
        barHeight,
        sample,
      );
      break;
    case 'carried':
      drawBar(ctx, swatchBar({ carried: true, width: w + 10 }), 0, w, barTop, barHeight, sample);
      break;
    case 'unknown-grant':
      drawBar(ctx, swatchBar({ granted: false, width: w + 10 }), 0, w, barTop, barHeight, sample);
      break;
    case 'dimmed':
      drawBar(ctx, swatchBar({ matches: false, width: w + 10 }), 0, w, barTop, barHeight, sample);
      break;
    case 'renewals':
      drawBar(ctx, swatchBar({ width: w + 10 }), 0, w, barTop, barHeight, sample);
      for (const x of [10, 22, 34]) drawRenewalTick(ctx, x, barTop, barHeight);
      break;
    case 'restart':
      drawRestartLine(ctx, w / 2, 0, h);
      break;
    case 'grace':
      drawGrace(ctx, 0, 0, w, h);
      drawRestartLine(ctx, 1, 0, h);
      break;
    case 'handover':
      drawHandoverStrip(ctx, 2, 4, w - 4, swatch.phase);
      break;
    case 'rejection':
      drawRejectionMarker(ctx, w / 2, h / 2, swatch);
      break;
    case 'exposure': {
      // The band over the lane's height from the grant, as the lanes draw it, then the new holder's bar over it.
      const bar = swatchBar({ width: w + 10, exposure: swatch.status });
      const band = { ...bar, x: 4 };
      const plot = { left: 0, width: w, window: { fromWallMillis: 0, toWallMillis: 1 } };
      drawExposureBand(ctx, band, plot, 0, h, exposureFills, w - 12);
      drawBar(ctx, band, 0, w, barTop + 3, barHeight - 6, sample);
      break;
    }
  }
}

/** A bar for a swatch: only the fields `drawBar` reads differ from a plain granted, open generation. */
function swatchBar(options: {
  readonly holderId?: string;
  readonly width: number;
  readonly end?: BarEnd;
  readonly reassigned?: boolean;
  readonly carried?: boolean;
  readonly granted?: boolean;
  readonly matches?: boolean;
  readonly exposure?: ExposureView['status'];
}): BarLayout {
  const stamp = { position: 1, wallMillis: 0, bootId: 'legend', atMillis: 0 };
  const generation: Generation = {
    resource: 'legend',
    holderId: options.holderId ?? '',
    fence: 1,
    requestId: undefined,
    ttlMillis: undefined,
    granted: options.granted === false ? undefined : stamp,
    firstSeen: stamp,
    expiry: undefined,
    renewalPositions: [],
    renewalWallMillis: [],
    carried: options.carried === true ? [{ bootId: 'legend', position: 1 }] : [],
    end: undefined,
    startWallMillis: 0,
    endWallMillis: 0,
    exposure:
      options.exposure === undefined
        ? undefined
        : {
            status: options.exposure,
            fenceFirst: false,
            evidence: undefined,
            evidenceKind: undefined,
            gateId: undefined,
            durationMillis: undefined,
            endWallMillis: undefined,
          },
  };
  return {
    x: 0,
    width: options.width,
    generation,
    end: options.end ?? 'open',
    reassigned: options.reassigned ?? false,
    label: undefined,
    matches: options.matches ?? true,
  };
}
