import { describe, expect, it } from 'vitest';
import { ClockReadingError } from '../errors.js';
import { guardClock } from './guard-clock.js';
import { createManualClock } from './manual-clock.js';
import { createMonotonicClock } from './monotonic-clock.js';

describe('createManualClock', () => {
  it('starts at 0 and stands still by default', () => {
    const clock = createManualClock('test');
    expect([clock.now().millis, clock.now().millis]).toEqual([0, 0]);
    expect(clock.now().domain).toBe('test');
  });

  it('returns the current reading, then moves forward by stepPerRead', () => {
    const clock = createManualClock('test', { start: 100, stepPerRead: 30 });
    expect([clock.now().millis, clock.now().millis, clock.now().millis]).toEqual([100, 130, 160]);
  });

  it('peeks without stepping', () => {
    const clock = createManualClock('test', { stepPerRead: 5 });
    clock.now();
    expect([clock.peek().millis, clock.peek().millis]).toEqual([5, 5]);
  });

  it('advances by the given milliseconds', () => {
    const clock = createManualClock('test', { start: 10 });
    clock.advance(990);
    expect(clock.now().millis).toBe(1_000);
  });

  it.each([
    ['a negative advance', () => createManualClock('t').advance(-1), RangeError, 'ms'],
    ['a NaN advance', () => createManualClock('t').advance(Number.NaN), RangeError, 'ms'],
    ['a negative stepPerRead', () => createManualClock('t', { stepPerRead: -1 }), RangeError, 'options.stepPerRead'],
    [
      'an infinite start',
      () => createManualClock('t', { start: Number.POSITIVE_INFINITY }),
      RangeError,
      'options.start',
    ],
    ['an empty domain', () => createManualClock(''), TypeError, 'domain'],
  ])('refuses %s', (_label, act, errorClass, field) => {
    expect(act).toThrow(errorClass);
    expect(act).toThrow(field);
  });

  it('does not move when advance is refused', () => {
    const clock = createManualClock('t', { start: 7 });
    expect(() => clock.advance(-3)).toThrow(RangeError);
    expect(clock.peek().millis).toBe(7);
  });
});

describe('guardClock', () => {
  const scripted = (readings: number[]): (() => number) => {
    let index = 0;
    return () => readings[index++] ?? Number.NaN;
  };

  it('stamps its domain on every reading', () => {
    const clock = guardClock('wall', scripted([5, 6]));
    expect(clock.now().toJSON()).toEqual({ millis: 5, domain: 'wall' });
    expect(clock.domain).toBe('wall');
  });

  it('accepts equal and increasing readings', () => {
    const clock = guardClock('wall', scripted([5, 5, 9]));
    expect([clock.now().millis, clock.now().millis, clock.now().millis]).toEqual([5, 5, 9]);
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
  ])('throws ClockReadingError on a %s reading', (_label, bad) => {
    const clock = guardClock('wall', scripted([bad]));
    let caught: unknown;
    try {
      clock.now();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClockReadingError);
    expect((caught as ClockReadingError).code).toBe('clock-reading');
    expect((caught as ClockReadingError).problem).toBe('not-finite');
  });

  it('throws ClockReadingError on a backwards reading and keeps the last good one as the bar', () => {
    const clock = guardClock('wall', scripted([100, 40, 99, 100]));
    expect(clock.now().millis).toBe(100);
    expect(() => clock.now()).toThrow(ClockReadingError);
    expect(() => clock.now()).toThrow(/below the previous reading 100/);
    expect(clock.now().millis).toBe(100);
  });

  it('refuses a non-function source', () => {
    expect(() => guardClock('wall', 5 as unknown as () => number)).toThrow(TypeError);
  });
});

describe('createMonotonicClock', () => {
  it('reads non-decreasing milliseconds in its domain, starting near 0', () => {
    const clock = createMonotonicClock('boot-1');
    const readings = Array.from({ length: 100 }, () => clock.now());
    expect(readings.every((r) => r.domain === 'boot-1')).toBe(true);
    expect(readings.every((r, i) => i === 0 || r.millis >= (readings[i - 1]?.millis ?? 0))).toBe(true);
    expect(readings[0]?.millis).toBeGreaterThanOrEqual(0);
  });

  it('refuses an empty domain', () => {
    expect(() => createMonotonicClock('')).toThrow(TypeError);
  });
});
