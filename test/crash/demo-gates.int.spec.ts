/**
 * The demo's deploy slots behind real `lease-fence-gate` sidecars (the built `apps/demo` and
 * `apps/gate`, as `npm start` runs them), against the built coordinator with fence-first on:
 * - a stalled agent's stale deploy is refused by the slot's gate with 409, never reaches the
 *   deploy recorder behind it, and the refusal is in the coordinator's log (`FenceRejected`);
 * - a sidecar reports its floor, so a coordinator restarted on an empty log (its whole data
 *   directory lost) raises its fence counter above it (`FenceFloorReported`) and the next grant
 *   of the slot is above every fence the gate has seen, and admitted over its gate link;
 * - the demo restarts a gate killed from outside (`kill -9` by hand) at once, on the same URL.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../esdb/support/demo-process.js';
import { startGate, type GateProcess } from '../gate/support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from '../gate/support/recording-upstream.js';
import { eventually } from '../support/eventually.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

const SLOT = 'deploy-slot-a';

interface LoggedEvent {
  readonly position: number;
  readonly event: { readonly type: string; readonly data: Record<string, unknown> };
}
interface Grant {
  readonly holderId: string;
  readonly fence: number;
}

let tokensDir: string;
const coordinators: RunningCoordinator[] = [];

/** Starts a coordinator with fence-first on for the slot, on `port` (0 = any) and a fresh data directory. */
async function startFenceFirstCoordinator(port = 0): Promise<RunningCoordinator> {
  const app = await startCoordinator({
    env: { PORT: String(port), LEASE_FENCE_TOKENS_FILE: join(tokensDir, 'tokens.json'), LEASE_FENCE_FENCE_FIRST: SLOT },
  });
  coordinators.push(app);
  return app;
}

/** Every event of the coordinator's log about the slot. */
async function slotEvents(app: RunningCoordinator): Promise<LoggedEvent['event'][]> {
  const reply = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).get<{ events: LoggedEvent[] }>(
    '/v1/events?after=0&limit=10000',
  );
  return reply.body.events.map(({ event }) => event).filter((event) => event.data['resource'] === SLOT);
}

/** Acquires the slot for `agent` through the coordinator's HTTP API; the grant, or throws with the reply. */
async function acquire(app: RunningCoordinator, agent: { readonly token: string }): Promise<Grant> {
  const reply = await coordinatorHttp(app.url, agent.token).post<{ grant?: Grant }>(`/v1/leases/${SLOT}/acquire`, {
    requestId: crypto.randomUUID(),
    ttlMillis: 60_000,
  });
  if (reply.status !== 200 || reply.body.grant === undefined)
    throw new Error(`acquire answered ${reply.status}: ${reply.text}`);
  return reply.body.grant;
}

beforeAll(async () => {
  tokensDir = await createTempDir('lease-fence-demo-gates-tokens-');
  await writeTokensFile(tokensDir);
});

afterAll(async () => {
  for (const app of coordinators) await app.cleanup();
  await removeTempDir(tokensDir);
});

