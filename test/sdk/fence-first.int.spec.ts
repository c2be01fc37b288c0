/**
 * Fence-first handover against the real coordinator (built `apps/coordinator`, SQLite log,
 * `LEASE_FENCE_FENCE_FIRST=deploy-*`) and a real gate process side: the SDK's gate link, a
 * `FenceGate` and a file floor store, or a SQL gate's floor row (`sqlGateGuard`, SQLite).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FenceTokenVerifier,
  openFileFloorStore,
  openGateLink,
  type FileFloorStore,
  type GateLink,
} from '@lease-fence/client';
import { fencedTransaction, migrate, sqlGateGuard, sqliteFenceGate } from '@lease-fence/gate-sql';
import Database from 'better-sqlite3';
import {
  EventsReplySchema,
  GATE_LINK_PATH,
  type CoordinatorEvent,
  type CoordinatorToGateFrame,
} from '@lease-fence/protocol';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from './support/coordinator-process.js';

const TTL_MILLIS = 150;

describe.skipIf(!coordinatorBuilt())('fence-first handover against the real coordinator', () => {
  let coordinator: CoordinatorProcess;
  let floorDir: string;

  beforeAll(async () => {
    coordinator = await startCoordinator({
      env: {
        LEASE_FENCE_FENCE_FIRST: 'deploy-*',
        LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS: '700',
        LEASE_FENCE_MIN_TTL_MILLIS: '100',
      },
    });
    floorDir = await mkdtemp(join(tmpdir(), 'fence-first-floor-'));
  });

  afterAll(async () => {
    await coordinator?.stop();
    await rm(floorDir, { recursive: true, force: true });
  });

  /** POST acquire as agent `index`: the raw status and body (no SDK retries, so a 503 is seen as is). */
  const acquire = async (
    index: number,
    resource: string,
    requestId: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${coordinator.url}/v1/leases/${encodeURIComponent(resource)}/acquire`, {
      method: 'POST',
      headers: { authorization: `Bearer agent-${index}-token`, 'content-type': 'application/json' },
      body: JSON.stringify({ requestId, ttlMillis: TTL_MILLIS }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const grantedFence = (reply: { status: number; body: Record<string, unknown> }): number => {
    expect(reply.status).toBe(200);
    return (reply.body.grant as { fence: number }).fence;
  };
  const events = async (): Promise<CoordinatorEvent[]> => {
    const response = await fetch(`${coordinator.url}/v1/events?after=0&limit=10000`, {
      headers: { authorization: 'Bearer viewer-token' },
    });
    return EventsReplySchema.parse(await response.json()).events.map((recorded) => recorded.event);
  };
  /** Waits past a lease's TTL so the next acquire may take the resource (not an assertion on timing). */
  const pastTtl = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, TTL_MILLIS + 100));
  const openGate = async (resource: string): Promise<{ gate: FenceGate; store: FileFloorStore; link: GateLink }> => {
    const store = await openFileFloorStore({ path: join(floorDir, `${resource}.json`), resource });
    const gate = new FenceGate(resource);
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store }],
      reconnect: { initialDelayMillis: 10, maxDelayMillis: 50 },
    });
    await link.whenGuarding();
    return { gate, store, link };
  };

  it("right after B's acquire returns, A's older token is refused at the gate although B never wrote", async () => {
    const resource = 'deploy-handover';
    const { gate, store, link } = await openGate(resource);
    try {
      const fenceA = grantedFence(await acquire(1, resource, 'a-1'));
      await gate.commit({ resource, holderId: 'agent-1', fence: fenceA }, () => 'A writes while it holds the lease');
      await pastTtl();

      const fenceB = grantedFence(await acquire(2, resource, 'b-1'));

      expect(fenceB).toBeGreaterThan(fenceA);
      expect(() => gate.commit({ resource, holderId: 'agent-1', fence: fenceA }, () => 'A is late')).toThrow(
        StaleFenceError,
      );
      expect((await store.load())?.floor).toEqual({ holderId: 'agent-2', fence: fenceB });
      const types = (await events())
        .filter((event) => 'resource' in event.data && event.data.resource === resource)
        .map((event) => event.type);
      expect(types.slice(-4)).toEqual(['LeaseExpired', 'FenceReserved', 'FenceAdmitted', 'LeaseGranted']);
    } finally {
      await link.close();
    }
  });

  it("a SQL gate's link raises the floor row before B's grant: A's older token is refused by fencedTransaction although B never wrote", async () => {
    const resource = 'deploy-sql';
    const database = new Database(join(floorDir, 'orders.db'));
    database.exec('CREATE TABLE writes (holder_id TEXT NOT NULL, fence INTEGER NOT NULL)');
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${coordinator.url}/v1/keys` } });
    const gate = sqliteFenceGate({ database, resource, verifier });
    await migrate(gate);
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [sqlGateGuard(gate)],
      reconnect: { initialDelayMillis: 10, maxDelayMillis: 50 },
    });
    const write = (reply: { status: number; body: Record<string, unknown> }, holderId: string) => {
      const grant = reply.body.grant as { fence: number; signedToken: string };
      return fencedTransaction(gate, grant.signedToken, (tx) =>
        tx.prepare('INSERT INTO writes VALUES (?, ?)').run(holderId, grant.fence),
      );
    };
    const floorRow = () =>
      database.prepare('SELECT floor_fence AS fence, floor_holder_id AS holderId FROM lease_fence_floors').get();
    try {
      await link.whenGuarding();
      const grantA = await acquire(1, resource, 'sql-a-1');
      const fenceA = grantedFence(grantA);
      expect(floorRow()).toEqual({ fence: fenceA, holderId: 'agent-1' }); // before A's first write
      await write(grantA, 'agent-1');
      await pastTtl();

      const grantB = await acquire(2, resource, 'sql-b-1');
      const fenceB = grantedFence(grantB);

      expect(floorRow()).toEqual({ fence: fenceB, holderId: 'agent-2' });
      await expect(write(grantA, 'agent-1')).rejects.toBeInstanceOf(StaleFenceError);
      await write(grantB, 'agent-2');
      expect(database.prepare('SELECT holder_id, fence FROM writes').all()).toEqual([
        { holder_id: 'agent-1', fence: fenceA },
        { holder_id: 'agent-2', fence: fenceB },
      ]);
    } finally {
      await link.close();
      database.close();
    }
  });

  it('with the gate down the acquire answers 503 fence-unavailable, and the next fence is higher', async () => {
    const resource = 'deploy-gate-down';
    const refused = await acquire(3, resource, 'c-1');
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ ok: false, reason: 'fence-unavailable', retryable: true });
    const burned = refused.body.fence as number;
    expect((await events()).at(-1)).toMatchObject({
      type: 'FenceBurned',
      data: { resource, fence: burned, reason: 'fence-unavailable' },
    });

    const { link } = await openGate(resource);
    try {
      // The same requestId again is a new attempt: a new, higher fence.
      expect(grantedFence(await acquire(3, resource, 'c-1'))).toBeGreaterThan(burned);
    } finally {
      await link.close();
    }
  });

  it("answers a gate's bad frames with an error naming the field, and grants nothing on them", async () => {
    const ws = new WebSocket(`${coordinator.url.replace(/^http/, 'ws')}${GATE_LINK_PATH}`, {
      headers: { authorization: 'Bearer gate-token' },
    });
    const frames: CoordinatorToGateFrame[] = [];
    const next = (): Promise<CoordinatorToGateFrame> =>
      new Promise((resolve) =>
        ws.once('message', (data) => resolve(JSON.parse(data.toString()) as CoordinatorToGateFrame)),
      );
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      ws.send(JSON.stringify({ type: 'guard', resources: ['db-primary'] }));
      frames.push(await next());
      ws.send(JSON.stringify({ type: 'guard', resources: ['deploy-bad-input'] }));
      frames.push(await next());
      ws.send(JSON.stringify({ type: 'admitted', id: 1, resource: 'deploy-other', fence: 1 }));
      frames.push(await next());
      ws.send(JSON.stringify({ type: 'admitted', id: 4242, resource: 'deploy-bad-input', fence: 99 }));
      frames.push(await next());
    } finally {
      ws.close();
    }
    expect(frames).toMatchObject([
      { type: 'error', field: 'resources.0' },
      { type: 'guarding', resources: ['deploy-bad-input'] },
      { type: 'error', field: 'resource' },
      { type: 'error', field: 'id' },
    ]);
    expect(
      (await events()).filter((event) => 'resource' in event.data && event.data.resource === 'deploy-bad-input'),
    ).toEqual([]);
  });

  it('refuses the gate link to an agent token with 403 before the upgrade', async () => {
    const ws = new WebSocket(`${coordinator.url.replace(/^http/, 'ws')}${GATE_LINK_PATH}`, {
      headers: { authorization: 'Bearer agent-1-token' },
    });
    const status = await new Promise<number | undefined>((resolve) => {
      ws.once('unexpected-response', (_request, response) => {
        resolve(response.statusCode);
        response.resume();
      });
      ws.once('open', () => resolve(undefined));
      ws.once('error', () => undefined);
    });
    ws.terminate();
    expect(status).toBe(403);
  });
});
