/**
 * Black-box tests of the coordinator's HTTP API against the started, built app: every route and
 * status, auth, and cross-holder refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call, type CoordinatorHttp, coordinatorHttp } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface GrantBody {
  ok: true;
  grant: {
    resource: string;
    holderId: string;
    fence: number;
    ttlMillis: number;
    requestId: string;
    coordinatorExpiresAt: { millis: number; domain: string };
  };
}
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
/** A resource name no other test uses. */
const fresh = (prefix = 'res'): string => `${prefix}-${++counter}`;

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

const acquire = (client: CoordinatorHttp, resource: string, requestId = `req-${++counter}`, ttlMillis?: number) =>
  client.post<GrantBody>(`/v1/leases/${encodeURIComponent(resource)}/acquire`, {
    requestId,
    ...(ttlMillis === undefined ? {} : { ttlMillis }),
  });

/** Resolves once the log holds a `LeaseExpired` for `resource` after position `after` (the expiry sweep ran). */
async function expiredInLog(resource: string, after: number): Promise<void> {
  for (;;) {
    const events = await viewer.get<EventsBody>(`/v1/events?after=${after}`);
    if (events.body.events.some((e) => e.event.type === 'LeaseExpired' && e.event.data['resource'] === resource))
      return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('POST /v1/leases/:resource/acquire', () => {
  it('grants the lease to the authenticated agent with the default TTL', async () => {
    // Act
    const reply = await acquire(agentA, fresh());

    // Assert
    expect(reply.status).toBe(200);
    expect(reply.body.ok).toBe(true);
    expect(reply.body.grant).toMatchObject({ holderId: 'agent-a', ttlMillis: 30_000 });
    expect(reply.body.grant.fence).toBeGreaterThan(0);
    expect(reply.body.grant.coordinatorExpiresAt.domain).toEqual(expect.any(String));
  });

  it('refuses a holderId in the body: the holder is always the authenticated caller', async () => {
    const reply = await agentA.post(`/v1/leases/${fresh()}/acquire`, { requestId: 'r-holder', holderId: 'agent-b' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ issues: [{ path: 'holderId' }] });
  });

  it('answers a retry with the same requestId with the same grant and no new fence', async () => {
    // Arrange
    const resource = fresh();
    const first = await acquire(agentA, resource, 'retry-1');

    // Act
    const retry = await acquire(agentA, resource, 'retry-1');

    // Assert
    expect(retry.status).toBe(200);
    expect(retry.body.grant.fence).toBe(first.body.grant.fence);
  });

  it('refuses another holder with 409 held, naming the holder and when to retry', async () => {
    // Arrange
    const resource = fresh();
    await acquire(agentA, resource);

    // Act
    const reply = await acquire(agentB, resource);

    // Assert
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ ok: false, reason: 'held', heldBy: 'agent-a', retryAfterMillis: expect.any(Number) });
    expect((reply.body as unknown as { retryAfterMillis: number }).retryAfterMillis).toBeGreaterThan(0);
  });

  it('refuses the holder a second acquisition with 409 already-held and its fence, never a second fence', async () => {
    const resource = fresh();
    const first = await acquire(agentA, resource);
    const reply = await acquire(agentA, resource);
    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({
      ok: false,
      reason: 'already-held',
      heldBy: 'agent-a',
      fence: first.body.grant.fence,
    });
  });

  it('mints a strictly higher fence for the next holder after a release', async () => {
    // Arrange
    const resource = fresh();
    const first = await acquire(agentA, resource);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: first.body.grant.fence });

    // Act
    const second = await acquire(agentB, resource);

    // Assert
    expect(second.status).toBe(200);
    expect(second.body.grant.holderId).toBe('agent-b');
    expect(second.body.grant.fence).toBeGreaterThan(first.body.grant.fence);
  });

  it('answers 410 expired to a retried requestId whose lease has ended, instead of a fresh grant', async () => {
    const resource = fresh();
    const first = await acquire(agentA, resource, 'ended-1');
    await agentA.post(`/v1/leases/${resource}/release`, { fence: first.body.grant.fence });
    const retry = await acquire(agentA, resource, 'ended-1');
    expect(retry.status).toBe(410);
    expect(retry.body).toMatchObject({ ok: false, reason: 'expired', fence: first.body.grant.fence });
  });

  it('accepts a resource name with a slash when it is URL-encoded', async () => {
    const reply = await acquire(agentA, 'repo:web/deploy-slot');
    expect(reply.status).toBe(200);
    expect(reply.body.grant.resource).toBe('repo:web/deploy-slot');
  });
});

