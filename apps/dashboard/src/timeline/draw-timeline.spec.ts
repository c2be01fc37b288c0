import { describe, expect, it } from 'vitest';
import { compileLeaseMatch, synthesizeEvents, foldEvents } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { lateRefusalLane } from '../testing/late-refusal-lane.js';
import { recordingCanvas } from '../testing/recording-canvas.js';
import { DIMMED_ALPHA, drawTimeline, placeRestartLabel, separateLabels, TIMELINE_COLORS } from './draw-timeline.js';
import { overlaps, type Box } from './label-layout.js';
import { layoutLane, layoutRestarts } from './lane-layout.js';

describe('drawTimeline', () => {
  it('draws every bar, tick and marker of the rows it is given, each at least 1 px wide', () => {
    // Arrange: the whole log in 300 px, so most bars are sub-pixel
    const state = foldEvents(
      synthesizeEvents({ seed: 5, resources: 6, generations: 600, rejections: 90, restarts: 1 }),
    );
    const lanes = [...state.lanes.values()];
    const walls = lanes.flatMap((l) => l.generations.map((g) => g.endWallMillis));
    const window = {
      fromWallMillis: Math.min(...lanes.flatMap((l) => l.generations.map((g) => g.startWallMillis))),
      toWallMillis: Math.max(...walls),
    };
    const rows = lanes.map((lane, i) => ({
      y: 24 + i * 22,
      layout: layoutLane(lane, { window, widthPx: 300 }),
      highlighted: false,
    }));
    const ctx = recordingCanvas();

    // Act
    const shapes = drawTimeline(ctx, rows, {
      widthPx: 460,
      heightPx: 200,
      rowHeightPx: 22,
      labelWidthPx: 160,
      axisHeightPx: 24,
      window,
      restarts: layoutRestarts(state.restarts, { window, widthPx: 300 }),
      colorOf: () => '#888',
    });

    // Assert
    const bars = rows.reduce((n, r) => n + r.layout.bars.length, 0);
    const ticks = rows.reduce((n, r) => n + r.layout.ticks.length, 0);
    const markers = rows.reduce((n, r) => n + r.layout.rejections.length, 0);
    expect(bars).toBe(600);
    expect(shapes).toBe(bars + ticks + markers + 1 /* restart */);
    expect(ctx.arcs).toBe(markers);
    expect(ctx.rects.every(({ w }) => w >= 1)).toBe(true);
  });
});

describe('placeRestartLabel', () => {
  const text = '⟲ restart · fence 112 · 503 replayed in 39 ms · 1 carried'; // 58 chars ≈ 360 px

  it('puts the label right of the line when it fits', () => {
    expect(placeRestartLabel(text, 300, 190, 1_200)).toMatchObject({ text, left: 303 });
  });

  it('flips the label left of a line near the right edge instead of cutting it', () => {
    const placed = placeRestartLabel(text, 1_150, 190, 1_200);
    expect(placed?.text).toBe(text);
    expect(placed!.left + placed!.widthPx).toBeLessThanOrEqual(1_150);
    expect(placed!.left).toBeGreaterThanOrEqual(190);
  });

  it('shortens the label with an ellipsis when neither side has room, staying inside the plot', () => {
    const placed = placeRestartLabel(text, 400, 190, 560);
    expect(placed?.text.endsWith('…')).toBe(true);
    expect(placed!.left).toBeGreaterThanOrEqual(190);
    expect(placed!.left + placed!.widthPx).toBeLessThanOrEqual(560);
  });

  it("shortens a label that would run into the next restart's label, so labels never overprint", () => {
    const first = placeRestartLabel(text, 400, 190, 1_200)!;
    const second = placeRestartLabel(text, 500, 190, 1_200)!;
    const [a, b] = separateLabels([second, first]);
    expect(b).toEqual(second);
    expect(a!.text.endsWith('…')).toBe(true);
    expect(a!.left + a!.widthPx).toBeLessThanOrEqual(second.left);
  });
});

