/**
 * kill -9 of the coordinator, again and again, while SDK clients over agent links keep acquires,
 * renewals and releases in flight (the writer thread's grouped commits mid-batch, and snapshot
 * saves: `LEASE_FENCE_SNAPSHOT_EVERY` is small so saves come often). Each client resends its
 * operations in flight with the same requestId on the next connection. A client-side journal of
 * every acknowledgement is checked against the log after the last restart:
 * - every acknowledged grant is a `LeaseGranted` with the same holder and fence, every
 *   acknowledged renewal a `LeaseRenewed` of that generation, every acknowledged release a
 *   `LeaseReleased` of it;
 * - fences of `LeaseGranted` strictly increase in log order (so every fence handed out after a
 *   restart is above every fence acknowledged before it), no fence and no requestId granted twice,
 *   no renewal requestId logged twice (a resent renewal is answered, not applied again);
 * - no generation renewed after its release, and no released generation live in `/v1/leases`.
 * `KILL_LOOP_CYCLES` (default 20) sets the number of kills, `KILL_LOOP_SNAPSHOT_EVERY` (default 50)
 * the events between snapshots.
 */
import { existsSync } from 'node:fs';
import { LeaseFenceClient, type Lease } from '@lease-fence/client';
import { describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { COORDINATOR_MAIN, type RunningCoordinator } from '../support/coordinator-process.js';
import { coordinatorsOnOneDataDir } from '../support/one-data-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

const { start } = coordinatorsOnOneDataDir('lease-fence-grouped-kill-loop-', {
  LEASE_FENCE_TTL_MILLIS: '60000',
  LEASE_FENCE_SNAPSHOT_EVERY: process.env.KILL_LOOP_SNAPSHOT_EVERY ?? '50',
});

const CYCLES = Number(process.env.KILL_LOOP_CYCLES ?? 20);
/** SDK clients (one agent link each) per agent token, and operation loops each keeps running. */
const CLIENTS_PER_AGENT = 3;
const LOOPS_PER_CLIENT = 8;

type Acknowledgement =
  | { readonly kind: 'acquire'; readonly resource: string; readonly holderId: string; readonly fence: number }
  | { readonly kind: 'renew' | 'release'; readonly resource: string; readonly fence: number };

interface LoggedEvent {
  readonly position: number;
  readonly event: {
    readonly type: string;
    readonly data: { resource?: string; holderId?: string; fence?: number; requestId?: string };
  };
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

describe.skipIf(!existsSync(COORDINATOR_MAIN))('grouped commits through repeated kill -9', () => {
  it(
    'loses no acknowledged acquire, renewal or release, and never hands out a fence twice',
    async () => {
      let coordinator: RunningCoordinator = await start({ PORT: '0' });
      const port = new URL(coordinator.url).port;
      const journal: Acknowledgement[] = [];
      let stopping = false;
      let operationsSent = 0;
      const clients = [TEST_TOKENS.agentA, TEST_TOKENS.agentB].flatMap((agent) =>
        Array.from({ length: CLIENTS_PER_AGENT }, () => ({
          holderId: agent.holderId,
          client: new LeaseFenceClient({
            baseUrl: coordinator.url,
            token: agent.token,
            holderId: agent.holderId,
            clockSkewMillis: 50,
            timeoutMillis: 2000,
            retry: { maxAttempts: 6, initialDelayMillis: 50, maxDelayMillis: 500 },
            transport: 'websocket',
          }),
        })),
      );
      const loop = async (client: LeaseFenceClient, holderId: string, name: string): Promise<void> => {
        for (let round = 0; !stopping; round += 1) {
          const resource = `${name}-${round}`;
          let lease: Lease | undefined;
          try {
            operationsSent += 1;
            const acquired = await client.acquire(resource, { ttlMillis: 60_000 });
            if (!acquired.ok) continue;
            lease = acquired.lease;
            journal.push({ kind: 'acquire', resource, holderId, fence: lease.fence });
            for (let renewal = 0; renewal < 2 && !stopping; renewal += 1) {
              operationsSent += 1;
              const renewed = await client.renew(lease, { ttlMillis: 60_000 });
              if (!renewed.ok) break;
              journal.push({ kind: 'renew', resource, fence: lease.fence });
            }
            operationsSent += 1;
            const released = await client.release(lease);
            if (released.ok) journal.push({ kind: 'release', resource, fence: lease.fence });
          } catch {
            await sleep(20); // the coordinator is down or recovering: nothing acknowledged
          }
        }
      };
      const loops = clients.flatMap(({ client, holderId }, clientIndex) =>
        Array.from({ length: LOOPS_PER_CLIENT }, (_, loopIndex) =>
          loop(client, holderId, `k${clientIndex}-${loopIndex}`),
        ),
      );

      let kills = 0;
      for (let cycle = 0; cycle < CYCLES; cycle += 1) {
        const before = journal.length;
        while (journal.length < before + 40) await sleep(5);
        await sleep(Math.floor(Math.random() * 300));
        const crash = await coordinator.kill();
        expect(crash.signal).toBe('SIGKILL');
        kills += 1;
        coordinator = await start({ PORT: port });
      }
      const final = journal.length;
      while (journal.length < final + 40) await sleep(5);
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map(({ client }) => client.close()));

      const viewer = coordinatorHttp(coordinator.url, TEST_TOKENS.viewer.token);
      const events: LoggedEvent[] = [];
      for (;;) {
        const after = events.at(-1)?.position ?? 0;
        const page = await viewer.get<{ events: LoggedEvent[] }>(`/v1/events?after=${after}&limit=1000`);
        expect(page.status).toBe(200);
        if (page.body.events.length === 0) break;
        events.push(...page.body.events);
      }
      const key = (resource: string | undefined, fence: number | undefined): string => `${resource}#${fence}`;
      const granted = new Map<string, string | undefined>();
      const renewals = new Map<string, number>();
      const released = new Set<string>();
      const problems: string[] = [];
      const grantRequestIds = new Set<string>();
      const renewRequestIds = new Set<string>();
      let highestFence = 0;
      for (const { position, event } of events) {
        const { resource, fence, holderId, requestId } = event.data;
        const id = key(resource, fence);
        if (event.type === 'LeaseGranted') {
          if (fence! <= highestFence) problems.push(`position ${position}: fence ${fence} after ${highestFence}`);
          highestFence = Math.max(highestFence, fence!);
          if (grantRequestIds.has(requestId!))
            problems.push(`position ${position}: requestId ${requestId} granted twice`);
          grantRequestIds.add(requestId!);
          granted.set(id, holderId);
        } else if (event.type === 'LeaseRenewed') {
          if (released.has(id)) problems.push(`position ${position}: ${id} renewed after its release`);
          if (renewRequestIds.has(requestId!)) problems.push(`position ${position}: renewal ${requestId} logged twice`);
          renewRequestIds.add(requestId!);
          renewals.set(id, (renewals.get(id) ?? 0) + 1);
        } else if (event.type === 'LeaseReleased') {
          released.add(id);
        }
      }
      const renewalsAcknowledged = new Map<string, number>();
      for (const ack of journal) {
        const id = key(ack.resource, ack.fence);
        if (ack.kind === 'acquire' && granted.get(id) !== ack.holderId)
          problems.push(`acknowledged grant ${id} missing`);
        if (ack.kind === 'renew') renewalsAcknowledged.set(id, (renewalsAcknowledged.get(id) ?? 0) + 1);
        if (ack.kind === 'release' && !released.has(id)) problems.push(`acknowledged release ${id} missing`);
      }
      for (const [id, count] of renewalsAcknowledged)
        if ((renewals.get(id) ?? 0) < count)
          problems.push(`${id}: ${count} renewals acknowledged, ${renewals.get(id) ?? 0} logged`);
      const leases = await viewer.get<{ leases: { resource: string; fence: number }[] }>('/v1/leases');
      expect(leases.status).toBe(200);
      for (const lease of leases.body.leases)
        if (released.has(key(lease.resource, lease.fence)))
          problems.push(`${lease.resource}#${lease.fence} released and live`);

      const snapshots = events.filter(({ event }) => event.type === 'SnapshotTaken').length;
      console.log(
        `kill loop: ${kills} kills, ${operationsSent} operations sent, ${journal.length} acknowledgements checked ` +
          `(${journal.filter((a) => a.kind === 'acquire').length} grants), ${events.length} events, ${snapshots} snapshots`,
      );
      expect(problems).toEqual([]);
      expect(kills).toBe(CYCLES);
    },
    20 * 60_000,
  );
});
