import { describe, expect, it } from 'vitest';
import { assignRequestId, MAX_REQUEST_ID_LENGTH, requestIdFor, requestIdOf } from './request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdFor', () => {
  it.each(['req-1', 'b7c1e0f2-9a3d-4c55-8e2f-0123456789ab', 'trace:span/1+2=3@svc', 'x'.repeat(MAX_REQUEST_ID_LENGTH)])(
    "keeps the caller's id %s",
    (id) => {
      expect(requestIdFor(id)).toBe(id);
    },
  );

  it.each([
    ['no header', undefined],
    ['an empty one', ''],
    ['one over the length limit', 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1)],
    ['one with a space', 'req 1'],
    ['one with a line break', 'req\n1'],
    ['one with a quote', 'req"1'],
    ['the header sent twice', ['a', 'b']],
  ])('mints a fresh UUID for %s', (_name, header) => {
    expect(requestIdFor(header)).toMatch(UUID);
  });

  it('mints a different id each time', () => {
    expect(requestIdFor(undefined)).not.toBe(requestIdFor(undefined));
  });
});

describe('assignRequestId', () => {
  it("leaves the id on the Node request, where requestIdOf finds it directly or through Fastify's raw", () => {
    const raw: { headers: Record<string, string>; requestId?: string } = { headers: { 'x-request-id': 'from-caller' } };
    expect(assignRequestId(raw as never)).toBe('from-caller');
    expect(requestIdOf(raw)).toBe('from-caller');
    expect(requestIdOf({ raw })).toBe('from-caller');
    expect(requestIdOf({})).toBeUndefined();
  });
});
