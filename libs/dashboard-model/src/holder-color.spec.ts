import { describe, expect, it } from 'vitest';
import { EventIndex } from './event-index.js';
import { LogBuilder } from './testing/log-builder.js';
import { colorOfSlot, HOLDER_PALETTE, HolderColors, investigationColors } from './holder-color.js';

/** Hue in degrees of `#rrggbb` or `hsl(h …)`. */
function hueOf(color: string): number {
  const hsl = /^hsl\((\d+)/.exec(color);
  if (hsl !== null) return Number(hsl[1]);
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  if (d === 0) return 0;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

function hueDistance(a: string, b: string): number {
  const d = Math.abs(hueOf(a) - hueOf(b)) % 360;
  return Math.min(d, 360 - d);
}

describe('holder colours', () => {
  it("gives the demo's four agents four well-separated colours, in order of first appearance", () => {
    // Arrange: the agents whose hashed hues collided (agent-1/agent-3, agent-2/agent-4).
    const colors = new HolderColors();

    // Act
    colors.register(['agent-1', 'agent-2', 'agent-3', 'agent-4']);
    const four = ['agent-1', 'agent-2', 'agent-3', 'agent-4'].map(colors.colorOf);

    // Assert
    expect(four).toEqual(HOLDER_PALETTE.slice(0, 4));
    for (let i = 0; i < four.length; i += 1) {
      for (let j = i + 1; j < four.length; j += 1)
        expect(hueDistance(four[i]!, four[j]!), `${four[i]} vs ${four[j]}`).toBeGreaterThanOrEqual(40);
    }
  });

  it("keeps a holder's colour when more holders appear, so a replay and the live view agree", () => {
    const replay = new HolderColors();
    replay.register(['agent-2', 'agent-1']);
    const live = new HolderColors();
    live.register(['agent-2', 'agent-1', 'agent-4', 'agent-3']);
    expect(['agent-2', 'agent-1'].map(replay.colorOf)).toEqual(['agent-2', 'agent-1'].map(live.colorOf));
  });

  it('spaces holders past the palette by the golden angle, every colour distinct', () => {
    const colors = Array.from({ length: 40 }, (_, slot) => colorOfSlot(slot));
    expect(new Set(colors).size).toBe(40);
    const extra = colors.slice(HOLDER_PALETTE.length);
    for (let i = 1; i < extra.length; i += 1) expect(hueDistance(extra[i - 1]!, extra[i]!)).toBeGreaterThan(100);
  });

  it('lists holders in the order the log first names them', () => {
    // Arrange
    const log = new LogBuilder();
    log.started({ carried: [] });
    log.granted('a', 'agent-3', 1);
    log.granted('b', 'agent-1', 2);
    log.renewed('a', 'agent-3', 1);
    log.rejected('b', { holderId: 'agent-9', fence: 1 }, { holderId: 'agent-1', fence: 2 });
    log.granted('c', 'agent-2', 3);
    const index = new EventIndex();

    // Act
    log.events.forEach((e) => index.append(e));

    // Assert
    expect(index.holderIds()).toEqual(['agent-3', 'agent-1', 'agent-9', 'agent-2']);
  });

  it('colours the refused and the floor holder of an investigation differently, even when they share a colour', () => {
    const colors = new HolderColors();
    colors.register(['agent-1', 'agent-3']);
    const [refused, floor] = investigationColors(colors.colorOf, 'agent-1', 'agent-3');
    expect([refused, floor]).toEqual([HOLDER_PALETTE[0], HOLDER_PALETTE[1]]);

    const same = investigationColors(colors.colorOf, 'agent-1', 'agent-1');
    expect(same[0]).not.toBe(same[1]);
    const collided = investigationColors(() => '#123456', 'x', 'y');
    expect(collided[0]).not.toBe(collided[1]);
  });

  it('refuses a negative slot', () => {
    expect(() => colorOfSlot(-1)).toThrow(RangeError);
  });
});
