import { describe, expect, it } from 'vitest';
import { createReopenBackoff } from './reopen-backoff.js';

describe('createReopenBackoff', () => {
  describe('delayMillis', () => {
    it('doubles the ceiling per failure up to the cap, and picks within its upper half', () => {
      // Arrange
      const lowest = createReopenBackoff({ initialDelayMillis: 100, maxDelayMillis: 5_000, random: () => 0 });
      const highest = createReopenBackoff({ initialDelayMillis: 100, maxDelayMillis: 5_000, random: () => 0.999_999 });
      const failures = [1, 2, 3, 4, 5, 6, 7, 8, 1_000, Number.MAX_SAFE_INTEGER];

      // Act
      const low = failures.map((n) => lowest.delayMillis(n));
      const high = failures.map((n) => highest.delayMillis(n));

      // Assert
      expect(low).toEqual([50, 100, 200, 400, 800, 1_600, 2_500, 2_500, 2_500, 2_500]);
      expect(high).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000, 5_000]);
    });

    it('spreads the waits of coordinators that failed together', () => {
      const picks = [0.1, 0.5, 0.9].map((r) =>
        createReopenBackoff({ initialDelayMillis: 100, maxDelayMillis: 5_000, random: () => r }).delayMillis(3),
      );
      expect(new Set(picks).size).toBe(3);
    });

    it.each([0, -1, 1.5, Number.NaN])('refuses %s failures with a RangeError naming failures', (count) => {
      const backoff = createReopenBackoff({ initialDelayMillis: 100, maxDelayMillis: 5_000 });
      expect(() => backoff.delayMillis(count)).toThrow(RangeError);
      expect(() => backoff.delayMillis(count)).toThrow(/failures/);
    });
  });

  it.each([
    ['initialDelayMillis', { initialDelayMillis: 0, maxDelayMillis: 5_000 }],
    ['maxDelayMillis', { initialDelayMillis: 100, maxDelayMillis: 2.5 }],
    ['initialDelayMillis', { initialDelayMillis: 6_000, maxDelayMillis: 5_000 }],
  ])('refuses a bad %s with a RangeError naming it', (field, options) => {
    expect(() => createReopenBackoff(options)).toThrow(RangeError);
    expect(() => createReopenBackoff(options)).toThrow(field);
  });
});