describe('POST /v1/leases/:resource/renew', () => {
  it("extends the holder's lease and keeps the fence", async () => {
    // Arrange
    const resource = fresh();
    const granted = await acquire(agentA, resource, undefined, 5_000);

    // Act
    const renewed = await agentA.post<GrantBody>(`/v1/leases/${resource}/renew`, {
      requestId: 'renew-1',
      fence: granted.body.grant.fence,
      ttlMillis: 20_000,
    });

    // Assert
    expect(renewed.status).toBe(200);
    expect(renewed.body.grant).toMatchObject({
      fence: granted.body.grant.fence,
      holderId: 'agent-a',
      ttlMillis: 20_000,
    });
    expect(renewed.body.grant.coordinatorExpiresAt.millis).toBeGreaterThan(
      granted.body.grant.coordinatorExpiresAt.millis,
    );
  });

  it("refuses an agent renewing another holder's lease with 409 not-holder", async () => {
    const resource = fresh();
    const granted = await acquire(agentA, resource);
    const reply = await agentB.post(`/v1/leases/${resource}/renew`, {
      requestId: 'steal',
      fence: granted.body.grant.fence,
    });
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ ok: false, reason: 'not-holder' });
  });

  it('answers 410 expired for a generation that has ended, never resurrecting it', async () => {
    const resource = fresh();
    const granted = await acquire(agentA, resource);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });
    const reply = await agentA.post(`/v1/leases/${resource}/renew`, {
      requestId: 'late',
      fence: granted.body.grant.fence,
    });
    expect(reply.status).toBe(410);
    expect(reply.body).toMatchObject({ ok: false, reason: 'expired' });
  });
});

describe('renew and release judge a fence by one rule', () => {
  it('answer 410 expired alike for a lease that expired and was swept', async () => {
    // Given a 100 ms lease that expired, and the expiry sweep recorded it
    const resource = fresh();
    const headBefore = await viewer.head();
    const granted = await acquire(agentA, resource, undefined, 100);
    await expiredInLog(resource, headBefore);

    // When its holder renews and releases it late
    const renewed = await agentA.post(`/v1/leases/${resource}/renew`, {
      requestId: 'late',
      fence: granted.body.grant.fence,
    });
    const released = await agentA.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });

    // Then both say that generation has ended
    expect([renewed.status, renewed.body]).toEqual([410, { ok: false, reason: 'expired' }]);
    expect([released.status, released.body]).toEqual([410, { ok: false, reason: 'expired' }]);
  });

  it('answer 410 expired alike for a generation another holder released', async () => {
    const resource = fresh();
    const granted = await acquire(agentA, resource);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });
    const renewed = await agentB.post(`/v1/leases/${resource}/renew`, {
      requestId: 'after-release',
      fence: granted.body.grant.fence,
    });
    const released = await agentB.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });
    expect([renewed.status, renewed.body]).toEqual([410, { ok: false, reason: 'expired' }]);
    expect([released.status, released.body]).toEqual([410, { ok: false, reason: 'expired' }]);
  });

  it.each([
    ['a resource that never had a lease', false],
    ['a fence issued for another resource', true],
  ])('answer 409 not-holder alike for %s', async (_what, otherHasTheFence) => {
    // Arrange: the fence presented is the one another resource got, or 1 on a fresh resource
    const fence = otherHasTheFence ? (await acquire(agentA, fresh())).body.grant.fence : 1;
    const resource = fresh('never-leased');

    // Act
    const renewed = await agentA.post(`/v1/leases/${resource}/renew`, { requestId: 'stray', fence });
    const released = await agentA.post(`/v1/leases/${resource}/release`, { fence });

    // Assert
    expect([renewed.status, renewed.body]).toEqual([409, { ok: false, reason: 'not-holder' }]);
    expect([released.status, released.body]).toEqual([409, { ok: false, reason: 'not-holder' }]);
  });
});

