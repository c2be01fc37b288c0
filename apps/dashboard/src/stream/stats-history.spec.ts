import type { StatsFrame } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { StatsHistory } from './stats-history.js';

const frame = (bootId: string, wallMillis: number, held: number, grants: number): StatsFrame => ({
  type: 'stats',
  bootId,
  wallMillis,
  denials: { held, 'not-holder': 1 },
  grants,
  renewals: 0,
  releases: 0,
  rejections: 0,
});

describe('StatsHistory', () => {
  it('turns consecutive totals of one boot into rates per second, by denial reason', () => {
    // Arrange
    const stats = new StatsHistory();

    // Act
    stats.push(frame('b1', 1_000, 10, 5));
    stats.push(frame('b1', 3_000, 30, 9));

    // Assert
    expect(stats.between(0, 10_000)).toEqual([
      {
        wallMillis: 3_000,
        bootId: 'b1',
        denialsPerSecond: 10,
        denialsByReason: { held: 10, 'not-holder': 0 },
        grantsPerSecond: 2,
        renewalsPerSecond: 0,
        rejectionsPerSecond: 0,
      },
    ]);
  });

  it('starts a new series at a restart instead of reading a counter reset as a negative rate', () => {
    const stats = new StatsHistory();
    stats.push(frame('b1', 1_000, 50, 5));
    stats.push(frame('b2', 2_000, 1, 1));
    stats.push(frame('b2', 3_000, 3, 1));
    expect(stats.between(0, 10_000).map((s) => [s.bootId, s.denialsPerSecond])).toEqual([['b2', 2]]);
  });

  it('keeps at most capacity samples', () => {
    const stats = new StatsHistory(2);
    for (let i = 0; i < 5; i += 1) stats.push(frame('b', i * 1_000, i, i));
    expect(stats.size).toBe(2);
    expect(stats.between(0, 10_000).map((s) => s.wallMillis)).toEqual([3_000, 4_000]);
  });
});
