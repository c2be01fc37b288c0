import { describe, expect, it } from 'vitest';
import { AcquireBodySchema, EventsQuerySchema, queryParamsOf } from './http.js';
import { StreamMessageSchema, StreamQuerySchema } from './stream.js';

const issuesOf = (result: {
  success: boolean;
  error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] };
}) => (result.error?.issues ?? []).map((issue) => ({ path: issue.path.join('.'), message: issue.message }));

describe('EventsQuerySchema', () => {
  it('reads decimal digits and fills the defaults', () => {
    expect(EventsQuerySchema.parse({})).toEqual({ after: 0, limit: 1000 });
    expect(EventsQuerySchema.parse({ after: '16', limit: '007' })).toEqual({ after: 16, limit: 7 });
  });

  it.each([
    ['hexadecimal', { after: '0x10' }, 'after', 'decimal digits'],
    ['an exponent', { after: '1e3' }, 'after', 'decimal digits'],
    ['a sign', { after: '-1' }, 'after', 'decimal digits'],
    ['an empty value', { after: '' }, 'after', 'must not be empty'],
    ['a repeated parameter', { after: ['1', '2'] }, 'after', 'must be given once'],
    ['a position beyond the safe integers', { after: '99999999999999999999' }, 'after', 'at most 9007199254740991'],
    ['limit 0', { limit: '0' }, 'limit', 'at least 1'],
    ['limit over 10 000', { limit: '10001' }, 'limit', 'at most 10000'],
  ])('refuses %s with one issue naming the parameter', (_name, query, path, message) => {
    const issues = issuesOf(EventsQuerySchema.safeParse(query));
    expect(issues).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it('refuses unknown parameters, naming them', () => {
    const result = EventsQuerySchema.safeParse({ after: '1', from: '2' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['from'] })]);
  });
});

describe('StreamQuerySchema', () => {
  it('answers a bad after with the same words as GET /v1/events', () => {
    for (const after of ['0x10', '', ['1', '2'], '-1']) {
      expect(issuesOf(StreamQuerySchema.safeParse({ after }))).toEqual(
        issuesOf(EventsQuerySchema.safeParse({ after })),
      );
    }
  });

  it('takes batch=1 and refuses any other batch value, naming the parameter', () => {
    expect(StreamQuerySchema.parse({ after: '3', batch: '1' })).toEqual({ after: 3, batch: '1' });
    expect(StreamQuerySchema.parse({ after: '3' })).toEqual({ after: 3 });
    for (const batch of ['0', 'true', '', ['1', '1']])
      expect(issuesOf(StreamQuerySchema.safeParse({ after: '3', batch }))).toEqual([
        { path: 'batch', message: expect.stringContaining('must be 1') },
      ]);
  });
});

describe('StreamMessageSchema', () => {
  const caughtUp = { type: 'caught-up', position: 7 } as const;
  const heartbeat = { type: 'heartbeat', position: 7, wallMillis: 1 } as const;

  it('reads a lone frame as itself and a batch as its frames in order', () => {
    expect(StreamMessageSchema.parse(caughtUp)).toEqual(caughtUp);
    expect(StreamMessageSchema.parse({ type: 'batch', frames: [heartbeat, caughtUp] })).toEqual({
      type: 'batch',
      frames: [heartbeat, caughtUp],
    });
  });

  it('refuses a batch holding an invalid frame, naming its index, and a batch of fewer than two frames', () => {
    expect(
      issuesOf(StreamMessageSchema.safeParse({ type: 'batch', frames: [caughtUp, { type: 'caught-up' }] })),
    ).toEqual([{ path: 'frames.1.position', message: expect.any(String) }]);
    expect(StreamMessageSchema.safeParse({ type: 'batch', frames: [caughtUp] }).success).toBe(false);
    expect(
      StreamMessageSchema.safeParse({ type: 'batch', frames: [{ type: 'batch', frames: [] }, caughtUp] }).success,
    ).toBe(false);
  });
});

describe('queryParamsOf', () => {
  it('keeps a parameter given once as a string and a repeated one as every value in order', () => {
    expect(queryParamsOf(new URLSearchParams('after=1&token=t&after=2&after=3'))).toEqual({
      after: ['1', '2', '3'],
      token: 't',
    });
  });
});

describe('AcquireBodySchema', () => {
  it('leaves a huge whole ttlMillis to the coordinator\'s configured bounds instead of calling it "not an integer"', () => {
    expect(AcquireBodySchema.safeParse({ requestId: 'r', ttlMillis: 1e20 }).success).toBe(true);
    expect(issuesOf(AcquireBodySchema.safeParse({ requestId: 'r', ttlMillis: 1500.5 }))).toEqual([
      { path: 'ttlMillis', message: 'must be an integer (milliseconds)' },
    ]);
  });
});
