/**
 * `POST /v1/resources/:resource/rejections/batch`: a gate's waiting refusals in one request,
 * each item decided by the single route's rules; one implausible item refuses all of it.
 */
import { REJECTION_BATCH_MAX_ITEMS } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { type CoordinatorHttp, coordinatorHttp } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface EventsBody {
  events: { position: number; event: { type: string; data: Record<string, unknown> } }[];
  head: number;
}

let app: RunningCoordinator;
let agentA: CoordinatorHttp;
let agentB: CoordinatorHttp;
let gate: CoordinatorHttp;
let viewer: CoordinatorHttp;
let counter = 0;
const fresh = (): string => `deploy-batch-${++counter}`;

beforeAll(async () => {
  app = await startCoordinator({ env: { LEASE_FENCE_TTL_MILLIS: '30000' } });
  agentA = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
  agentB = coordinatorHttp(app.url, TEST_TOKENS.agentB.token);
  gate = coordinatorHttp(app.url, TEST_TOKENS.gate.token);
  viewer = coordinatorHttp(app.url, TEST_TOKENS.viewer.token);
});

afterAll(async () => {
  await app?.cleanup();
});

/** Two generations on `resource`: agent-b's fence (released), then agent-a's (current). */
const twoGenerations = async (resource: string): Promise<{ older: number; newer: number }> => {
  const older = await agentB.post<{ grant: { fence: number } }>(`/v1/leases/${resource}/acquire`, {
    requestId: `req-${++counter}`,
  });
  await agentB.post(`/v1/leases/${resource}/release`, { fence: older.body.grant.fence });
  const newer = await agentA.post<{ grant: { fence: number } }>(`/v1/leases/${resource}/acquire`, {
    requestId: `req-${++counter}`,
  });
  return { older: older.body.grant.fence, newer: newer.body.grant.fence };
};
/** agent-b's late write under the older fence, refused at agent-a's newer floor. */
const item = (seq: number, fences: { older: number; newer: number }) => ({
  seq,
  kind: 'stale',
  rejected: { holderId: 'agent-b', fence: fences.older },
  current: { holderId: 'agent-a', fence: fences.newer },
  wallMillis: 1_700_000_000_000,
});
const eventsAfter = async (position: number) =>
  (await viewer.get<EventsBody>(`/v1/events?after=${position}`)).body.events.map((e) => e.event);
const rejectionsTotal = async (): Promise<number> =>
  Number(/^lease_fence_rejections_total (\d+)$/m.exec((await viewer.get('/metrics')).text)?.[1]);

describe('POST /v1/resources/:resource/rejections/batch', () => {
  it('records every item with 202 and one outcome each; resent items are duplicates, a gap is RejectionsMissing first', async () => {
    // Arrange: seq 1 and 2 recorded already (the gate resends them: their reply was lost)
    const resource = fresh();
    const fences = await twoGenerations(resource);
    await gate.post(`/v1/resources/${resource}/rejections/batch`, { items: [item(1, fences), item(2, fences)] });
    const headBefore = await viewer.head();
    const reportsBefore = await rejectionsTotal();

    // Act: 1 and 2 again, 3, then 6 (4 and 5 never reached the outbox)
    const reply = await gate.post(`/v1/resources/${resource}/rejections/batch`, {
      items: [item(1, fences), item(2, fences), item(3, fences), item(6, fences)],
    });

    // Assert
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({
      ok: true,
      items: [
        { ok: true, duplicate: true },
        { ok: true, duplicate: true },
        { ok: true, duplicate: false },
        { ok: true, duplicate: false },
      ],
    });
    expect(await eventsAfter(headBefore)).toEqual([
      expect.objectContaining({ type: 'FenceRejected', data: expect.objectContaining({ resource, seq: 3 }) }),
      expect.objectContaining({
        type: 'RejectionsMissing',
        data: expect.objectContaining({ resource, gateId: 'gate-1', fromSeq: 4, throughSeq: 5, reportedSeq: 6 }),
      }),
      expect.objectContaining({ type: 'FenceRejected', data: expect.objectContaining({ resource, seq: 6 }) }),
    ]);
    expect(await rejectionsTotal()).toBe(reportsBefore + 4); // reports, as four single requests count them
  });

  it('answers a seq recorded with other content as seq-conflict for that item only, recording the others', async () => {
    const resource = fresh();
    const fences = await twoGenerations(resource);
    await gate.post(`/v1/resources/${resource}/rejections`, { ...item(1, fences), resource });
    const headBefore = await viewer.head();

    const conflicting = { ...item(1, fences), rejected: { holderId: 'agent-a', fence: fences.older } };
    const reply = await gate.post(`/v1/resources/${resource}/rejections/batch`, {
      items: [conflicting, item(2, fences)],
    });

    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({
      ok: true,
      items: [
        { ok: false, reason: 'seq-conflict', message: expect.stringContaining('seq 1') },
        { ok: true, duplicate: false },
      ],
    });
    expect(await eventsAfter(headBefore)).toEqual([
      expect.objectContaining({ type: 'FenceRejected', data: expect.objectContaining({ resource, seq: 2 }) }),
    ]);
  });

  it('refuses the whole batch with 400 naming items.<i>.<field> when one item cannot be true, appending nothing', async () => {
    const resource = fresh();
    const fences = await twoGenerations(resource);
    const headBefore = await viewer.head();

    const neverIssued = { ...item(3, fences), current: { holderId: 'agent-a', fence: 900_000_000 } };
    const reply = await gate.post(`/v1/resources/${resource}/rejections/batch`, {
      items: [item(1, fences), item(2, fences), neverIssued],
    });

    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      error: 'invalid-request',
      issues: [{ path: 'items.2.current.fence', message: expect.stringContaining('never issued') }],
    });
    expect(await viewer.head()).toBe(headBefore);
  });

  it.each([
    ['no items', () => ({ items: [] }), 'items'],
    [
      'seqs not ascending',
      (f: { older: number; newer: number }) => ({ items: [item(2, f), item(1, f)] }),
      'items.1.seq',
    ],
    [
      `more than ${REJECTION_BATCH_MAX_ITEMS} items`,
      (f: { older: number; newer: number }) => ({
        items: Array.from({ length: REJECTION_BATCH_MAX_ITEMS + 1 }, (_, index) => item(index + 1, f)),
      }),
      'items',
    ],
    [
      'a malformed item',
      (f: { older: number; newer: number }) => ({ items: [item(1, f), { ...item(2, f), seq: 0 }] }),
      'items.1.seq',
    ],
    [
      'a resource in an item',
      (f: { older: number; newer: number }) => ({ items: [{ ...item(1, f), resource: 'x' }] }),
      'items.0.resource',
    ],
  ])('refuses %s with 400 naming the field, appending nothing', async (_what, body, path) => {
    const resource = fresh();
    const fences = await twoGenerations(resource);
    const headBefore = await viewer.head();

    const reply = await gate.post(`/v1/resources/${resource}/rejections/batch`, body(fences));

    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid-request', issues: [expect.objectContaining({ path })] });
    expect(await viewer.head()).toBe(headBefore);
  });

  it('refuses an agent token with 403', async () => {
    const resource = fresh();
    const fences = await twoGenerations(resource);
    const reply = await agentA.post(`/v1/resources/${resource}/rejections/batch`, { items: [item(1, fences)] });
    expect(reply.status).toBe(403);
  });
});
