import { describe, expect, it } from 'vitest';
import { VirtualScheduler } from './scheduler.js';
import { Oscillator, SimClock } from './sim-clock.js';

describe('SimClock', () => {
  it('reads its origin at its start and advances at the oscillator rate in its own domain', () => {
    // Arrange: a machine 1 % fast until t=1000, then 1 % slow
    const scheduler = new VirtualScheduler();
    const oscillator = new Oscillator(1.01, [{ atMillis: 1000, rate: 0.99 }]);
    const clock = new SimClock('agent-1', oscillator, scheduler, 500, 7000);
    // Act
    scheduler.at(2000, () => undefined);
    scheduler.runNext();
    const reading = clock.now();
    // Assert: 500 ms at 1.01, then 1000 ms at 0.99
    expect(reading.domain).toBe('agent-1');
    expect(reading.millis).toBeCloseTo(7000 + 505 + 990, 9);
  });

  it('maps readings back to true time exactly, past and future, across rate changes', () => {
    const scheduler = new VirtualScheduler();
    const oscillator = new Oscillator(0.995, [
      { atMillis: 300, rate: 1.004 },
      { atMillis: 4000, rate: 1 },
    ]);
    const clock = new SimClock('coord.b2', oscillator, scheduler, 100, 200_000);
    for (const trueMillis of [100, 250, 300, 301.5, 3999, 4000, 12_345]) {
      expect(clock.trueTimeOf(clock.readingAt(trueMillis))).toBeCloseTo(trueMillis, 9);
    }
  });

  it('gives two processes on one machine the same rate but unrelated origins', () => {
    const scheduler = new VirtualScheduler();
    const oscillator = new Oscillator(1.002);
    const first = new SimClock('coord.b1', oscillator, scheduler, 0, 104_321);
    const second = new SimClock('coord.b2', oscillator, scheduler, 1000, 204_321);
    expect(first.readingAt(3000) - first.readingAt(1000)).toBeCloseTo(
      second.readingAt(3000) - second.readingAt(1000),
      9,
    );
    expect(first.now().domain).not.toBe(second.now().domain);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new Oscillator(0)).toThrow(RangeError);
    expect(() => new Oscillator(1, [{ atMillis: 5, rate: -1 }])).toThrow(
      /rate must be a positive finite number, got -1/,
    );
  });
});
