/**
 * The demo's deploy slot (built `apps/demo`, its own process and SQLite database, as `npm start`
 * runs it) against the built coordinator with fence-first on for the slot:
 * - a grant of the slot is admitted by the slot over its gate link, durably in the slot's
 *   database, before the acquire is answered (FenceReserved → FenceAdmitted → LeaseGranted);
 * - the slot reports its floor, so a coordinator restarted on an empty log (its whole data
 *   directory lost) raises its fence counter above it (FenceFloorReported) and the next grant of
 *   the slot is above every fence the slot has seen, and admitted;
 * - the demo (built `apps/demo/dist/main.js`) restarts a slot killed from outside (`kill -9` by
 *   hand) at once, not at its next timed crash.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../esdb/support/demo-process.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { REPO_ROOT, type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { stopByPid } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

const SLOT = 'deploy-slot-a';
const SLOT_MAIN = join(REPO_ROOT, 'apps/demo/dist/deploy-slot-main.js');

interface LoggedEvent {
  readonly position: number;
  readonly event: { readonly type: string; readonly data: Record<string, unknown> };
}
interface Grant {
  readonly holderId: string;
  readonly fence: number;
}

let tokensDir: string;
let slotDir: string;
let slot: ChildProcess | undefined;
const slotLines: string[] = [];
const coordinators: RunningCoordinator[] = [];

/** Starts a coordinator with fence-first on for the slot, on `port` (0 = any) and a fresh data directory. */
async function startFenceFirstCoordinator(port = 0): Promise<RunningCoordinator> {
  const app = await startCoordinator({
    env: { PORT: String(port), LEASE_FENCE_TOKENS_FILE: join(tokensDir, 'tokens.json'), LEASE_FENCE_FENCE_FIRST: SLOT },
  });
  coordinators.push(app);
  return app;
}

/** Starts the deploy slot process as the demo does; resolves once it listens. */
async function startSlot(coordinatorUrl: string): Promise<ChildProcess> {
  const child = fork(SLOT_MAIN, [], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      ...process.env,
      LEASE_FENCE_URL: coordinatorUrl,
      DEMO_GATE_TOKEN: TEST_TOKENS.gate.token,
      DEMO_RESOURCES: SLOT,
      DEMO_SLOT_PORT: '0',
      LEASE_FENCE_DEMO_DIR: slotDir,
    },
  });
  createInterface({ input: child.stdout! }).on('line', (line) => slotLines.push(line));
  createInterface({ input: child.stderr! }).on('line', (line) => slotLines.push(`stderr: ${line}`));
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) =>
      reject(new Error(`the deploy slot exited (${String(code)}) before listening:\n${slotLines.join('\n')}`)),
    );
  });
  return child;
}

/** Resolves once the slot has logged a line containing `text`. */
async function slotLogged(text: string, timeoutMillis = 30_000): Promise<void> {
  for (const startedAt = performance.now(); !slotLines.some((line) => line.includes(text)); await delay(50)) {
    if (performance.now() - startedAt > timeoutMillis)
      throw new Error(`the deploy slot did not log "${text}" within ${timeoutMillis} ms:\n${slotLines.join('\n')}`);
  }
}

/** Every event of the coordinator's log about the slot. */
async function slotEvents(app: RunningCoordinator): Promise<LoggedEvent['event'][]> {
  const reply = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).get<{ events: LoggedEvent[] }>(
    '/v1/events?after=0&limit=10000',
  );
  return reply.body.events.map(({ event }) => event).filter((event) => event.data['resource'] === SLOT);
}

/** The first event of type `type` about the slot, waiting for it up to `timeoutMillis`. */
async function firstSlotEvent(
  app: RunningCoordinator,
  type: string,
  timeoutMillis = 30_000,
): Promise<LoggedEvent['event']> {
  for (const startedAt = performance.now(); ; await delay(100)) {
    const found = (await slotEvents(app)).find((event) => event.type === type);
    if (found !== undefined) return found;
    if (performance.now() - startedAt > timeoutMillis)
      throw new Error(`no ${type} of ${SLOT} within ${timeoutMillis} ms:\n${slotLines.join('\n')}`);
  }
}

/** Acquires the slot for `agent` through the coordinator's HTTP API; the grant, or throws with the reply. */
async function acquire(app: RunningCoordinator, agent: { readonly token: string }): Promise<Grant> {
  const reply = await coordinatorHttp(app.url, agent.token).post<{ grant?: Grant }>(`/v1/leases/${SLOT}/acquire`, {
    requestId: crypto.randomUUID(),
    ttlMillis: 60_000,
  });
  if (reply.status !== 200 || reply.body.grant === undefined)
    throw new Error(`acquire answered ${reply.status}: ${reply.text}\n--- slot ---\n${slotLines.join('\n')}`);
  return reply.body.grant;
}

