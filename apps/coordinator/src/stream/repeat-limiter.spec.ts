import { describe, expect, it } from 'vitest';
import { RepeatLimiter } from './repeat-limiter.js';

describe('RepeatLimiter', () => {
  it('reports the first occurrence of a key, holds back repeats within the interval, then reports with their count', () => {
    let nowMillis = 0;
    const limiter = new RepeatLimiter<number>({ intervalMillis: 60_000, now: () => nowMillis });

    const reports = [limiter.occurred(300), limiter.occurred(300), limiter.occurred(300), limiter.occurred(301)];
    nowMillis = 60_000;
    reports.push(limiter.occurred(300));

    expect(reports).toEqual([0, undefined, undefined, 0, 2]);
  });

  it('refuses a non-positive interval, naming the field', () => {
    expect(() => new RepeatLimiter({ intervalMillis: 0, now: () => 0 })).toThrow(/intervalMillis must be a positive/);
  });
});
