/**
 * Test double (not shipped): a {@link Canvas2DLike} that records every `fillRect` with the fill
 * style it used, and counts `arc` calls; every other call does nothing.
 */
import type { Canvas2DLike } from '../timeline/draw-timeline.js';

/** One recorded `fillRect`, CSS pixels, and its `fillStyle` as a string. */
export interface RecordedRect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly fill: string;
}

/** A recording canvas: `rects` in call order, `arcs` counted. */
export function recordingCanvas(): Canvas2DLike & { readonly rects: RecordedRect[]; arcs: number } {
  const noop = (): void => undefined;
  const ctx = {
    rects: [] as RecordedRect[],
    arcs: 0,
    fillStyle: '' as Canvas2DLike['fillStyle'],
    strokeStyle: '' as Canvas2DLike['strokeStyle'],
    lineWidth: 1,
    font: '',
    textBaseline: 'middle' as CanvasTextBaseline,
    textAlign: 'left' as CanvasTextAlign,
    globalAlpha: 1,
    fillRect: (x: number, y: number, w: number, h: number) =>
      void ctx.rects.push({ x, y, w, h, fill: String(ctx.fillStyle) }),
    clearRect: noop,
    beginPath: noop,
    moveTo: noop,
    lineTo: noop,
    closePath: noop,
    arc: () => void (ctx.arcs += 1),
    fill: noop,
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