/** The floor the slot keeps in its own database, read from outside the process. */
function slotFloor(): Grant | undefined {
  const db = new Database(join(slotDir, 'deploy-slot.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const row = db
      .prepare('SELECT floor_fence AS fence, floor_holder_id AS holderId FROM gate_state WHERE resource = ?')
      .get(SLOT) as { fence: number | null; holderId: string | null } | undefined;
    return row?.fence == null || row.holderId === null ? undefined : { fence: row.fence, holderId: row.holderId };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  tokensDir = await createTempDir('lease-fence-demo-slot-tokens-');
  slotDir = await createTempDir('lease-fence-demo-slot-');
  await writeTokensFile(tokensDir);
});

afterAll(async () => {
  if (slot !== undefined) await stopByPid(slot, 'SIGTERM', 5_000);
  for (const app of coordinators) await app.cleanup();
  await removeTempDir(slotDir);
  await removeTempDir(tokensDir);
});

describe('the demo deploy slot, fence-first', () => {
  it('admits a grant of the slot durably before the acquire is answered', async () => {
    // Arrange
    const coordinator = await startFenceFirstCoordinator();
    slot = await startSlot(coordinator.url);
    await slotLogged('gate link open');

    // Act: nobody writes to the slot
    const grant = await acquire(coordinator, TEST_TOKENS.agentA);

    // Assert: the slot's durable floor is the new fence already, and the log shows the handover
    expect(slotFloor()).toEqual({ fence: grant.fence, holderId: 'agent-a' });
    const types = (await slotEvents(coordinator)).map((event) => event.type);
    expect(types).toEqual(['FenceReserved', 'FenceAdmitted', 'LeaseGranted']);
  });

  it('reports its floor, so a coordinator that lost its whole log grants the slot above it', async () => {
    // Arrange: the slot's floor is agent-a's fence; the coordinator and its data directory are lost
    const before = coordinators[0]!;
    const floorBefore = slotFloor()!;
    const port = Number(new URL(before.url).port);
    await before.cleanup();
    const after = await startFenceFirstCoordinator(port);

    // Act: the slot reconnects and reports its floor; then another agent acquires
    const reported = await firstSlotEvent(after, 'FenceFloorReported');
    const grant = await acquire(after, TEST_TOKENS.agentB);

    // Assert
    expect(reported.data).toMatchObject({
      fence: floorBefore.fence,
      holderId: 'agent-a',
      gateId: TEST_TOKENS.gate.gateId,
    });
    expect(grant.fence).toBeGreaterThan(floorBefore.fence);
    expect(slotFloor()).toEqual({ fence: grant.fence, holderId: 'agent-b' });
  });
});

describe('the demo, when its deploy slot is killed from outside', () => {
  /** The slot processes the demo started so far, in its log order: `{ url, pid }`. */
  const slotsListening = (output: readonly string[]): { url: string; pid: number }[] =>
    output.flatMap((line) => {
      const match = /the deploy slot listens on (\S+) \(pid (\d+)\)/.exec(line);
      return match === null ? [] : [{ url: match[1]!, pid: Number(match[2]) }];
    });

  /** Resolves once `count` slot processes have listened; throws with the demo's output after `timeoutMillis`. */
  async function slotsListened(
    output: readonly string[],
    count: number,
    timeoutMillis = 30_000,
  ): Promise<{ url: string; pid: number }[]> {
    for (const startedAt = performance.now(); slotsListening(output).length < count; await delay(50)) {
      if (performance.now() - startedAt > timeoutMillis)
        throw new Error(`the demo did not start slot #${count} within ${timeoutMillis} ms:\n${output.join('\n')}`);
    }
    return slotsListening(output);
  }

  it('restarts it at once, without waiting for its timed crash', async () => {
    // Arrange: no timed crash at all, so only the exit watcher can restart the slot
    const coordinator = await startFenceFirstCoordinator();
    const dataDir = await createTempDir('lease-fence-demo-outside-kill-');
    const demo = startDemo({
      coordinatorUrl: coordinator.url,
      tokensFile: join(tokensDir, 'tokens.json'),
      dataDir,
      env: { DEMO_RESOURCES: SLOT, DEMO_RESOURCE_RESTART_EVERY_MILLIS: '0', DEMO_SEED: '7' },
    });
    try {
      const [first] = await slotsListened(demo.output, 1);

      // Act: kill -9 from outside the demo
      process.kill(first!.pid, 'SIGKILL');
      const [, second] = await slotsListened(demo.output, 2);

      // Assert: a new slot process on the same URL, which answers, and the log says why
      expect(
        demo.output.some((line) =>
          line.includes('the deploy slot exited (signal SIGKILL) unexpectedly; restarting it'),
        ),
      ).toBe(true);
      expect(second!.pid).not.toBe(first!.pid);
      expect(second!.url).toBe(first!.url);
      await expect(fetch(second!.url)).resolves.toBeDefined();
    } finally {
      await demo.stop();
      await removeTempDir(dataDir);
    }
  });
});