describe('drawTimeline with a holder filter', () => {
  it('draws the bars and markers the filter matches opaque and dims the rest, leaving the alpha at 1', () => {
    // Arrange: every holder has a colour of its own, so each fill says whose bar it is
    const state = foldEvents(synthesizeEvents({ seed: 3, resources: 4, generations: 60, rejections: 20, restarts: 0 }));
    const lanes = [...state.lanes.values()];
    const holder = lanes[0]!.generations[0]!.holderId;
    const match = compileLeaseMatch({ holder });
    const gens = lanes.flatMap((l) => l.generations);
    const window = {
      fromWallMillis: Math.min(...gens.map((g) => g.startWallMillis)),
      toWallMillis: Math.max(...gens.map((g) => g.endWallMillis)),
    };
    const colorOf = (id: string): string => `color:${id}`;
    const rows = lanes.map((lane, i) => ({
      y: 24 + i * 22,
      layout: layoutLane(lane, { window, widthPx: 4_000, match }),
      highlighted: false,
    }));
    const ctx = recordingCanvas();

    // Act
    drawTimeline(ctx, rows, {
      widthPx: 4_160,
      heightPx: 200,
      rowHeightPx: 22,
      labelWidthPx: 160,
      axisHeightPx: 24,
      window,
      restarts: [],
      colorOf,
    });

    // Assert
    const barFills = ctx.rects.filter((f) => f.fill.startsWith('color:'));
    const mine = barFills.filter((f) => f.fill === colorOf(holder));
    const others = barFills.filter((f) => f.fill !== colorOf(holder));
    expect(mine.length).toBe(gens.filter((g) => g.holderId.toLowerCase().includes(holder.toLowerCase())).length);
    expect(others.length).toBeGreaterThan(0);
    expect(new Set(mine.map((f) => f.alpha))).toEqual(new Set([1]));
    expect(new Set(others.map((f) => f.alpha))).toEqual(new Set([DIMMED_ALPHA]));
    const markers = rows.flatMap((r) => r.layout.rejections);
    expect(ctx.arcAlphas).toEqual(markers.map((m) => (m.matching > 0 ? 1 : DIMMED_ALPHA)));
    expect(new Set(ctx.arcAlphas).size).toBe(2);
    expect(ctx.globalAlpha).toBe(1);
  });

  it("draws a refusal its gate reported late as a ring at the record's time, and one reported at once as a dot", () => {
    // Arrange: a refusal recorded at once and one its gate's outbox delivered 25 s late (the fixture says when)
    const { lane, window } = lateRefusalLane();
    const layout = layoutLane(lane, { window, widthPx: 600 });
    const ctx = recordingCanvas();

    // Act
    drawTimeline(ctx, [{ y: 30, layout, highlighted: false }], {
      widthPx: 760,
      heightPx: 80,
      rowHeightPx: 22,
      labelWidthPx: 160,
      axisHeightPx: 24,
      window,
      restarts: [],
      colorOf: () => '#888',
    });

    // Assert: two markers, each where the coordinator recorded it; the late one hollow
    expect(layout.rejections.map((m) => [Math.round(m.x), m.reportedLate])).toEqual([
      [200, 0],
      [500, 1],
    ]);
    const markerFills = new Set<string>([TIMELINE_COLORS.rejection, TIMELINE_COLORS.reportedLateFill]);
    expect(ctx.pathFills.map((f) => f.fill).filter((fill) => markerFills.has(fill))).toEqual([
      TIMELINE_COLORS.rejection,
      TIMELINE_COLORS.reportedLateFill,
    ]);
  });
});

