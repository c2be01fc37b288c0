/**
 * Test double (not shipped): a {@link Canvas2DLike} that records every `fillRect` with the fill
 * style and alpha it used, each path `fill` likewise, and counts `arc` calls (with the alpha of
 * each); every other call does nothing.
 */
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

/** A recording canvas: `rects` in call order, `arcs` counted. */
export function recordingCanvas(): Canvas2DLike & {
  readonly rects: RecordedRect[];
  readonly pathFills: RecordedFill[];
  arcs: number;
  readonly arcAlphas: number[];
} {
  const noop = (): void => undefined;
  const ctx = {
    rects: [] as RecordedRect[],
    pathFills: [] as RecordedFill[],
    arcs: 0,
    arcAlphas: [] as number[],
    fillStyle: '' as Canvas2DLike['fillStyle'],
    strokeStyle: '' as Canvas2DLike['strokeStyle'],
    lineWidth: 1,
    font: '',
    textBaseline: 'middle' as CanvasTextBaseline,
    textAlign: 'left' as CanvasTextAlign,
    globalAlpha: 1,
    fillRect: (x: number, y: number, w: number, h: number) =>
      void ctx.rects.push({ x, y, w, h, fill: String(ctx.fillStyle), alpha: ctx.globalAlpha }),
    clearRect: noop,
    beginPath: noop,
    moveTo: noop,
    lineTo: noop,
    closePath: noop,
    arc: () => {
      ctx.arcs += 1;
      ctx.arcAlphas.push(ctx.globalAlpha);
    },
    fill: () => void ctx.pathFills.push({ fill: String(ctx.fillStyle), alpha: ctx.globalAlpha }),
    stroke: noop,
    fillText: noop,
    rect: noop,
    clip: noop,
    setLineDash: noop,
    save: noop,
    restore: noop,
  };
  return ctx;
}
