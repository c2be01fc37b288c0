import { describe, expect, it } from 'vitest';
import { CoordinatorHttpError } from './errors.js';
import { isFinalRefusal } from './rejection-reporter.js';

describe('isFinalRefusal', () => {
  it.each([
    [400, { error: 'invalid-request' }],
    [409, { ok: false, reason: 'seq-conflict', message: 'seq 3 was recorded with other content' }],
  ])('treats HTTP %i (%j) as final: resending the same record can never succeed', (status, body) => {
    expect(isFinalRefusal(new CoordinatorHttpError(status, body, 'report rejection'))).toBe(true);
  });

  it.each([
    [409, { ok: false, reason: 'something-else' }],
    [409, 'not json'],
    [500, { error: 'internal' }],
    [401, { error: 'unauthorized' }],
    // the gate token does not cover the resource: a tokens file fixed later lets it through
    [403, { error: 'forbidden' }],
  ])('retries HTTP %i (%j)', (status, body) => {
    expect(isFinalRefusal(new CoordinatorHttpError(status, body, 'report rejection'))).toBe(false);
  });

  it('retries anything that is not an HTTP answer (network errors, timeouts)', () => {
    expect(isFinalRefusal(new TypeError('fetch failed'))).toBe(false);
  });
});
