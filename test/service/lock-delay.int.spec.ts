/**
 * Lock-delay over HTTP, across a crash: with `LEASE_FENCE_LOCK_DELAY`, a resource whose holder was
 * lost uncleanly (its lease expired, or a gate refused one of its writes) is refused to every
 * acquirer with 409 `lock-delay` and `retryAfterMillis`; after kill -9 and a restart on the same
 * data dir, the delay still holds (it is rebuilt from the log) and then ends.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaseFenceClient } from '@lease-fence/client';
import { describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { coordinatorsOnOneDataDir } from '../support/one-data-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface GrantBody {
  ok: true;
  grant: { fence: number; holderId: string };
}
interface DenialBody {
  ok: false;
  reason: string;
  retryAfterMillis: number;
}

/** The delay: long enough that a restart under load happens inside it (downtime does not count anyway). */
const DELAY_MILLIS = 8000;
const { start } = coordinatorsOnOneDataDir('lease-fence-lock-delay-', {
  LEASE_FENCE_LOCK_DELAY: `deploy-*=${DELAY_MILLIS},db=${DELAY_MILLIS}`,
  LEASE_FENCE_MIN_TTL_MILLIS: '100',
});

const expectLockDelay = (reply: { status: number; body: unknown }): number => {
  expect(reply).toMatchObject({
    status: 409,
    body: { ok: false, reason: 'lock-delay', retryAfterMillis: expect.any(Number) },
  });
  const { retryAfterMillis } = reply.body as DenialBody;
  expect(retryAfterMillis).toBeGreaterThan(0);
  expect(retryAfterMillis).toBeLessThanOrEqual(DELAY_MILLIS);
  return retryAfterMillis;
};

describe('lock-delay', () => {
  it('refuses a resource after an expiry or a refused write, keeps refusing it after kill -9 and a restart, then grants it', async () => {
    // Given a coordinator where agent-a's short leases on deploy-web (delayed) and cache (not) expired
    const first = await start();
    const a1 = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    const b1 = coordinatorHttp(first.url, TEST_TOKENS.agentB.token);
    const gate1 = coordinatorHttp(first.url, TEST_TOKENS.gate.token);
    const viewer1 = coordinatorHttp(first.url, TEST_TOKENS.viewer.token);
    expect((await a1.post('/v1/leases/deploy-web/acquire', { requestId: 'a-deploy', ttlMillis: 100 })).status).toBe(
      200,
    );
    expect((await a1.post('/v1/leases/cache/acquire', { requestId: 'a-cache', ttlMillis: 100 })).status).toBe(200);
    for (let leases = 2; leases > 0; await sleep(50)) {
      leases = (await viewer1.get<{ leases: unknown[] }>('/v1/leases')).body.leases.length; // the expiry sweep ends both
    }

    // And on db, a clean handover from agent-a to agent-b, after which the gate refused a late write of agent-a
    const aDb = await a1.post<GrantBody>('/v1/leases/db/acquire', { requestId: 'a-db' });
    await a1.post('/v1/leases/db/release', { fence: aDb.body.grant.fence });
    const bDb = await b1.post<GrantBody>('/v1/leases/db/acquire', { requestId: 'b-db' });
    expect(bDb.status).toBe(200); // a release starts no delay
    const refusal = await gate1.post('/v1/resources/db/rejections', {
      seq: 1,
      resource: 'db',
      kind: 'stale',
      rejected: { holderId: 'agent-a', fence: aDb.body.grant.fence },
      current: { holderId: 'agent-b', fence: bDb.body.grant.fence },
    });
    expect(refusal.status).toBe(202);
    await b1.post('/v1/leases/db/release', { fence: bDb.body.grant.fence });

    // Then deploy-web and db are refused to everyone, cache is not
    expectLockDelay(await b1.post('/v1/leases/deploy-web/acquire', { requestId: 'b-deploy-1' }));
    expectLockDelay(await a1.post('/v1/leases/deploy-web/acquire', { requestId: 'a-deploy-2' }));
    expectLockDelay(await a1.post('/v1/leases/db/acquire', { requestId: 'a-db-2' }));
    expect((await b1.post('/v1/leases/cache/acquire', { requestId: 'b-cache' })).status).toBe(200);

    // When the coordinator is killed and another starts on the same data dir
    expect((await first.kill()).signal).toBe('SIGKILL');
    const second = await start();
    const b2 = coordinatorHttp(second.url, TEST_TOKENS.agentB.token);
    const sdk = new LeaseFenceClient({
      baseUrl: second.url,
      token: TEST_TOKENS.agentB.token,
      holderId: 'agent-b',
      clockSkewMillis: 50,
    });

    // Then the delays still hold, rebuilt from the log: over HTTP and as the SDK's denial
    const retryAfterMillis = expectLockDelay(
      await b2.post('/v1/leases/deploy-web/acquire', { requestId: 'b-deploy-2' }),
    );
    expectLockDelay(await b2.post('/v1/leases/db/acquire', { requestId: 'b-db-2' }));
    expect(await sdk.acquire('deploy-web')).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: expect.any(Number),
    });
    const ran = await sdk.withLease('deploy-web', () => Promise.resolve('ran'));
    expect(ran).toMatchObject({ ok: false, reason: 'lock-delay' });

    // And once the delay has passed, the resource is granted again, with a higher fence
    await sleep(retryAfterMillis + 50);
    const granted = await b2.post<GrantBody>('/v1/leases/deploy-web/acquire', { requestId: 'b-deploy-3' });
    expect(granted.status).toBe(200);
    expect(granted.body.grant.fence).toBeGreaterThan(bDb.body.grant.fence);
    await second.stop();
  });
});
