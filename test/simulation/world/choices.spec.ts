import { describe, expect, it } from 'vitest';
import { CHOICE_RANGE, ChoiceStream } from './choices.js';

describe('ChoiceStream', () => {
  it('maps a 0 choice to the benign outcome of every reader', () => {
    const stream = new ChoiceStream([0, 0, 0, 0]);
    expect(stream.chance(0.99)).toBe(false);
    expect(stream.between(5, 50)).toBe(5);
    expect(stream.pick(['first', 'second'])).toBe('first');
    expect(stream.fraction()).toBe(0);
  });

  it('reads the generated values in order, then only 0s when the tail seed is 0', () => {
    const stream = new ChoiceStream([CHOICE_RANGE - 1, CHOICE_RANGE / 2]);
    expect(stream.chance(0.01)).toBe(true);
    expect(stream.between(0, 9)).toBe(5);
    expect([stream.fraction(), stream.fraction()]).toEqual([0, 0]);
    expect(stream.consumed).toBe(4);
  });

  it('continues with the same pseudo-random tail for the same seed, and another for another seed', () => {
    const read = (seed: number): number[] => {
      const stream = new ChoiceStream([], seed);
      return Array.from({ length: 8 }, () => stream.between(0, 1000));
    };
    expect(read(42)).toEqual(read(42));
    expect(read(42)).not.toEqual(read(43));
    expect(read(42).some((value) => value > 0)).toBe(true);
  });
});
