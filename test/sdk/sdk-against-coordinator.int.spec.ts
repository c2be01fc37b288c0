/**
 * The agent SDK against the real coordinator (built `apps/coordinator`, SQLite log, port 0).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commitDurably,
  CoordinatorHttpError,
  FenceGateClient,
  gateOptionsFrom,
  LeaseFenceClient,
  openFileFloorStore,
  reportRejections,
  type LeaseLostError,
} from '@lease-fence/client';
import { EventsReplySchema, type CoordinatorEvent } from '@lease-fence/protocol';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from './support/coordinator-process.js';
import { openDropReplyProxy, type DropReplyProxy } from './support/drop-reply-proxy.js';

describe.skipIf(!coordinatorBuilt()).each(['http', 'websocket'] as const)(
  'the SDK against the real coordinator, over %s',
  (transport) => {
    let coordinator: CoordinatorProcess;
    let proxy: DropReplyProxy;
    let directory: string;
    const clients: LeaseFenceClient[] = [];

    const agent = (index: number, baseUrl = proxy.url): LeaseFenceClient => {
      const client = new LeaseFenceClient({
        baseUrl,
        token: `agent-${index}-token`,
        holderId: `agent-${index}`,
        clockSkewMillis: 50,
        timeoutMillis: 2000,
        retry: { maxAttempts: 4, initialDelayMillis: 10, maxDelayMillis: 50 },
        transport,
      });
      clients.push(client);
      return client;
    };
    const events = async (): Promise<CoordinatorEvent[]> => {
      const response = await fetch(`${coordinator.url}/v1/events?after=0&limit=10000`, {
        headers: { authorization: 'Bearer viewer-token' },
      });
      return EventsReplySchema.parse(await response.json()).events.map((recorded) => recorded.event);
    };
    const eventsFor = async (resource: string): Promise<CoordinatorEvent[]> =>
      (await events()).filter((event) => 'resource' in event.data && event.data.resource === resource);

    beforeAll(async () => {
      coordinator = await startCoordinator();
      proxy = await openDropReplyProxy(coordinator.url);
      directory = await mkdtemp(join(tmpdir(), 'sdk-gate-'));
    });

    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close()));
      await proxy?.close();
      await coordinator?.stop();
      await rm(directory, { recursive: true, force: true });
    });

    it('acquires, renews with the same fence, releases, and the next holder gets a higher fence', async () => {
      // Arrange
      const resource = 'deploy-round-trip';

      const holder = agent(1);

      // Act
      const acquired = await holder.acquire(resource, { ttlMillis: 5000 });
      if (!acquired.ok) throw new Error(`expected a grant, got ${acquired.reason}`);
      const renewed = await holder.renew(acquired.lease);
      const released = renewed.ok ? await holder.release(renewed.lease) : undefined;
      const next = await agent(2).acquire(resource, { ttlMillis: 5000 });

      // Assert
      expect(renewed.ok && renewed.lease.fence).toBe(acquired.lease.fence);
      expect(released).toEqual({ ok: true });
      expect(next.ok && next.lease.fence).toBeGreaterThan(acquired.lease.fence);
      expect((await eventsFor(resource)).map((event) => event.type)).toEqual([
        'LeaseGranted',
        'LeaseRenewed',
        'LeaseReleased',
        'LeaseGranted',
      ]);
    });

    it('retries a lost acquire reply with the same requestId and the coordinator grants once', async () => {
      // Arrange
      const resource = 'deploy-lost-reply';
      proxy.dropNext(/\/v1\/leases\/deploy-lost-reply\/acquire$/);

      // Act
      const result = await agent(1).acquire(resource, { ttlMillis: 5000 });

      // Assert
      expect(proxy.dropped).toContain('/v1/leases/deploy-lost-reply/acquire');
      expect(result.ok).toBe(true);
      const granted = (await eventsFor(resource)).filter((event) => event.type === 'LeaseGranted');
      expect(granted).toHaveLength(1);
      expect(result.ok && result.lease.fence).toBe(granted[0]?.data.fence);
    });

    it('applies each of many operations in flight once when the connection drops mid-batch, each caller seeing one outcome', async () => {
      // Arrange: one client, 24 acquires at once; the reply of one of them kills its connection
      // (over the agent link: the whole link, with the others in flight on it)
      const holder = agent(4);
      const resources = Array.from({ length: 24 }, (_, index) => `deploy-batch-${index}`);
      proxy.dropNext(/\/v1\/leases\/deploy-batch-7\/acquire$/);

      // Act
      const results = await Promise.all(resources.map((resource) => holder.acquire(resource, { ttlMillis: 5000 })));

      // Assert: every acquire granted, once, with the fence the log holds
      expect(proxy.dropped).toContain('/v1/leases/deploy-batch-7/acquire');
      const granted = (await events()).flatMap((event) =>
        event.type === 'LeaseGranted' && event.data.resource.startsWith('deploy-batch-') ? [event.data] : [],
      );
      expect(granted).toHaveLength(resources.length);
      for (const [index, result] of results.entries()) {
        const logged = granted.filter((data) => data.resource === resources[index]);
        expect(logged).toHaveLength(1);
        expect(result.ok && result.lease.fence).toBe(logged[0]?.fence);
      }
    });

    it('reports held and already-held as data', async () => {
      // Arrange
      const resource = 'deploy-denials';
      await agent(1).acquire(resource, { ttlMillis: 10_000 });

      // Act
      const other = await agent(2).acquire(resource);
      const same = await agent(1).acquire(resource);

      // Assert
      expect(other).toMatchObject({ ok: false, reason: 'held', heldBy: 'agent-1' });
      expect(other.ok === false && other.reason === 'held' && other.retryAfterMillis).toBeGreaterThan(0);
      expect(same).toMatchObject({ ok: false, reason: 'already-held', heldBy: 'agent-1' });
    });

    it('answers a renewal of an expired lease with expired, never reviving it', async () => {
      // Arrange: a 1 s lease, taken over by another agent once it expired. (Shorter leases can
      // arrive already spent on a loaded machine, which the SDK rightly refuses to hand out.)
      const resource = 'deploy-expired';
      const holder = agent(1);
      const acquired = await holder.acquire(resource, { ttlMillis: 1_000 });
      if (!acquired.ok) throw new Error(`expected a grant, got ${JSON.stringify(acquired)}`);
      let taken = await agent(2).acquire(resource, { ttlMillis: 5000 });
      while (!taken.ok && taken.reason === 'held') {
        await new Promise((resolve) =>
          setTimeout(resolve, taken.ok === false && taken.reason === 'held' ? taken.retryAfterMillis : 0),
        );
        taken = await agent(2).acquire(resource, { ttlMillis: 5000 });
      }

      // Act
      const renewed = await holder.renew(acquired.lease);

      // Assert
      expect(renewed).toEqual({ ok: false, reason: 'expired' });
      expect((await eventsFor(resource)).map((event) => event.type)).toEqual([
        'LeaseGranted',
        'LeaseExpired',
        'LeaseGranted',
      ]);
    });

    it('keeps a short lease alive with background renewals through withLease', async () => {
      // Arrange
      const renewals: number[] = [];
      let lost: LeaseLostError | undefined;
      let thirdRenewal!: () => void;
      const renewedThrice = new Promise<void>((resolve) => (thirdRenewal = resolve));
      const onRenewed = (lease: { fence: number }): void => {
        if (renewals.push(lease.fence) === 3) thirdRenewal();
      };

      // Act: a 400 ms lease held until it was renewed three times.
      const result = await agent(3).withLease(
        'deploy-with-lease',
        async (lease, signal) => {
          await Promise.race([
            renewedThrice,
            new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
          ]);
          return lease.fence;
        },
        { ttlMillis: 400, onRenewed, onLost: (error) => (lost = error) },
      );

      // Assert
      expect(lost).toBeUndefined();
      expect(result).toMatchObject({ ok: true, release: { ok: true } });
      expect(new Set(renewals).size).toBe(1);
      expect(
        (await eventsFor('deploy-with-lease')).filter((event) => event.type === 'LeaseRenewed').length,
      ).toBeGreaterThanOrEqual(3);
    });

    it('records a refused write as FenceRejected once, even when the report is resent after a lost reply', async () => {
      // Arrange: agent-1's generation (released), then agent-2's, whose write raised the gate's floor
      const resource = 'deploy-gate-reports';
      const first = await agent(1).acquire(resource, { ttlMillis: 5000 });
      if (!first.ok) throw new Error(`expected a grant, got ${first.reason}`);
      await agent(1).release(first.lease);
      const second = await agent(2).acquire(resource, { ttlMillis: 5000 });
      if (!second.ok) throw new Error(`expected a grant, got ${second.reason}`);
      const store = await openFileFloorStore({ path: join(directory, 'gate.floor.json'), resource });
      const gate = new FenceGate(resource, gateOptionsFrom(await store.load()));
      await commitDurably(gate, store, second.lease.token, async () => 'write');
      proxy.dropNext(/\/v1\/resources\/deploy-gate-reports\/rejections$/);
      const reporter = reportRejections(
        store,
        new FenceGateClient({ baseUrl: proxy.url, token: 'gate-token', retry: { initialDelayMillis: 10 } }),
      );

      // Act: agent-1's late write under its old fence
      await expect(commitDurably(gate, store, first.lease.token, async () => 'write')).rejects.toThrow(StaleFenceError);
      await reporter.flush();
      await reporter.close();

      // Assert
      expect(proxy.dropped).toContain('/v1/resources/deploy-gate-reports/rejections');
      const rejected = (await eventsFor(resource)).filter((event) => event.type === 'FenceRejected');
      expect(rejected).toHaveLength(1);
      expect(rejected[0]?.data).toMatchObject({
        gateId: 'deploy-gate',
        seq: 1,
        rejected: { holderId: 'agent-1', fence: first.lease.fence },
        current: { holderId: 'agent-2', fence: second.lease.fence },
      });
    });

    it('throws CoordinatorHttpError with the status for an unknown token, without retrying', async () => {
      // Arrange
      const stranger = new LeaseFenceClient({
        baseUrl: coordinator.url,
        token: 'nobody',
        holderId: 'nobody',
        clockSkewMillis: 50,
        transport,
      });

      // Act / Assert
      await expect(stranger.acquire('deploy-anything')).rejects.toBeInstanceOf(CoordinatorHttpError);
      await expect(stranger.acquire('deploy-anything')).rejects.toMatchObject({ status: 401 });
    });
  },
);