describe('the demo behind its gate sidecars', () => {
  it("has a stalled agent's stale deploy refused by the gate with 409, never reaching the recorder, and logged as FenceRejected", async () => {
    // Arrange: short leases and frequent stalls, so a stale write comes within seconds
    const coordinator = await startFenceFirstCoordinator();
    const dataDir = await createTempDir('lease-fence-demo-gates-');
    const demo = startDemo({
      coordinatorUrl: coordinator.url,
      tokensFile: join(tokensDir, 'tokens.json'),
      dataDir,
      env: {
        DEMO_RESOURCES: SLOT,
        DEMO_TTL_MILLIS: '1500',
        DEMO_MODEL_CALL_MILLIS: '300-2500',
        DEMO_STALL_PROBABILITY: '0.5',
        DEMO_RESOURCE_RESTART_EVERY_MILLIS: '0',
        DEMO_SEED: '20260528',
      },
    });
    const output = (): string => demo.output.slice(-60).join('\n');
    try {
      // Act: wait for an agent's refused deploy
      const refused = await eventually(
        () => `no refused deploy within 90 s:\n${output()}`,
        () =>
          demo.output
            .map((line) =>
              /(agent-\w+) +deploy-slot-a +wrote "([^"]+)" with fence (\d+): REFUSED by the gate with 409 \(stale-fence: \1 holds fence \3, the slot's floor is fence (\d+) of (agent-\w+); refusal #(\d+); not forwarded to the deploy recorder\)/.exec(
                line,
              ),
            )
            .find((match) => match !== null),
        90_000,
      );
      const [, holderId, step, fence, floorFence, floorHolderId, seq] = refused;
      const recorderUrl = /the deploy recorder \(the slots' upstream\) listens on (\S+);/.exec(
        demo.output.join('\n'),
      )?.[1];

      // Assert: in the coordinator's log as the gate's refusal #seq, with the same holders and fences
      const logged = await eventually(
        () => `refusal #${seq} not in the coordinator's log:\n${output()}`,
        async () =>
          (await slotEvents(coordinator)).find(
            (event) => event.type === 'FenceRejected' && event.data['seq'] === Number(seq),
          ),
        60_000,
      );
      expect(logged.data).toMatchObject({
        gateId: TEST_TOKENS.gate.gateId,
        rejected: { holderId, fence: Number(fence) },
        current: { holderId: floorHolderId, fence: Number(floorFence) },
      });
      // ... and the recorder behind the gate never received that deploy, while it received admitted ones
      expect(recorderUrl).toBeDefined();
      const { deployments } = (await (await fetch(`${recorderUrl}/deploys`)).json()) as {
        deployments: { holderId?: string; fence?: number; step: string }[];
      };
      expect(deployments.length).toBeGreaterThan(0);
      expect(deployments).not.toContainEqual(expect.objectContaining({ holderId, fence: Number(fence), step }));
      // ... and each grant of the slot was admitted by its gate before it was granted (fence-first)
      expect((await slotEvents(coordinator)).some((event) => event.type === 'FenceAdmitted')).toBe(true);
    } finally {
      await demo.stop();
      await removeTempDir(dataDir);
    }
  }, 150_000);

  it('reports its floor, so a coordinator that lost its whole log grants the slot above it', async () => {
    // Arrange: a sidecar whose floor is agent-a's fence (admitted over its gate link, fence-first)
    const before = await startFenceFirstCoordinator();
    const gateDir = await createTempDir('lease-fence-demo-gates-floor-');
    const upstream: RecordingUpstream = await startRecordingUpstream();
    let gate: GateProcess | undefined;
    try {
      gate = await startGate({
        LEASE_FENCE_GATE_RESOURCE: SLOT,
        LEASE_FENCE_GATE_UPSTREAM: upstream.url,
        LEASE_FENCE_COORDINATOR_URL: before.url,
        LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
        LEASE_FENCE_DATA_DIR: gateDir,
        LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS: '200',
      });
      const gateUrl = gate.url;
      const floorOf = async (): Promise<Grant | undefined> =>
        ((await (await fetch(`${gateUrl}/.well-known/lease-fence-gate/readyz`)).json()) as { floor?: Grant }).floor;
      await eventually(
        () => `the gate did not open its link:\n${gate!.logLines.join('\n')}`,
        () => gate!.logLines.find((line) => line.includes('gate link: guarding')),
        60_000,
      );
      const first = await acquire(before, TEST_TOKENS.agentA);
      expect(await floorOf()).toEqual({ holderId: 'agent-a', fence: first.fence });
      const port = Number(new URL(before.url).port);
      await before.cleanup();

      // Act: a coordinator on the same port with an empty log; the gate reconnects and reports its floor
      const after = await startFenceFirstCoordinator(port);
      const reported = await eventually(
        () => `no FenceFloorReported:\n${gate!.logLines.slice(-20).join('\n')}`,
        async () => (await slotEvents(after)).find((event) => event.type === 'FenceFloorReported'),
        60_000,
      );
      await eventually(
        () => 'the gate did not link to the new coordinator',
        () => (gate!.logLines.filter((line) => line.includes('gate link: guarding')).length >= 2 ? true : undefined),
        60_000,
      );
      const second = await acquire(after, TEST_TOKENS.agentB);

      // Assert
      expect(reported.data).toMatchObject({ fence: first.fence, holderId: 'agent-a', gateId: TEST_TOKENS.gate.gateId });
      expect(second.fence).toBeGreaterThan(first.fence);
      expect(await floorOf()).toEqual({ holderId: 'agent-b', fence: second.fence });
    } finally {
      await gate?.stop();
      await upstream.close();
      await removeTempDir(gateDir);
    }
  }, 120_000);
});

describe('the demo, when a gate is killed from outside', () => {
  /** The gates the demo started so far, in its log order: `{ url, pid }`. */
  const gatesListening = (output: readonly string[]): { url: string; pid: number }[] =>
    output.flatMap((line) => {
      const match = /its lease-fence-gate listens on (\S+) \(pid (\d+)\)/.exec(line);
      return match === null ? [] : [{ url: match[1]!, pid: Number(match[2]) }];
    });

  it('restarts it at once on the same URL, without waiting for its timed crash', async () => {
    // Arrange: no timed crash at all, so only the exit watcher can restart the gate
    const coordinator = await startFenceFirstCoordinator();
    const dataDir = await createTempDir('lease-fence-demo-outside-kill-');
    const demo = startDemo({
      coordinatorUrl: coordinator.url,
      tokensFile: join(tokensDir, 'tokens.json'),
      dataDir,
      env: { DEMO_RESOURCES: SLOT, DEMO_RESOURCE_RESTART_EVERY_MILLIS: '0', DEMO_SEED: '7' },
    });
    try {
      const [first] = await eventually(
        () => `the demo started no gate:\n${demo.output.join('\n')}`,
        () => (gatesListening(demo.output).length >= 1 ? gatesListening(demo.output) : undefined),
        60_000,
      );

      // Act: kill -9 from outside the demo
      process.kill(first!.pid, 'SIGKILL');
      const [, second] = await eventually(
        () => `the demo did not restart the gate:\n${demo.output.join('\n')}`,
        () => (gatesListening(demo.output).length >= 2 ? gatesListening(demo.output) : undefined),
        60_000,
      );

      // Assert: a new gate process on the same URL, which answers, and the log says why
      expect(
        demo.output.some((line) => line.includes('its gate exited (signal SIGKILL) unexpectedly; restarting it')),
      ).toBe(true);
      expect(second!.pid).not.toBe(first!.pid);
      expect(second!.url).toBe(first!.url);
      expect((await fetch(`${second!.url}/.well-known/lease-fence-gate/healthz`)).status).toBe(200);
    } finally {
      await demo.stop();
      await removeTempDir(dataDir);
    }
  }, 120_000);
});