describe('POST /v1/leases/:resource/release', () => {
  it("releases the holder's lease", async () => {
    const resource = fresh();
    const granted = await acquire(agentA, resource);
    const reply = await agentA.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true });
  });

  it('answers 200 to the same release sent twice (a retry after a lost reply), and logs one LeaseReleased', async () => {
    // Given agent-a's lease, released once
    const resource = fresh();
    const headBefore = await viewer.head();
    const granted = await acquire(agentA, resource);
    const body = { fence: granted.body.grant.fence };
    const first = await agentA.post(`/v1/leases/${resource}/release`, body);
    // When the same body is sent again
    const retry = await agentA.post(`/v1/leases/${resource}/release`, body);
    // Then both are 200 ok, and the log holds one release of that generation; renewing it is still refused
    expect([first.status, first.body]).toEqual([200, { ok: true }]);
    expect([retry.status, retry.body]).toEqual([200, { ok: true }]);
    const events = await viewer.get<EventsBody>(`/v1/events?after=${headBefore}`);
    const releases = events.body.events.filter(
      (e) => e.event.type === 'LeaseReleased' && e.event.data['resource'] === resource,
    );
    expect(releases).toHaveLength(1);
    const renewed = await agentA.post(`/v1/leases/${resource}/renew`, { requestId: 'after-release', ...body });
    expect([renewed.status, renewed.body]).toEqual([410, { ok: false, reason: 'expired' }]);
  });

  it("refuses an agent releasing another holder's lease with 409, and the lease stays held", async () => {
    // Arrange
    const resource = fresh();
    const granted = await acquire(agentA, resource);

    // Act
    const reply = await agentB.post(`/v1/leases/${resource}/release`, { fence: granted.body.grant.fence });

    // Assert
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ ok: false, reason: 'not-holder' });
    const leases = await viewer.get<{ leases: { resource: string; holderId: string }[] }>('/v1/leases');
    expect(leases.body.leases).toContainEqual(expect.objectContaining({ resource, holderId: 'agent-a' }));
  });
});

