import { describe, expect, it } from 'vitest';
import {
  REJECTION_BATCH_MAX_BODY_BYTES,
  REJECTION_BATCH_MAX_ITEMS,
  RejectionBatchBodySchema,
  type RejectionBatchItem,
} from './index.js';

const item = (seq: number): RejectionBatchItem => ({
  seq,
  kind: 'stale',
  rejected: { holderId: 'agent-7f3c2a', fence: 1_000_041 },
  current: { holderId: 'agent-91b0de', fence: 1_000_042 },
  wallMillis: 1_764_800_000_000,
});
const issuesOf = (body: unknown) =>
  RejectionBatchBodySchema.safeParse(body).error?.issues.map((issue) => ({
    path: issue.path.join('.'),
    message: issue.message,
  }));

describe('RejectionBatchBodySchema', () => {
  it(`accepts 1 to ${REJECTION_BATCH_MAX_ITEMS} refusals with seqs strictly ascending (gaps allowed)`, () => {
    expect(RejectionBatchBodySchema.safeParse({ items: [item(1)] }).success).toBe(true);
    expect(RejectionBatchBodySchema.safeParse({ items: [item(1), item(5), item(6)] }).success).toBe(true);
    const full = Array.from({ length: REJECTION_BATCH_MAX_ITEMS }, (_, index) => item(index + 1));
    expect(RejectionBatchBodySchema.safeParse({ items: full }).success).toBe(true);
  });

  it('refuses no items, too many, and a seq not above the one before it, naming items.<i>.seq', () => {
    expect(issuesOf({ items: [] })).toEqual([{ path: 'items', message: 'must hold at least one refusal' }]);
    const tooMany = Array.from({ length: REJECTION_BATCH_MAX_ITEMS + 1 }, (_, index) => item(index + 1));
    expect(issuesOf({ items: tooMany })).toEqual([
      { path: 'items', message: `must hold at most ${REJECTION_BATCH_MAX_ITEMS} refusals` },
    ]);
    expect(issuesOf({ items: [item(1), item(3), item(3)] })).toEqual([
      { path: 'items.2.seq', message: "must be above the previous item's seq 3: seqs strictly ascending" },
    ]);
  });

  it('refuses a resource inside an item: the path names it', () => {
    expect(issuesOf({ items: [{ ...item(1), resource: 'slot' }] })).toEqual([
      expect.objectContaining({ path: 'items.0' }),
    ]);
  });

  it(`fits ${REJECTION_BATCH_MAX_ITEMS} typical refusals in REJECTION_BATCH_MAX_BODY_BYTES`, () => {
    const full = { items: Array.from({ length: REJECTION_BATCH_MAX_ITEMS }, (_, index) => item(index + 1)) };
    expect(Buffer.byteLength(JSON.stringify(full))).toBeLessThanOrEqual(REJECTION_BATCH_MAX_BODY_BYTES);
  });
});
