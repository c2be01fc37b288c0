import { describe, expect, it } from 'vitest';
import { synthesizeEvents } from '../dev/synthetic.js';
import { foldEvents } from '../model/fold-events.js';
import { drawTimeline, type Canvas2DLike } from './draw-timeline.js';
import { layoutLane, layoutRestarts } from './lane-layout.js';

/** A recording canvas double: keeps fillRect and arc calls. */
function recordingCanvas(): Canvas2DLike & { rects: [number, number, number, number][]; arcs: number } {
  const calls = { rects: [] as [number, number, number, number][], arcs: 0 };
  const noop = (): void => undefined;
  return Object.assign(calls, {
    fillStyle: '', strokeStyle: '', lineWidth: 1, font: '', textBaseline: 'middle' as CanvasTextBaseline, textAlign: 'left' as CanvasTextAlign, globalAlpha: 1,
    fillRect: (x: number, y: number, w: number, h: number) => void calls.rects.push([x, y, w, h]),
    clearRect: noop, beginPath: noop, moveTo: noop, lineTo: noop, closePath: noop, fill: noop, stroke: noop, fillText: noop, setLineDash: noop, save: noop, restore: noop,
    arc: () => void (calls.arcs += 1),
  });
}

describe('drawTimeline', () => {
  it('draws every bar, tick and marker of the rows it is given, each at least 1 px wide', () => {
    // Arrange: the whole log in 300 px, so most bars are sub-pixel
    const state = foldEvents(synthesizeEvents({ seed: 5, resources: 6, generations: 600, rejections: 90, restarts: 1 }));
    const lanes = [...state.lanes.values()];
    const walls = lanes.flatMap((l) => l.generations.map((g) => g.endWallMillis));
    const window = { fromWallMillis: Math.min(...lanes.flatMap((l) => l.generations.map((g) => g.startWallMillis))), toWallMillis: Math.max(...walls) };
    const rows = lanes.map((lane, i) => ({ y: 24 + i * 22, layout: layoutLane(lane, { window, widthPx: 300 }), highlighted: false }));
    const ctx = recordingCanvas();

    // Act
    const shapes = drawTimeline(ctx, rows, { widthPx: 460, heightPx: 200, rowHeightPx: 22, labelWidthPx: 160, axisHeightPx: 24, window, restarts: layoutRestarts(state.restarts, { window, widthPx: 300 }), colorOf: () => '#888' });

    // Assert
    const bars = rows.reduce((n, r) => n + r.layout.bars.length, 0);
    const ticks = rows.reduce((n, r) => n + r.layout.ticks.length, 0);
    const markers = rows.reduce((n, r) => n + r.layout.rejections.length, 0);
    expect(bars).toBe(600);
    expect(shapes).toBe(bars + ticks + markers + 1 /* restart */);
    expect(ctx.arcs).toBe(markers);
    expect(ctx.rects.every(([, , w]) => w >= 1)).toBe(true);
  });
});