describe('gate reports', () => {
  /** Two generations on `resource`: agent-b's fence (released), then agent-a's (current). */
  const twoGenerations = async (resource: string): Promise<{ older: number; newer: number }> => {
    const older = await acquire(agentB, resource);
    await agentB.post(`/v1/leases/${resource}/release`, { fence: older.body.grant.fence });
    const newer = await acquire(agentA, resource);
    return { older: older.body.grant.fence, newer: newer.body.grant.fence };
  };
  /** agent-b's late write under the older fence, refused at agent-a's newer floor. */
  const rejection = (resource: string, seq: number, fences = { older: 3, newer: 4 }) => ({
    seq,
    resource,
    kind: 'stale',
    rejected: { holderId: 'agent-b', fence: fences.older },
    current: { holderId: 'agent-a', fence: fences.newer },
    wallMillis: 1_700_000_000_000,
  });

  it('records a rejection as FenceRejected with 202, and a repeated seq as a duplicate that appends nothing', async () => {
    // Arrange
    const resource = fresh('deploy');
    const fences = await twoGenerations(resource);
    const headBefore = await viewer.head();

    // Act
    const first = await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));
    const headAfterFirst = await viewer.head();
    const repeat = await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));

    // Assert
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ ok: true, duplicate: false });
    expect(repeat.status).toBe(202);
    expect(repeat.body).toEqual({ ok: true, duplicate: true });
    expect(headAfterFirst).toBe(headBefore + 1);
    expect(await viewer.head()).toBe(headAfterFirst);
    const events = await viewer.get<EventsBody>(`/v1/events?after=${headBefore}`);
    expect(events.body.events.map((e) => e.event)).toEqual([
      expect.objectContaining({
        type: 'FenceRejected',
        data: expect.objectContaining({
          resource,
          gateId: 'gate-1',
          seq: 1,
          kind: 'stale',
          gateWallMillis: 1_700_000_000_000,
        }),
      }),
    ]);
  });

  it("counts a refusal reported twice once in lease_fence_rejections_recorded_total (the log's count), twice in lease_fence_rejections_total (reports)", async () => {
    // Arrange
    const resource = fresh('deploy');
    const fences = await twoGenerations(resource);
    const counter = async (name: string): Promise<number> => {
      const value = new RegExp(`^${name} (\\d+)$`, 'm').exec((await viewer.get('/metrics')).text)?.[1];
      if (value === undefined) throw new Error(`/metrics has no ${name}`);
      return Number(value);
    };
    const [reportsBefore, recordedBefore] = [
      await counter('lease_fence_rejections_total'),
      await counter('lease_fence_rejections_recorded_total'),
    ];

    // Act: a gate that crashed before its outbox saw the reply reports seq 1 again
    await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));
    await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));

    // Assert
    expect(await counter('lease_fence_rejections_total')).toBe(reportsBefore + 2);
    expect(await counter('lease_fence_rejections_recorded_total')).toBe(recordedBefore + 1);
  });

  it('refuses a repeated seq with other content with 409 seq-conflict, keeping the recorded report and appending nothing', async () => {
    // Arrange
    const resource = fresh('deploy');
    const fences = await twoGenerations(resource);
    await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));
    const headBefore = await viewer.head();

    // Act: the same seq, now claiming agent-a's own older write
    const conflicting = { ...rejection(resource, 1, fences), rejected: { holderId: 'agent-a', fence: fences.older } };
    const reply = await gate.post(`/v1/resources/${resource}/rejections`, conflicting);

    // Assert
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ ok: false, reason: 'seq-conflict', message: expect.stringContaining('seq 1') });
    expect(await viewer.head()).toBe(headBefore);
  });

  it('records a stale rejection with the same holder on both sides: its own in-flight write under its previous fence', async () => {
    const resource = fresh('deploy');
    const older = await acquire(agentA, resource);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: older.body.grant.fence });
    const newer = await acquire(agentA, resource);
    const reply = await gate.post(`/v1/resources/${resource}/rejections`, {
      seq: 1,
      resource,
      kind: 'stale',
      rejected: { holderId: 'agent-a', fence: older.body.grant.fence },
      current: { holderId: 'agent-a', fence: newer.body.grant.fence },
    });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ ok: true, duplicate: false });
  });

  it('records a report that skips seqs as RejectionsMissing before its FenceRejected, counts the missing seqs, and logs them', async () => {
    // Arrange: seq 1 is recorded.
    const resource = fresh('deploy');
    const fences = await twoGenerations(resource);
    await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences));
    const missingTotal = async (): Promise<number> =>
      Number(/^lease_fence_rejections_missing_total (\d+)/m.exec((await viewer.get('/metrics')).text)?.[1]);
    const missingBefore = await missingTotal();
    const headBefore = await viewer.head();

    // Act: the gate's next report is seq 4; seqs 2 and 3 never arrived.
    const reply = await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 4, fences));
    const next = await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 5, fences));

    // Assert
    expect(reply.body).toEqual({ ok: true, duplicate: false });
    expect(next.body).toEqual({ ok: true, duplicate: false });
    const events = await viewer.get<EventsBody>(`/v1/events?after=${headBefore}`);
    expect(events.body.events.map((e) => e.event)).toEqual([
      expect.objectContaining({
        type: 'RejectionsMissing',
        data: expect.objectContaining({ resource, gateId: 'gate-1', fromSeq: 2, throughSeq: 3, reportedSeq: 4 }),
      }),
      expect.objectContaining({ type: 'FenceRejected', data: expect.objectContaining({ resource, seq: 4 }) }),
      expect.objectContaining({ type: 'FenceRejected', data: expect.objectContaining({ resource, seq: 5 }) }),
    ]);
    expect(await missingTotal()).toBe(missingBefore + 2);
    await app.waitForLog(
      (line) => line.msg?.startsWith(`refusals missing: gate gate-1 on ${resource} reported #4, but #2..#3`) === true,
    );
  });

  it('lists recorded rejections at GET /v1/rejections for any token', async () => {
    const resource = fresh('deploy');
    await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 7, await twoGenerations(resource)));
    for (const reader of [viewer, agentA, gate]) {
      const reply = await reader.get<{ rejections: { resource: string; seq: number; position: number }[] }>(
        '/v1/rejections',
      );
      expect(reply.status).toBe(200);
      expect(reply.body.rejections).toContainEqual(
        expect.objectContaining({ resource, seq: 7, position: expect.any(Number) }),
      );
    }
  });

  it('records an admit as FenceAdmitted with 202', async () => {
    const { fence } = (await acquire(agentA, 'db')).body.grant;
    const headBefore = await viewer.head();
    const reply = await gate.post('/v1/resources/db/admit', { holderId: 'agent-a', fence });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ ok: true });
    const events = await viewer.get<EventsBody>(`/v1/events?after=${headBefore}`);
    expect(events.body.events.map((e) => e.event)).toEqual([
      expect.objectContaining({
        type: 'FenceAdmitted',
        data: expect.objectContaining({ resource: 'db', gateId: 'gate-1', holderId: 'agent-a', fence }),
      }),
    ]);
  });

  it("answers GET gate-recovery with the latest grant (holder while current) and the gate's last recorded refusal seq, appending nothing", async () => {
    // Arrange: agent-b's fence released, agent-a's current, refusal #1 recorded for this gate
    const resource = fresh('deploy');
    const never = fresh('deploy');
    const fences = await twoGenerations(resource);
    expect((await gate.post(`/v1/resources/${resource}/rejections`, rejection(resource, 1, fences))).status).toBe(202);
    const headBefore = await viewer.head();

    // Act
    const current = await gate.get(`/v1/resources/${resource}/gate-recovery`);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: fences.newer });
    const ended = await gate.get(`/v1/resources/${resource}/gate-recovery`);
    const neverGranted = await gate.get(`/v1/resources/${never}/gate-recovery`);

    // Assert
    expect(current.status).toBe(200);
    expect(current.body).toEqual({
      ok: true,
      resource,
      latestGrant: { holderId: 'agent-a', fence: fences.newer },
      lastRejectionSeq: 1,
    });
    expect(ended.body).toMatchObject({ latestGrant: { holderId: null, fence: fences.newer }, lastRejectionSeq: 1 });
    expect(neverGranted.body).toEqual({ ok: true, resource: never, latestGrant: null, lastRejectionSeq: 0 });
    expect(await viewer.head()).toBe(headBefore + 1); // the release only
  });

  it('refuses gate-recovery to a gate outside its patterns and to an agent with 403, and an unknown query with 400', async () => {
    expect((await gate.get('/v1/resources/payments/gate-recovery')).status).toBe(403);
    const agent = await call(app.url, 'GET', '/v1/resources/deploy-x/gate-recovery', {
      token: TEST_TOKENS.agentA.token,
    });
    expect(agent.status).toBe(403);
    const query = await gate.get('/v1/resources/deploy-x/gate-recovery?since=1');
    expect(query.status).toBe(400);
  });

  it('refuses a gate reporting for a resource outside its patterns with 403', async () => {
    const reply = await gate.post('/v1/resources/payments/rejections', rejection('payments', 1));
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining('payments') });
  });

  it.each([
    ['an agent', TEST_TOKENS.agentA.token],
    ['a viewer', TEST_TOKENS.viewer.token],
  ])('refuses %s reporting a rejection with 403', async (_who, token) => {
    const reply = await call(app.url, 'POST', '/v1/resources/deploy-x/rejections', {
      token,
      json: rejection('deploy-x', 1),
    });
    expect(reply.status).toBe(403);
  });
});

