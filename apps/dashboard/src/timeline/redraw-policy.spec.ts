import { describe, expect, it } from 'vitest';
import { commitNeedsRedraw, decideRedraw, snapWindow, type DrawInputs, type FrameRequest } from './redraw-policy.js';
import { xOfWall } from './time-scale.js';

/** 2 minutes on 1 200 px: 100 ms per pixel. */
const request = (overrides: Partial<FrameRequest> = {}): FrameRequest => ({
  window: { fromWallMillis: 1_000_000, toWallMillis: 1_120_000 },
  plotWidthPx: 1_200,
  layoutKey: 'k',
  position: 10,
  atMillis: 0,
  ...overrides,
});
const shifted = (millis: number): FrameRequest['window'] => ({
  fromWallMillis: 1_000_000 + millis,
  toWallMillis: 1_120_000 + millis,
});

describe('snapWindow', () => {
  it('moves the left edge to a whole pixel of the scale and keeps the span', () => {
    // Act
    const { window, fromPx } = snapWindow({ fromWallMillis: 1_000_040, toWallMillis: 1_120_040 }, 1_200);

    // Assert
    expect(fromPx).toBe(10_000);
    expect(window).toEqual({ fromWallMillis: 1_000_000, toWallMillis: 1_120_000 });
    expect(xOfWall(window, 1_200, 1_000_100)).toBeCloseTo(1);
  });

  it('throws a RangeError naming the field for a plot width that is not positive or a window that is empty', () => {
    expect(() => snapWindow({ fromWallMillis: 0, toWallMillis: 10 }, 0)).toThrow(/plotWidthPx.*got 0/);
    expect(() => snapWindow({ fromWallMillis: 10, toWallMillis: 10 }, 100)).toThrow(RangeError);
  });
});

describe('decideRedraw', () => {
  it('draws the first frame', () => {
    expect(decideRedraw(undefined, request()).draw).toBe(true);
  });

  it('skips a frame whose window moved by less than a pixel and whose data did not change', () => {
    // Arrange
    const first = decideRedraw(undefined, request()).frame;

    // Act
    const next = decideRedraw(first, request({ window: shifted(30), atMillis: 500 }));

    // Assert
    expect(next.draw).toBe(false);
  });

  it('draws when the window moved by a whole pixel, the span changed, or anything in the layout key changed', () => {
    const first = decideRedraw(undefined, request()).frame;
    expect(decideRedraw(first, request({ window: shifted(100), atMillis: 1 })).draw).toBe(true);
    expect(
      decideRedraw(first, request({ window: { fromWallMillis: 1_000_000, toWallMillis: 1_240_000 }, atMillis: 1 }))
        .draw,
    ).toBe(true);
    expect(decideRedraw(first, request({ layoutKey: 'scrolled', atMillis: 1 })).draw).toBe(true);
    expect(decideRedraw(first, request({ plotWidthPx: 1_000, atMillis: 1 })).draw).toBe(true);
  });

  it('draws new events once the last frame is dataRedrawMillis old, not sooner', () => {
    // Arrange
    const first = decideRedraw(undefined, request({ atMillis: 1_000 })).frame;

    // Act
    const early = decideRedraw(first, request({ position: 11, atMillis: 1_065 }), 66);
    const due = decideRedraw(first, request({ position: 11, atMillis: 1_066 }), 66);

    // Assert
    expect(early.draw).toBe(false);
    expect(due.draw).toBe(true);
    expect(due.frame.position).toBe(11);
  });
});

describe('commitNeedsRedraw', () => {
  const match = { active: false };
  const colorOf = (): string => '#000';
  const live: DrawInputs = {
    animate: true,
    state: {},
    laneCount: 500,
    match,
    colorOf,
    selectedResource: undefined,
    cursorWallMillis: undefined,
    asOfWallMillis: undefined,
  };

  it('does not draw a live commit that only brought new data (the data waits for its turn)', () => {
    expect(commitNeedsRedraw(live, { ...live })).toBe(false);
  });

  it.each<[string, Partial<DrawInputs>]>([
    ['the view state was replaced', { state: {} }],
    ['a lane appeared', { laneCount: 501 }],
    ['the filter changed', { match: { active: true } }],
    ['the holder colours changed', { colorOf: () => '#fff' }],
    ['a lane was selected', { selectedResource: 'res-001' }],
    ['the cursor moved', { cursorWallMillis: 1_000 }],
    ['the as-of time moved', { asOfWallMillis: 2_000 }],
    ['the view stopped following now', { animate: false }],
  ])('draws a live commit at once when %s', (_, change) => {
    expect(commitNeedsRedraw(live, { ...live, ...change })).toBe(true);
  });

  it('draws the first commit, and every commit while not animating (no loop would draw it later)', () => {
    const still: DrawInputs = { ...live, animate: false };
    expect(commitNeedsRedraw(undefined, live)).toBe(true);
    expect(commitNeedsRedraw(still, { ...still })).toBe(true);
    expect(commitNeedsRedraw(still, live)).toBe(true);
  });
});
