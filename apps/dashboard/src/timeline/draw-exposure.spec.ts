import { describe, expect, it } from 'vitest';
import { foldEvents } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { EXPOSURE_COLORS, PLAIN_EXPOSURE_FILLS } from './draw-exposure.js';
import { recordingCanvas } from '../testing/recording-canvas.js';
import { drawTimeline } from './draw-timeline.js';
import { layoutLane } from './lane-layout.js';

/** `slot`: agent-a (fence 1), then agent-b (fence 2) admitted by the gate 400 ms after its grant, then agent-c (3) with no evidence. */
function state() {
  const b = new LogBuilder({ ttlMillis: 60_000 });
  b.started();
  b.granted('slot', 'agent-a', 1);
  b.advance(10_000).released('slot', 'agent-a', 1);
  b.granted('slot', 'agent-b', 2);
  b.advance(400).admitted('slot', 'agent-b', 2);
  b.advance(10_000).released('slot', 'agent-b', 2);
  b.granted('slot', 'agent-c', 3);
  b.advance(10_000).released('slot', 'agent-c', 3);
  return foldEvents(b.events);
}

function draw(widthPx: number) {
  const s = state();
  const lane = s.lanes.get('slot')!;
  const window = { fromWallMillis: lane.generations[0]!.startWallMillis, toWallMillis: s.lastWallMillis! };
  const layout = layoutLane(lane, { window, widthPx });
  const ctx = recordingCanvas();
  drawTimeline(ctx, [{ y: 24, layout, highlighted: false }], {
    widthPx: widthPx + 100,
    heightPx: 60,
    rowHeightPx: 22,
    labelWidthPx: 100,
    axisHeightPx: 24,
    window,
    restarts: [],
    colorOf: () => '#888888',
  });
  return { ctx, layout };
}

describe('exposure bands', () => {
  it('draws a measured band from the grant to the evidence and an unknown one to the bar end, under the bars', () => {
    // Act: 30.4 s across 3 040 px, 10 px per 100 ms
    const { ctx, layout } = draw(3_040);

    // Assert
    const bands = ctx.rects.filter(
      (r) => r.fill === PLAIN_EXPOSURE_FILLS.measured || r.fill === PLAIN_EXPOSURE_FILLS.unknown,
    );
    expect(bands.map((b) => b.fill)).toEqual([PLAIN_EXPOSURE_FILLS.measured, PLAIN_EXPOSURE_FILLS.unknown]);
    const [measured, unknown] = bands;
    const second = layout.bars[1]!;
    const third = layout.bars[2]!;
    expect(measured!.x).toBeCloseTo(100 + second.x);
    expect(measured!.w).toBeCloseTo(40);
    expect(unknown!.x).toBeCloseTo(100 + third.x);
    expect(unknown!.w).toBeCloseTo(third.width);
    // Under the bars: each band is drawn before its bar.
    const barIndex = ctx.rects.findIndex((r) => r.fill === '#888888' && Math.abs(r.x - (100 + second.x)) < 0.01);
    expect(ctx.rects.indexOf(measured!)).toBeLessThan(barIndex);
  });

  it('keeps a sub-pixel band at least 1 px wide, in a solid colour', () => {
    // Act: 30.4 s across 30 px, so the 400 ms window is 0.4 px
    const { ctx } = draw(30);

    // Assert
    const band = ctx.rects.find((r) => r.fill === EXPOSURE_COLORS.measuredStripe);
    expect(band?.w).toBeGreaterThanOrEqual(1);
  });
});