describe('gate status', () => {
  const status = (resource: string, refusals: number) => ({
    resources: [{ resource, floor: { holderId: 'agent-a', fence: 3 }, outboxBacklog: 0, refusals, invalidTokens: 1 }],
    reportedAtMillis: 1_700_000_000_000,
  });
  interface GatesBody {
    nowMillis: number;
    gates: { gateId: string; lastContactMillis: number; resources: Record<string, unknown>[] }[];
  }

  it('keeps the latest status a gate reports (202), lists it at GET /v1/gates for a viewer, and appends nothing', async () => {
    const resource = fresh('deploy');
    const headBefore = await viewer.head();
    await gate.post('/v1/gates/status', status(resource, 1));
    const reply = await gate.post('/v1/gates/status', status(resource, 4));

    const listed = await viewer.get<GatesBody>('/v1/gates');

    expect(reply.status).toBe(202);
    expect(listed.status).toBe(200);
    const gate1 = listed.body.gates.find((g) => g.gateId === 'gate-1');
    expect(gate1?.resources.filter((r) => r['resource'] === resource)).toEqual([
      {
        resource,
        floor: { holderId: 'agent-a', fence: 3 },
        outboxBacklog: 0,
        refusals: 4,
        invalidTokens: 1,
        reportedAtMillis: 1_700_000_000_000,
        lastContactMillis: expect.any(Number),
      },
    ]);
    expect(listed.body.nowMillis).toBeGreaterThanOrEqual(gate1!.lastContactMillis);
    expect(await viewer.head()).toBe(headBefore);
  });

  it('refuses a status naming a resource outside the gate token with 403, and a malformed one with 400 naming the field', async () => {
    const outside = await gate.post('/v1/gates/status', status('payments', 1));
    const malformed = await gate.post('/v1/gates/status', { ...status(fresh('deploy'), 1), reportedAtMillis: 'now' });

    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining('payments') });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toContain('reportedAtMillis');
    const listed = await viewer.get<GatesBody>('/v1/gates');
    expect(JSON.stringify(listed.body)).not.toContain('payments');
  });

  it('refuses an agent or a viewer reporting a gate status with 403', async () => {
    for (const token of [TEST_TOKENS.agentA.token, TEST_TOKENS.viewer.token]) {
      const reply = await call(app.url, 'POST', '/v1/gates/status', { token, json: status('deploy-x', 1) });
      expect(reply.status).toBe(403);
    }
  });
});

