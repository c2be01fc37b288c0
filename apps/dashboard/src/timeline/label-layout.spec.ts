import { describe, expect, it } from 'vitest';
import {
  CHAR_WIDTH_PX,
  barLabelBox,
  fitBarLabel,
  overlaps,
  renewalTickBox,
  rowsBand,
  tickLabelsClearOf,
} from './label-layout.js';

describe('fitBarLabel', () => {
  it('keeps the whole label when it fits', () => {
    expect(fitBarLabel('agent-2', 14, 200)).toBe('agent-2 · f14');
  });

  it('keeps the fence and shortens the holder when the label does not fit', () => {
    // 'agent-2 · f14' is 13 characters; 10 fit
    const label = fitBarLabel('agent-2', 14, 10 * CHAR_WIDTH_PX);
    expect(label).toBe('age… · f14');
    expect(label!.length * CHAR_WIDTH_PX).toBeLessThanOrEqual(10 * CHAR_WIDTH_PX);
  });

  it('falls back to the fence alone, then to nothing', () => {
    expect(fitBarLabel('agent-2', 1_234, 6 * CHAR_WIDTH_PX)).toBe('f1234');
    expect(fitBarLabel('agent-2', 1_234, 4 * CHAR_WIDTH_PX)).toBeUndefined();
  });

  it('never cuts the fence, at any width', () => {
    for (let chars = 0; chars < 40; chars += 1) {
      const label = fitBarLabel('a-very-long-holder-name', 987, chars * CHAR_WIDTH_PX);
      if (label !== undefined) {
        expect(label.endsWith('f987')).toBe(true);
        expect(label.length).toBeLessThanOrEqual(chars);
      }
    }
  });
});

describe('renewalTickBox', () => {
  it("hangs below the bar, never across the bar's label", () => {
    const barTop = 30;
    const barHeight = 13;
    const label = barLabelBox('agent-2 · f14', 200, barTop, barHeight);
    for (let x = 195; x < 300; x += 1) expect(overlaps(renewalTickBox(x, barTop, barHeight), label)).toBe(false);
  });
});

describe('tickLabelsClearOf', () => {
  it('leaves out the axis labels that a restart label would touch, and keeps the others', () => {
    const ticks = [
      { x: 250, label: '13:24:40' },
      { x: 340, label: '13:24:50' },
      { x: 430, label: '13:25:00' },
    ];
    const kept = tickLabelsClearOf(ticks, [{ left: 320, widthPx: 60 }]);
    expect(kept.map((t) => t.label)).toEqual(['13:24:40', '13:25:00']);
  });
});

describe('rowsBand', () => {
  it('starts below the time axis', () => {
    expect(rowsBand(800, 460, 26)).toEqual({ x: 0, y: 26, width: 800, height: 434 });
  });
});