describe('drawTimeline keeps text and marks apart', () => {
  const BAR = '#3b82f6';
  const TICK = 'rgba(17, 24, 39, 0.55)';
  const base = { widthPx: 900, heightPx: 200, rowHeightPx: 22, labelWidthPx: 190, axisHeightPx: 26 };
  const plotWidth = base.widthPx - base.labelWidthPx;
  // One lane: agent-2 holds fence 123 for 60 s with a renewal every second, then agent-3 takes over.
  const log = new LogBuilder({ wallMillis: Date.UTC(2026, 4, 28, 13, 24, 0) });
  log.started();
  log.granted('res-004', 'agent-2', 123);
  for (let i = 0; i < 60; i += 1) log.advance(1_000).renewed('res-004', 'agent-2', 123);
  log.advance(500).released('res-004', 'agent-2', 123);
  log.advance(100).granted('res-004', 'agent-3', 124);
  log.advance(40_000).restart('boot-b', { downMillis: 200, recoveredFence: 124 });
  const state = foldEvents(log.events);
  const lane = state.lanes.get('res-004')!;
  const from = Date.UTC(2026, 4, 28, 13, 23, 55);
  const frame = (window: { fromWallMillis: number; toWallMillis: number }, y: number) => {
    const ctx = recordingCanvas();
    drawTimeline(ctx, [{ y, layout: layoutLane(lane, { window, widthPx: plotWidth }), highlighted: false }], {
      ...base,
      window,
      restarts: layoutRestarts(state.restarts, { window, widthPx: plotWidth }),
      colorOf: () => BAR,
    });
    return ctx.painted;
  };

  it('cuts a row scrolled half out of view at the axis: nothing of it is drawn inside the axis band', () => {
    // Act: the row's top is 11 px above the axis's bottom edge
    const painted = frame({ fromWallMillis: from, toWallMillis: from + 120_000 }, base.axisHeightPx - 11);

    // Assert
    const axisBand: Box = { x: 0, y: 0, width: base.widthPx, height: base.axisHeightPx };
    const rowPaint = painted.filter((p) => p.fillStyle === BAR || p.fillStyle === TICK || p.text.includes('res-004'));
    expect(rowPaint.length).toBeGreaterThan(0);
    expect(rowPaint.filter((p) => overlaps(p.box, axisBand))).toEqual([]);
  });

  it("draws renewal ticks clear of the bar's label", () => {
    // Act
    const painted = frame({ fromWallMillis: from, toWallMillis: from + 120_000 }, 40);

    // Assert
    const labels = painted.filter((p) => p.kind === 'text' && /f12[34]$/.test(p.text));
    const ticks = painted.filter((p) => p.kind === 'rect' && p.fillStyle === TICK);
    expect(labels.length).toBeGreaterThan(0);
    expect(ticks.length).toBeGreaterThan(10);
    expect(ticks.filter((t) => labels.some((l) => overlaps(t.box, l.box)))).toEqual([]);
  });

  it('cuts the holder of a narrow bar label, never its fence', () => {
    // Act: zoomed out so agent-2's bar is ~95 px wide
    const painted = frame({ fromWallMillis: from, toWallMillis: from + 450_000 }, 40);

    // Assert
    const label = painted.find((p) => p.kind === 'text' && p.text.includes('…'));
    expect(label?.text).toMatch(/^ag[^·]*… · f123$/);
  });

  it("draws no axis tick label under a restart's label", () => {
    // Act: every axis tick window in turn, so the restart label meets tick labels at many offsets
    const clashes: string[] = [];
    for (let shift = 0; shift < 10_000; shift += 500) {
      const start = from + 60_000 + shift;
      const painted = frame({ fromWallMillis: start, toWallMillis: start + 60_000 }, 40);
      const restartLabel = painted.find((p) => p.kind === 'text' && p.text.startsWith('⟲'));
      if (restartLabel === undefined) continue;
      const tickLabels = painted.filter((p) => p.kind === 'text' && /^\d\d:\d\d/.test(p.text));
      for (const t of tickLabels) if (overlaps(t.box, restartLabel.box)) clashes.push(`${shift}: ${t.text}`);
    }

    // Assert
    expect(clashes).toEqual([]);
  });
});
