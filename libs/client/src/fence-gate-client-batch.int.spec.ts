import { REJECTION_BATCH_MAX_BODY_BYTES, REJECTION_BATCH_MAX_ITEMS } from '@lease-fence/protocol';
import { MAX_ID_LENGTH, type RejectionRecord } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

const RESOURCE = 'deploy-slot-a';
const refusal = (seq: number, holderLength = 8): RejectionRecord => ({
  seq,
  resource: RESOURCE,
  kind: 'stale',
  rejected: { holderId: 'a'.repeat(holderLength), fence: 3 },
  current: { holderId: 'b'.repeat(holderLength), fence: 5 },
});

describe('FenceGateClient.reportRejectionBatch', () => {
  let double: CoordinatorTestDouble;
  let client: FenceGateClient;
  beforeEach(async () => {
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] }],
    });
    client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
  });
  afterEach(async () => {
    await double.close();
  });

  it(`sends at most ${REJECTION_BATCH_MAX_ITEMS} refusals, answering one outcome per refusal sent`, async () => {
    const outcomes = await client.reportRejectionBatch(
      RESOURCE,
      Array.from({ length: REJECTION_BATCH_MAX_ITEMS + 10 }, (_, index) => refusal(index + 1)),
    );
    expect(outcomes).toHaveLength(REJECTION_BATCH_MAX_ITEMS);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual(
      Array.from({ length: REJECTION_BATCH_MAX_ITEMS }, (_, index) => index + 1),
    );
  });

  it('sends fewer refusals with the longest holder ids, keeping the body within REJECTION_BATCH_MAX_BODY_BYTES', async () => {
    const outcomes = await client.reportRejectionBatch(
      RESOURCE,
      Array.from({ length: REJECTION_BATCH_MAX_ITEMS }, (_, index) => refusal(index + 1, MAX_ID_LENGTH)),
    );
    const sent = double.handled.find((request) => request.route === 'rejections-batch')!;
    expect(outcomes.length).toBeLessThan(REJECTION_BATCH_MAX_ITEMS);
    expect(outcomes.length).toBe((sent.body as { items: unknown[] }).items.length);
    expect(Buffer.byteLength(JSON.stringify(sent.body))).toBeLessThanOrEqual(REJECTION_BATCH_MAX_BODY_BYTES);
  });
});
