/**
 * Test double (not shipped): a {@link Canvas2DLike} that records every `fillRect` with the fill
 * style and alpha it used, each path `fill` likewise, and counts `arc` calls (with the alpha of
 * each). It also keeps what lands on the canvas where (`painted`): each `fillRect` and `fillText`
 * cut to the clip in force, honouring `rect` + `clip` and `save` / `restore` the way a canvas does
 * for the rectangular clips the renderers use. Every other call does nothing.
 */
import { CHAR_WIDTH_PX, type Box } from '../timeline/label-layout.js';
import type { Canvas2DLike } from '../timeline/draw-timeline.js';

/** One recorded `fillRect`, CSS pixels, and its `fillStyle` as a string. */
export interface RecordedRect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly fill: string;
  /** `globalAlpha` when it was drawn. */
  readonly alpha: number;
}

/** One recorded path `fill()`: its `fillStyle` and `globalAlpha`. */
export interface RecordedFill {
  readonly fill: string;
  readonly alpha: number;
}

/**
 * One `fillRect` or `fillText` as it lands on the canvas: cut to the clip in force (calls wholly
 * outside it are not kept), with its style. A text's box is {@link CHAR_WIDTH_PX} per character
 * wide and 11 px tall, centred on its `y`, aligned by `textAlign`.
 */
export interface Painted {
  readonly kind: 'rect' | 'text';
  readonly fillStyle: string;
  readonly box: Box;
  /** The text drawn; '' for a rect. */
  readonly text: string;
}

/** The text box's height, CSS pixels (about one line of the renderers' 11 px font). */
const TEXT_HEIGHT_PX = 11;

/**
 * A recording canvas: `rects` and `pathFills` in call order (as called, unclipped), `arcs`
 * counted, and `painted`: what is visible after clipping.
 */
export function recordingCanvas(): Canvas2DLike & {
  readonly rects: RecordedRect[];
  readonly pathFills: RecordedFill[];
  arcs: number;
  readonly arcAlphas: number[];
  readonly painted: Painted[];
} {
  const everywhere: Box = { x: -1e9, y: -1e9, width: 2e9, height: 2e9 };
  let clip = everywhere;
  let pendingRect: Box | undefined;
  const saved: Box[] = [];
  const cut = (b: Box): Box | undefined => {
    const x0 = Math.max(b.x, clip.x);
    const y0 = Math.max(b.y, clip.y);
    const x1 = Math.min(b.x + b.width, clip.x + clip.width);
    const y1 = Math.min(b.y + b.height, clip.y + clip.height);
    return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : undefined;
  };
  const noop = (): void => undefined;
  const ctx = {
    rects: [] as RecordedRect[],
    pathFills: [] as RecordedFill[],
    arcs: 0,
    arcAlphas: [] as number[],
    painted: [] as Painted[],
    fillStyle: '' as Canvas2DLike['fillStyle'],
    strokeStyle: '' as Canvas2DLike['strokeStyle'],
    lineWidth: 1,
    font: '',
    textBaseline: 'middle' as CanvasTextBaseline,
    textAlign: 'left' as CanvasTextAlign,
    globalAlpha: 1,
    fillRect: (x: number, y: number, w: number, h: number) => {
      ctx.rects.push({ x, y, w, h, fill: String(ctx.fillStyle), alpha: ctx.globalAlpha });
      const box = cut({ x, y, width: w, height: h });
      if (box !== undefined) ctx.painted.push({ kind: 'rect', fillStyle: String(ctx.fillStyle), box, text: '' });
    },
    fillText: (text: string, x: number, y: number) => {
      const width = text.length * CHAR_WIDTH_PX;
      const left = ctx.textAlign === 'center' ? x - width / 2 : ctx.textAlign === 'right' ? x - width : x;
      const box = cut({ x: left, y: y - TEXT_HEIGHT_PX / 2, width, height: TEXT_HEIGHT_PX });
      if (box !== undefined) ctx.painted.push({ kind: 'text', fillStyle: String(ctx.fillStyle), box, text });
    },
    rect: (x: number, y: number, w: number, h: number) => {
      pendingRect = { x, y, width: w, height: h };
    },
    clip: () => {
      if (pendingRect !== undefined) clip = cut(pendingRect) ?? { x: 0, y: 0, width: 0, height: 0 };
    },
    save: () => void saved.push(clip),
    restore: () => {
      clip = saved.pop() ?? everywhere;
    },
    beginPath: () => {
      pendingRect = undefined;
    },
    clearRect: noop,
    moveTo: noop,
    lineTo: noop,
    closePath: noop,
    arc: () => {
      ctx.arcs += 1;
      ctx.arcAlphas.push(ctx.globalAlpha);
    },
    fill: () => void ctx.pathFills.push({ fill: String(ctx.fillStyle), alpha: ctx.globalAlpha }),
    stroke: noop,
    setLineDash: noop,
  };
  return ctx;
}
