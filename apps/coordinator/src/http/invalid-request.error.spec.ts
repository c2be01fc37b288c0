import { AcquireBodySchema, AgentRequestEnvelopeSchema, RenewBodySchema } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidRequestError, parseInput, safeParseInput } from './invalid-request.error.js';

describe('safeParseInput: the quick check answers only what zod would', () => {
  const cases: readonly [string, z.ZodType, unknown][] = [
    ['an acquire body', AcquireBodySchema, { requestId: 'r-1', ttlMillis: 10_000 }],
    ['a renew body', RenewBodySchema, { requestId: 'r-1', fence: 3 }],
    ['a frame envelope', AgentRequestEnvelopeSchema, { id: 1, op: 'renew', resource: 'db', body: { fence: 3 } }],
    ['an acquire body with an unknown key', AcquireBodySchema, { requestId: 'r-1', extra: 1 }],
    ['a renew body with a fractional fence', RenewBodySchema, { requestId: 'r-1', fence: 1.5 }],
    ['a ttl zod takes as a multiple of 1', AcquireBodySchema, { requestId: 'r-1', ttlMillis: 5e-324 }],
    ['an envelope without a body', AgentRequestEnvelopeSchema, { id: 1, op: 'renew', resource: 'db' }],
    ['not an object', AcquireBodySchema, ['r-1']],
  ];

  it.each(cases)('%s: the same success, data and issues as zod', (_label, schema, value) => {
    const quick = safeParseInput(schema, value);
    const zod = schema.safeParse(value);
    expect(quick.success).toBe(zod.success);
    if (quick.success && zod.success) expect(quick.data).toStrictEqual(zod.data);
    else expect(quick.error?.issues).toStrictEqual(zod.error?.issues);
  });

  it('a schema the quick check cannot compile (a refinement) is parsed by zod', () => {
    const schema = z.strictObject({ name: z.string().refine((s) => s !== 'x', 'must not be x') });
    expect(safeParseInput(schema, { name: 'y' })).toMatchObject({ success: true, data: { name: 'y' } });
    expect(() => parseInput(schema, { name: 'x' }, 'body')).toThrow(InvalidRequestError);
    expect(() => parseInput(schema, { name: 'x' }, 'body')).toThrow('name: must not be x');
  });
});
