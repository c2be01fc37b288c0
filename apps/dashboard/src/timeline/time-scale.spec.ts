import { describe, expect, it } from 'vitest';
import { axisTicks, MIN_SPAN_MILLIS, panWindow, wallOfX, xOfWall, zoomWindow } from './time-scale.js';

const window = { fromWallMillis: 1_000_000, toWallMillis: 1_060_000 };

describe('time scale', () => {
  it('maps wall time to pixels and back', () => {
    expect(xOfWall(window, 600, 1_030_000)).toBe(300);
    expect(wallOfX(window, 600, 300)).toBe(1_030_000);
  });

  it('keeps the anchor at the same pixel when zooming, and never narrows below the minimum span', () => {
    const zoomed = zoomWindow(window, 0.5, 1_015_000);
    expect(zoomed).toEqual({ fromWallMillis: 1_007_500, toWallMillis: 1_037_500 });
    expect(xOfWall(zoomed, 600, 1_015_000)).toBeCloseTo(xOfWall(window, 600, 1_015_000));
    const tiny = zoomWindow(window, 1e-9, 1_015_000);
    expect(tiny.toWallMillis - tiny.fromWallMillis).toBe(MIN_SPAN_MILLIS);
  });

  it('throws a RangeError for a zoom factor that is not positive', () => {
    expect(() => zoomWindow(window, 0, 1)).toThrow(/zoomWindow: factor must be a positive number, got 0/);
  });

  it('pans by a duration', () => {
    expect(panWindow(window, -5_000)).toEqual({ fromWallMillis: 995_000, toWallMillis: 1_055_000 });
  });

  it('places axis ticks at a round step at least minSpacingPx apart, labelled in UTC', () => {
    const ticks = axisTicks(
      { fromWallMillis: Date.UTC(2026, 0, 1, 12, 0, 3), toWallMillis: Date.UTC(2026, 0, 1, 12, 1, 3) },
      600,
      90,
    );
    expect(ticks.map((t) => t.label)).toEqual(['12:00:10', '12:00:20', '12:00:30', '12:00:40', '12:00:50', '12:01:00']);
    for (let i = 1; i < ticks.length; i += 1) expect(ticks[i]!.x - ticks[i - 1]!.x).toBeGreaterThanOrEqual(90);
  });
});
