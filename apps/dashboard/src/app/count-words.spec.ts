import { describe, expect, it } from 'vitest';
import { countOf } from './count-words.js';

describe('countOf', () => {
  it('gives one without the plural s, and zero and many with it, in en-US digits', () => {
    expect(countOf(1, 'lane')).toBe('1 lane');
    expect(countOf(0, 'lane')).toBe('0 lanes');
    expect(countOf(12_480, 'handover')).toBe('12,480 handovers');
  });
});
