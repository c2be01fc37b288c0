import { describe, expect, it } from 'vitest';
import { parseDurationMillis } from './duration.js';

describe('parseDurationMillis', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0s', 0],
  ])('%s is %d ms', (text, millis) => {
    expect(parseDurationMillis(text)).toBe(millis);
  });

  it.each(['30', '1.5s', '-1s', '2 m', '2min', 's', '', '1e3ms', '0x10s'])('refuses %j, quoting it', (text) => {
    expect(() => parseDurationMillis(text)).toThrow(
      `must be a whole number with a unit: 500ms, 30s, 2m or 1h, got ${JSON.stringify(text)}`,
    );
  });

  it.each(['597h', '99999h', '2147483648ms', '9999999999h', '99999999999s', '1'.padEnd(40, '0') + 'ms'])(
    'refuses %j: every duration is a timer, and a longer one would fire at once',
    (text) => {
      expect(() => parseDurationMillis(text)).toThrow(
        `must be at most 2147483647ms (about 596h, the longest timer), got ${JSON.stringify(text)}`,
      );
    },
  );

  it('takes the longest timer itself', () => {
    expect(parseDurationMillis('2147483647ms')).toBe(2_147_483_647);
    expect(parseDurationMillis('596h')).toBe(596 * 3_600_000);
  });
});