describe('auth', () => {
  it('answers a missing token with 401 and a Bearer challenge', async () => {
    const reply = await call(app.url, 'POST', `/v1/leases/${fresh()}/acquire`, { json: { requestId: 'x' } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    expect(reply.body).toMatchObject({ error: 'unauthenticated' });
  });

  it('answers an unknown token with 401', async () => {
    const reply = await call(app.url, 'GET', '/v1/leases', { token: 'not-a-token' });
    expect(reply.status).toBe(401);
  });

  it('answers a non-Bearer Authorization header with 401', async () => {
    const reply = await call(app.url, 'GET', '/v1/leases', {
      headers: { authorization: `Basic ${TEST_TOKENS.viewer.token}` },
    });
    expect(reply.status).toBe(401);
  });

  it.each([
    ['a viewer', TEST_TOKENS.viewer.token],
    ['a gate', TEST_TOKENS.gate.token],
  ])('refuses %s acquiring a lease with 403', async (_who, token) => {
    const reply = await call(app.url, 'POST', `/v1/leases/${fresh()}/acquire`, { token, json: { requestId: 'x' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining('agent') });
  });

  it.each([
    ['malformed JSON', '{"requestId": '],
    ['a JSON null', 'null'],
    ['a body over the size limit', JSON.stringify({ requestId: 'r', pad: 'p'.repeat(20_000) })],
  ])(
    'answers a bad token with %s with 401 before reading the body, so validation cannot be probed without a token',
    async (_name, raw) => {
      for (const token of ['not-a-token', undefined]) {
        const reply = await call(app.url, 'POST', `/v1/leases/${fresh()}/acquire`, {
          raw,
          ...(token === undefined ? {} : { token }),
        });
        expect(reply.status, reply.text).toBe(401);
        expect(reply.body).toMatchObject({ error: 'unauthenticated' });
      }
    },
  );

  it.each(['/v1/leases', '/v1/events', '/v1/rejections', '/metrics'])(
    'lets every role read %s and refuses no token',
    async (path) => {
      for (const token of [TEST_TOKENS.viewer.token, TEST_TOKENS.agentA.token, TEST_TOKENS.gate.token]) {
        expect((await call(app.url, 'GET', path, { token })).status).toBe(200);
      }
      expect((await call(app.url, 'GET', path)).status).toBe(401);
    },
  );
});

describe('reads', () => {
  it('lists current holders at GET /v1/leases', async () => {
    const resource = fresh();
    const granted = await acquire(agentB, resource);
    const reply = await viewer.get<{ leases: unknown[] }>('/v1/leases');
    expect(reply.status).toBe(200);
    expect(reply.body.leases).toContainEqual({
      resource,
      holderId: 'agent-b',
      fence: granted.body.grant.fence,
      ttlMillis: 30_000,
      requestId: granted.body.grant.requestId,
      coordinatorExpiresAt: granted.body.grant.coordinatorExpiresAt,
      inGrace: false,
    });
  });

  it('pages the history at GET /v1/events by position, with the head', async () => {
    // Arrange
    const resource = fresh();
    await acquire(agentA, resource);
    const all = await viewer.get<EventsBody>('/v1/events');

    // Act
    const page = await viewer.get<EventsBody>('/v1/events?after=1&limit=2');

    // Assert
    expect(all.body.events[0]).toMatchObject({ position: 1, event: { type: 'CoordinatorStarted' } });
    expect(all.body.head).toBe(all.body.events.at(-1)?.position);
    expect(page.status).toBe(200);
    expect(page.body.events.map((e) => e.position)).toEqual([2, 3]);
    expect(page.body.head).toBeGreaterThanOrEqual(all.body.head);
  });
});

describe('health, metrics and docs', () => {
  it('answers /healthz and /readyz without a token once recovery has finished', async () => {
    expect((await call(app.url, 'GET', '/healthz')).status).toBe(200);
    const ready = await call(app.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, status: 'ready' });
  });

  it('exposes grants, renewals, denials by reason, rejections, append latency, batch sizes and recovery duration at /metrics', async () => {
    // Arrange: at least one grant and one 'held' denial
    const resource = fresh();
    await acquire(agentA, resource);
    await acquire(agentB, resource);

    // Act
    const reply = await viewer.get('/metrics');

    // Assert
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('text/plain');
    for (const series of [
      /^lease_fence_grants_total [1-9]/m,
      /^lease_fence_renewals_total \d/m,
      /^lease_fence_denials_total\{command="AcquireLease",reason="held"\} [1-9]/m,
      /^lease_fence_rejections_total \d/m,
      /^lease_fence_append_duration_seconds_bucket\{le="0.001"\} \d/m,
      /^lease_fence_append_batch_commands_count [1-9]/m,
      /^lease_fence_recovery_duration_seconds \d/m,
    ])
      expect(reply.text).toMatch(series);
  });

  it('counts a rejection recorded by a gate in lease_fence_rejections_total', async () => {
    // Arrange: a resource whose fences 1 and 2 were really issued (agent-a, then agent-b)
    const resource = fresh('deploy');
    const first = await acquire(agentA, resource);
    await agentA.post(`/v1/leases/${resource}/release`, { fence: first.body.grant.fence });
    const second = await acquire(agentB, resource);
    const rejectionsTotal = async (): Promise<number> =>
      Number(/^lease_fence_rejections_total (\d+)/m.exec((await viewer.get('/metrics')).text)?.[1]);
    const before = await rejectionsTotal();

    // Act: the gate refused agent-a's stale write
    const reported = await gate.post(`/v1/resources/${resource}/rejections`, {
      seq: 1,
      resource,
      kind: 'stale',
      rejected: { holderId: 'agent-a', fence: first.body.grant.fence },
      current: { holderId: 'agent-b', fence: second.body.grant.fence },
    });

    // Assert
    expect(reported.status, reported.text).toBe(202);
    expect(await rejectionsTotal()).toBe(before + 1);
  });

  it.each([
    ['DELETE', '/v1/leases', TEST_TOKENS.viewer.token, 'GET, HEAD'],
    ['GET', '/v1/leases/deploy-slot/acquire', TEST_TOKENS.agentA.token, 'POST'],
    ['PUT', '/v1/resources/deploy-1/rejections', TEST_TOKENS.gate.token, 'POST'],
    ['POST', '/healthz', undefined, 'GET, HEAD'],
  ])(
    'answers %s %s (a known route, the wrong method) with 405 and an Allow header',
    async (method, path, token, allow) => {
      const reply = await call(app.url, method, path, token === undefined ? {} : { token });
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe(allow);
      expect(reply.body).toMatchObject({ error: 'method-not-allowed', message: expect.stringContaining(allow) });
    },
  );

  it('serves an OpenAPI 3.1 document listing every route, and an HTML page, at /docs without a token', async () => {
    const document = await call<{
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    }>(app.url, 'GET', '/docs/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe('3.1.0');
    expect(Object.keys(document.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/leases/{resource}/acquire',
        '/v1/leases/{resource}/renew',
        '/v1/leases/{resource}/release',
        '/v1/resources/{resource}/rejections',
        '/v1/resources/{resource}/admit',
        '/v1/leases',
        '/v1/events',
        '/v1/rejections',
        '/v1/whoami',
        '/v1/stream',
        '/healthz',
        '/readyz',
        '/metrics',
      ]),
    );
    expect(document.body.components.schemas.AcquireBody).toMatchObject({
      type: 'object',
      required: ['requestId'],
      additionalProperties: false,
    });
    const page = await call(app.url, 'GET', '/docs');
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/v1/leases/{resource}/acquire');
    expect(page.text).toContain('<code>after</code>');
    expect(page.text).not.toContain('`');
  });

  it('tells each token who it is at GET /v1/whoami, never echoing the token', async () => {
    const { agentA, gate, viewer } = TEST_TOKENS;
    const agent = await call(app.url, 'GET', '/v1/whoami', { token: agentA.token });
    expect(agent).toMatchObject({ status: 200, body: { role: 'agent', holderId: agentA.holderId } });
    expect(agent.text).not.toContain(agentA.token);
    expect((await call(app.url, 'GET', '/v1/whoami', { token: gate.token })).body).toEqual({
      role: 'gate',
      gateId: gate.gateId,
      resources: gate.resources,
    });
    expect((await call(app.url, 'GET', '/v1/whoami', { token: viewer.token })).body).toEqual({ role: 'viewer' });
    expect((await call(app.url, 'GET', '/v1/whoami')).status).toBe(401);
    expect((await call(app.url, 'GET', '/v1/whoami?x=1', { token: viewer.token })).status).toBe(400);
  });

  it('answers an unknown API route with a JSON 404', async () => {
    const reply = await call(app.url, 'GET', '/v1/nothing', { token: TEST_TOKENS.viewer.token });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ error: 'not-found' });
  });
});
