/**
 * A crash loop must not keep a silent holder's lease alive (issue 14, defect 9; etcd #9888's bug
 * class). Agent A takes a 3 000 ms lease and goes silent; the coordinator is killed with SIGKILL
 * 600 ms after each `ready`, ten times. Every boot carries A's lease with the grace that was left
 * when the previous boot was last *recorded* alive, so each boot must record its uptime while it
 * carries a lease in grace, or every boot gives the full grace again and agent B never gets in.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface EventsBody {
  events: { position: number; event: { type: string; data: Record<string, unknown> } }[];
  head: number;
}
interface CarriedLease {
  resource: string;
  holderId: string;
  fence: number;
  expiresAtMillis: number;
}

const TTL_MILLIS = 3000;
const BOOTS = 10;
/** How long each boot lives after `ready` before it is killed: the probe's figure. */
const UPTIME_MILLIS = 600;
/** When, within a boot, agent B tries to take the resource. */
const TRY_AT_MILLIS = 500;

let dataDir: string;
const started: RunningCoordinator[] = [];

beforeAll(async () => {
  dataDir = await createTempDir('lease-fence-restart-loop-');
});

afterAll(async () => {
  for (const app of started) await app.cleanup();
  await removeTempDir(dataDir);
});

const boot = async (): Promise<RunningCoordinator> => {
  const app = await startCoordinator({ dataDir });
  started.push(app);
  return app;
};

describe('a crash loop of 10 boots × 600 ms', () => {
  it("hands a silent holder's 3 000 ms lease to another holder, each boot giving less grace than the one before", async () => {
    // Given agent A holds deploy-slot for 3 000 ms and never speaks again; its boot dies 600 ms later
    const first = await boot();
    const held = await coordinatorHttp(first.url, TEST_TOKENS.agentA.token).post<{ grant: { fence: number } }>(
      '/v1/leases/deploy-slot/acquire',
      { requestId: 'silent', ttlMillis: TTL_MILLIS },
    );
    expect(held.status).toBe(200);
    await sleep(UPTIME_MILLIS);
    await first.kill();

    // When the coordinator is restarted and killed 600 ms after each ready, agent B trying once per boot
    let grantedAtBoot: number | undefined;
    let grantedFence: number | undefined;
    let last: RunningCoordinator | undefined;
    for (let index = 1; index <= BOOTS && grantedAtBoot === undefined; index += 1) {
      const app = await boot();
      last = app;
      await sleep(TRY_AT_MILLIS);
      const attempt = await coordinatorHttp(app.url, TEST_TOKENS.agentB.token).post<{ grant: { fence: number } }>(
        '/v1/leases/deploy-slot/acquire',
        { requestId: `b-${index}`, ttlMillis: TTL_MILLIS },
      );
      if (attempt.status === 200) {
        grantedAtBoot = index;
        grantedFence = attempt.body.grant.fence;
        break;
      }
      expect(attempt.body).toMatchObject({ reason: 'held', heldBy: 'agent-a' });
      await sleep(UPTIME_MILLIS - TRY_AT_MILLIS);
      await app.kill();
    }

    console.log(`restart loop: agent B got deploy-slot at boot ${grantedAtBoot} of ${BOOTS}`);
    // Then agent B got the resource, with a higher fence, within the ten boots
    expect(
      grantedAtBoot,
      'agent B never got the resource: every boot gave the silent holder its grace again',
    ).toBeDefined();
    expect(grantedFence).toBeGreaterThan(held.body.grant.fence);
    // And the grace each boot gave A's lease (from its CoordinatorStarted) never grew, and shrank overall
    const events = await coordinatorHttp(last!.url, TEST_TOKENS.viewer.token).get<EventsBody>(
      '/v1/events?after=0&limit=1000',
    );
    const graces = events.body.events
      .filter((e) => e.event.type === 'CoordinatorStarted')
      .flatMap((e) =>
        (e.event.data['carriedLeases'] as CarriedLease[])
          .filter((l) => l.holderId === 'agent-a')
          .map((l) => l.expiresAtMillis - (e.event.data['atMillis'] as number)),
      );
    expect(graces.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < graces.length; i += 1) expect(graces[i]).toBeLessThanOrEqual(graces[i - 1]!);
    expect(graces.at(-1)).toBeLessThan(graces[0]!);
  }, 300_000); // eleven coordinator start-ups on a shared machine
});
