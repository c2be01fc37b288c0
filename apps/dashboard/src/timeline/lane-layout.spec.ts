import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { synthesizeEvents, foldEvents, type Lane } from '@lease-fence/dashboard-model';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT, LogBuilder } from '@lease-fence/dashboard-model/testing';
import { layoutLane, layoutRestarts, visibleRows } from './lane-layout.js';

const synthetic = foldEvents(
  synthesizeEvents({ seed: 21, resources: 8, generations: 400, rejections: 120, restarts: 2 }),
);
const lanes = [...synthetic.lanes.values()];
const allWalls = lanes.flatMap((l) => l.generations.flatMap((g) => [g.startWallMillis, g.endWallMillis]));
const lo = Math.min(...allWalls);
const hi = Math.max(...allWalls);

describe('layoutLane', () => {
  it('draws a lease shorter than a pixel 1 px wide when zoomed far out', () => {
    // Arrange: a 40 ms lease on a one-day, 1000 px window
    const log = new LogBuilder({ wallMillis: Date.UTC(2026, 0, 1, 12) });
    log.granted('slot', 'agent-a', 1);
    log.advance(40).released('slot', 'agent-a', 1);
    const lane = foldEvents(log.events).lanes.get('slot')!;

    // Act
    const row = layoutLane(lane, {
      window: { fromWallMillis: Date.UTC(2026, 0, 1), toWallMillis: Date.UTC(2026, 0, 2) },
      widthPx: 1_000,
    });

    // Assert
    expect(row.bars).toHaveLength(1);
    expect(row.bars[0]!.width).toBe(1);
    expect(row.bars[0]!.label).toBeUndefined();
  });

  it(
    'lays out every generation that overlaps the window, at any zoom',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...lanes),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 1e-6, max: 1, noNaN: true }),
          fc.integer({ min: 50, max: 3_000 }),
          (lane: Lane, start, spanFraction, widthPx) => {
            // Arrange
            const from = lo + start * (hi - lo);
            const window = { fromWallMillis: from, toWallMillis: from + Math.max(10, spanFraction * (hi - lo)) };

            // Act
            const row = layoutLane(lane, { window, widthPx });

            // Assert
            const expected = lane.generations.filter(
              (g) => g.endWallMillis >= window.fromWallMillis && g.startWallMillis <= window.toWallMillis,
            );
            expect(row.bars.map((b) => b.generation)).toEqual(expected);
            expect(row.bars.every((b) => b.width >= 1)).toBe(true);
          },
        ),
        fcParameters(200),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it(
    'clusters rejection markers and renewal ticks so that their counts add up to the log in the window',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...lanes),
          fc.double({ min: 0, max: 0.9, noNaN: true }),
          fc.double({ min: 1e-4, max: 1, noNaN: true }),
          fc.integer({ min: 20, max: 2_000 }),
          fc.integer({ min: 1, max: 30 }),
          (lane: Lane, start, spanFraction, widthPx, clusterPx) => {
            // Arrange
            const from = lo + start * (hi - lo);
            const window = { fromWallMillis: from, toWallMillis: from + Math.max(10, spanFraction * (hi - lo)) };

            // Act
            const row = layoutLane(lane, { window, widthPx, clusterPx });

            // Assert
            const rejectionsInWindow = lane.rejections.filter(
              (r) => r.stamp.wallMillis >= window.fromWallMillis && r.stamp.wallMillis <= window.toWallMillis,
            );
            expect(row.rejections.reduce((n, c) => n + c.count, 0)).toBe(rejectionsInWindow.length);
            const renewalsInWindow = lane.generations
              .filter((g) => g.endWallMillis >= window.fromWallMillis && g.startWallMillis <= window.toWallMillis)
              .flatMap((g) => g.renewalWallMillis)
              .filter((w) => w >= window.fromWallMillis && w <= window.toWallMillis);
            expect(row.ticks.reduce((n, t) => n + t.count, 0)).toBe(renewalsInWindow.length);
            for (let i = 1; i < row.rejections.length; i += 1)
              expect(row.rejections[i]!.x - row.rejections[i - 1]!.x).toBeGreaterThan(0);
          },
        ),
        fcParameters(200),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('marks a handover after expiry as reassigned, and a release followed by a grant as not', () => {
    // Arrange
    const log = new LogBuilder({ ttlMillis: 1_000 });
    log.granted('slot', 'agent-a', 1);
    log.advance(1_200).expired('slot', 'agent-a', 1);
    log.granted('slot', 'agent-b', 2);
    log.advance(300).released('slot', 'agent-b', 2);
    log.advance(10).granted('slot', 'agent-c', 3);
    const lane = foldEvents(log.events).lanes.get('slot')!;
    const from = lane.generations[0]!.startWallMillis;

    // Act
    const row = layoutLane(lane, {
      window: { fromWallMillis: from - 100, toWallMillis: from + 5_000 },
      widthPx: 1_000,
    });

    // Assert
    expect(row.bars.map((b) => [b.end, b.reassigned])).toEqual([
      ['expired', true],
      ['released', false],
      ['open', false],
    ]);
  });
});

describe('layoutRestarts', () => {
  it('puts each restart with its grace window across the lanes, merging close ones with a count', () => {
    const restarts = synthetic.restarts;
    const clusters = layoutRestarts(restarts, {
      window: { fromWallMillis: lo - 1_000, toWallMillis: hi + 1_000 },
      widthPx: 1_200,
      clusterPx: 2,
    });
    expect(clusters.reduce((n, c) => n + c.count, 0)).toBe(restarts.length);
    expect(clusters.every((c) => c.graceEndX >= c.x)).toBe(true);
  });
});

describe('visibleRows', () => {
  it.each([
    [0, 100, 20, 500, 0, [0, 5]],
    [1_000, 100, 20, 500, 3, [47, 58]],
    [9_900, 200, 20, 500, 3, [492, 500]],
    [0, 100, 20, 0, 3, [0, 0]],
  ])(
    'at scrollTop %i, height %i, rows of %i px, %i rows, overscan %i draws rows %j',
    (top, height, row, count, overscan, [first, last]) => {
      expect(visibleRows(top, height, row, count, overscan)).toEqual({ first, last });
    },
  );
});
