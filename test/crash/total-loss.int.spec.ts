/**
 * Surviving the loss of the whole log: the data directory is deleted under a running workload,
 * the coordinator dies, and a new one starts on an empty log. The resource's gate keeps
 * reporting its floor (`reportFloors`), so the new coordinator raises its fence counter above it
 * (plus the margin for fences no gate saw) before its first grant (`LEASE_FENCE_FLOOR_WAIT_MILLIS`).
 * Checked: no fence granted after the loss repeats or undercuts one granted before it, even the
 * fence of a holder that never wrote, and the resource keeps admitting writes without any edit.
 */
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceGateClient, reportFloors } from '@lease-fence/client';
import { FenceGate, StaleFenceError, type FenceToken } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

interface Grant {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}
interface EventsBody {
  events: { position: number; event: { type: string; data: Record<string, unknown> } }[];
  head: number;
}

const RESOURCE = 'deploy-slot';
const WRITES_AFTER_LOSS = 5;

let dataDir: string;
let tokensDir: string;
const started: RunningCoordinator[] = [];

beforeAll(async () => {
  dataDir = await createTempDir('lease-fence-total-loss-');
  tokensDir = await createTempDir('lease-fence-total-loss-tokens-');
});

afterAll(async () => {
  for (const app of started) await app.cleanup();
  await removeTempDir(dataDir);
  await removeTempDir(tokensDir);
});

describe('surviving the loss of the whole log', () => {
  it('issues no fence again and keeps the resource writable after the data directory is deleted under load', async () => {
    // Given a coordinator (tokens kept outside its data dir) and a workload: two agents taking turns
    // on deploy-slot through its FenceGate, whose floor is reported every 200 ms
    const env = { LEASE_FENCE_TOKENS_FILE: await writeTokensFile(tokensDir), LEASE_FENCE_FLOOR_WAIT_MILLIS: '1500' };
    const boot = async (): Promise<RunningCoordinator> => {
      const app = await startCoordinator({ dataDir, env });
      started.push(app);
      return app;
    };
    let current = await boot();
    const gate = new FenceGate(RESOURCE);
    const floors = reportFloors(
      [gate],
      new FenceGateClient({ baseUrl: current.url, token: TEST_TOKENS.gate.token, retry: { maxAttempts: 1 } }),
      { everyMillis: 200 },
    );
    // The reporter's client is bound to one URL: a second reporter follows the new coordinator below.

    const grantsBefore: Grant[] = [];
    const grantsAfter: Grant[] = [];
    const writes: { fence: number; after: boolean }[] = [];
    const refusedAfter: FenceToken[] = [];
    let stop = false;
    const agent = async (holder: typeof TEST_TOKENS.agentA | typeof TEST_TOKENS.agentB): Promise<void> => {
      for (let turn = 0; !stop; turn += 1) {
        const app = current;
        const http = coordinatorHttp(app.url, holder.token);
        const reply = await http
          .post<{ grant: Grant }>(`/v1/leases/${RESOURCE}/acquire`, {
            requestId: `${holder.holderId}-${app.pid}-${turn}`,
            ttlMillis: 2000,
          })
          .catch(() => undefined);
        if (reply?.status !== 200) {
          await sleep(50); // held, 503 while waiting for floors, or the coordinator is down
          continue;
        }
        const token = { resource: RESOURCE, holderId: holder.holderId, fence: reply.body.grant.fence };
        (app === started[0] ? grantsBefore : grantsAfter).push(token);
        try {
          gate.commit(token, () => writes.push({ fence: token.fence, after: app !== started[0] }));
        } catch (error) {
          if (!(error instanceof StaleFenceError) || app === started[0]) throw error;
          refusedAfter.push(token);
        }
        await http.post(`/v1/leases/${RESOURCE}/release`, { fence: token.fence }).catch(() => undefined);
        await sleep(20);
      }
    };
    const agents = Promise.all([agent(TEST_TOKENS.agentA), agent(TEST_TOKENS.agentB)]);
    while (writes.length < 5) await sleep(50);
    // And a holder that took a lease elsewhere and never wrote: the highest fence before the loss
    const quiet = await coordinatorHttp(current.url, TEST_TOKENS.agentA.token).post<{ grant: Grant }>(
      '/v1/leases/deploy-quiet/acquire',
      { requestId: 'quiet' },
    );
    expect(quiet.status).toBe(200);
    grantsBefore.push(quiet.body.grant);

    // When the data directory is deleted under the workload, the coordinator dies, and a new one starts on the same path
    await rm(dataDir, { recursive: true, force: true });
    await current.kill();
    current = await boot();
    const floorsAfter = reportFloors(
      [gate],
      new FenceGateClient({ baseUrl: current.url, token: TEST_TOKENS.gate.token }),
      { everyMillis: 200 },
    );
    while (writes.filter((w) => w.after).length < WRITES_AFTER_LOSS) await sleep(50);
    stop = true;
    await agents;
    await floors.stop();
    await floorsAfter.stop();

    // Then every fence granted after the loss is above every fence granted before it (no reuse)
    const highestBefore = Math.max(...grantsBefore.map((g) => g.fence));
    expect(grantsAfter.length).toBeGreaterThanOrEqual(WRITES_AFTER_LOSS);
    expect(Math.min(...grantsAfter.map((g) => g.fence))).toBeGreaterThan(highestBefore);
    // And the resource was never stuck: the gate admitted the new holders, refused none of them
    expect(refusedAfter).toEqual([]);
    expect(writes.filter((w) => w.after).every((w) => w.fence > highestBefore)).toBe(true);
    // And the new log says why its counter jumped
    const events = await coordinatorHttp(current.url, TEST_TOKENS.viewer.token).get<EventsBody>(
      '/v1/events?after=0&limit=1000',
    );
    expect(events.body.events.map((e) => e.event.type)).toContain('FenceFloorReported');
  }, 120_000);
});
