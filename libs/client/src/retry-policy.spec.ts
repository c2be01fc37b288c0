import { describe, expect, it } from 'vitest';
import { backoffDelayMillis, createRetryPolicy } from './retry-policy.js';

describe('createRetryPolicy', () => {
  it('fills in the documented defaults', () => {
    // Act
    const policy = createRetryPolicy('Test');

    // Assert
    expect(policy).toMatchObject({ maxAttempts: 5, initialDelayMillis: 100, maxDelayMillis: 2000 });
  });

  it.each([
    [{ maxAttempts: 1.5 }, /Test: retry.maxAttempts must be an integer ≥ 1 \(attempts\), got 1.5/],
    [{ initialDelayMillis: -1 }, /Test: retry.initialDelayMillis must be a finite number ≥ 0 \(milliseconds\), got -1/],
    [
      { initialDelayMillis: 500, maxDelayMillis: 100 },
      /Test: retry.maxDelayMillis must be finite and ≥ initialDelayMillis 500 \(milliseconds\), got 100/,
    ],
  ])('refuses %j with a RangeError naming the field, unit and value', (options, message) => {
    // Act / Assert
    expect(() => createRetryPolicy('Test', options)).toThrow(RangeError);
    expect(() => createRetryPolicy('Test', options)).toThrow(message);
  });
});

describe('backoffDelayMillis', () => {
  it('doubles the upper bound per retry up to the cap (full jitter)', () => {
    // Arrange: the largest draw below 1.
    const policy = createRetryPolicy('Test', { initialDelayMillis: 100, maxDelayMillis: 1000, random: () => 0.999999 });

    // Act
    const delays = [1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMillis(policy, retry));

    // Assert
    expect(delays).toEqual([99, 199, 399, 799, 999, 999]);
  });

  it('can wait zero milliseconds (the smallest draw)', () => {
    // Arrange
    const policy = createRetryPolicy('Test', { random: () => 0 });

    // Act / Assert
    expect(backoffDelayMillis(policy, 3)).toBe(0);
  });
});
