/**
 * The chaos run: the built coordinator (SQLite log) and the gate — one built `lease-fence-gate`
 * sidecar per resource, as the demo runs them, each with its floor file and refusal outbox, in
 * front of a recording upstream — under a demo-like workload, both killed with SIGKILL at random
 * moments, in both orders, then restarted, cycle after cycle. Afterwards it checks, from the
 * gates' own floor files and the coordinator's log:
 * - every refusal a gate made durable (seqs 1 .. nextSeq - 1 of each resource) is in the log
 *   exactly once, with the content the writer was told (for each 409 a writer received);
 * - per (gate, resource) the seqs in the log are contiguous from 1, and no `RejectionsMissing`;
 * - every grant acknowledged to an agent is in the log (0 acknowledged grants lost).
 *
 * The workload is the demo's story without its multi-second stalls: per resource, one agent takes
 * the lease and writes, the other takes it over and writes, then the first writes again under
 * its old fence and is refused. Run by `chaos.int.spec.ts` (a short run in `npm test`) and by
 * `npm run chaos -- --cycles 50` (the long run, which prints the figures).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LeaseFenceClient, openFileFloorStore, type AcquireResult, type Lease } from '@lease-fence/client';
import { EventsReplySchema, type CoordinatorEvent } from '@lease-fence/protocol';
import { REPO_ROOT, startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { startRecordingUpstream } from '../gate/support/recording-upstream.js';
import { followUntilListening } from '../support/listening-child.js';
import { stopByPid } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

/** The built sidecar: one per resource, as the demo runs them. */
export const GATE_MAIN = join(REPO_ROOT, 'apps/gate/dist/main.js');

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  /** Kill-and-restart cycles. Integer ≥ 1. */
  readonly cycles: number;
  /** Seed of the kill schedule (which order, how long between kills). @defaultValue 1 */
  readonly seed?: number;
  /**
   * Before each cycle's kills: the workload runs until a writer has been refused once more (at
   * most 30 s, so a slow machine still gets refusals in every cycle), then for a random time in
   * this range, milliseconds. @defaultValue [0, 800]
   */
  readonly runMillis?: readonly [number, number];
  /** Progress lines. @defaultValue none */
  readonly log?: (line: string) => void;
  /**
   * How the agents reach the coordinator (`LeaseFenceClient`'s `transport`): with `'websocket'`
   * each agent's link drops at every coordinator kill and its in-flight operations are resent
   * with the same requestId on the next connection. @defaultValue 'http'
   */
  readonly transport?: 'http' | 'websocket';
}

/** What one chaos run did and found. */
export interface ChaosReport {
  readonly cycles: number;
  /** Cycles that killed the coordinator first, then the gate; and the other order. */
  readonly coordinatorFirst: number;
  readonly gateFirst: number;
  /** Refusals the gate made durable (the sum over resources of next_seq - 1). */
  readonly refusalsDurable: number;
  /** Writes the gate admitted and the upstream answered (200). */
  readonly writesAccepted: number;
  /** 409 refusals the writers received. */
  readonly refusalsAnswered: number;
  /** `FenceRejected` events of the gate in the log. */
  readonly refusalsLogged: number;
  /** Refusals the gate made durable that the log lacks; (gate, resource, seq) logged more than once; answered refusals whose logged content differs. */
  readonly refusalsMissingFromLog: number;
  readonly refusalsLoggedTwice: number;
  readonly refusalsWithOtherContent: number;
  /** Seqs in the log that are not contiguous from 1 (per resource), and `RejectionsMissing` events. */
  readonly seqGaps: number;
  readonly rejectionsMissingEvents: number;
  /** Grants acknowledged to agents, and those the log lacks. */
  readonly grantsAcknowledged: number;
  readonly grantsLost: number;
  readonly wallMillis: number;
}

const RESOURCES = ['deploy-chaos-a', 'deploy-chaos-b'] as const;
const GATE_ID = TEST_TOKENS.gate.gateId;
const AGENTS = [TEST_TOKENS.agentA, TEST_TOKENS.agentB] as const;

/** A deterministic pseudo-random stream (mulberry32) for the kill schedule. */
const createRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** The running gate: one sidecar per resource. */
interface GateProcess {
  readonly children: readonly ChildProcess[];
  /** Each resource's sidecar URL. */
  readonly urls: ReadonlyMap<string, string>;
}

/** The floor file and outbox directory of `resource`'s sidecar. */
const gateDataDir = (dataDir: string, resource: string): string => join(dataDir, resource);

/**
 * Starts one sidecar per resource (on `ports`' port for it, 0 = any) in front of `upstreamUrl`,
 * and waits for each to log `listening`.
 */
const startGate = async (options: {
  coordinatorUrl: string;
  upstreamUrl: string;
  dataDir: string;
  ports: ReadonlyMap<string, number>;
}): Promise<GateProcess> => {
  const started = await Promise.all(
    RESOURCES.map(async (resource) => {
      const child = spawn(process.execPath, [GATE_MAIN], {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          LEASE_FENCE_GATE_RESOURCE: resource,
          LEASE_FENCE_GATE_UPSTREAM: options.upstreamUrl,
          LEASE_FENCE_COORDINATOR_URL: options.coordinatorUrl,
          LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
          LEASE_FENCE_DATA_DIR: gateDataDir(options.dataDir, resource),
          PORT: String(options.ports.get(resource) ?? 0),
          HOST: '127.0.0.1',
          LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS: '500',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        return { resource, child, url: await followUntilListening(child, `the gate of ${resource}`).url };
      } catch (error) {
        child.kill('SIGKILL');
        throw error;
      }
    }),
  );
  return {
    children: started.map(({ child }) => child),
    urls: new Map(started.map(({ resource, url }) => [resource, url])),
  };
};

/** SIGKILL (a crash) or SIGTERM of every sidecar of the gate, by PID. */
const stopGate = async (gate: GateProcess, signal: NodeJS.Signals): Promise<void> => {
  await Promise.all(gate.children.map((child) => stopByPid(child, signal)));
};

/** A writer's view of one write to the slot. */
type WriteOutcome =
  | { readonly kind: 'written' }
  | { readonly kind: 'refused'; readonly seq: number; readonly content: string }
  | { readonly kind: 'unanswered' };

const contentOf = (rejection: {
  kind: string;
  rejected: { holderId: string; fence: number };
  current: { holderId: string; fence: number };
}): string =>
  JSON.stringify([
    rejection.kind,
    rejection.rejected.holderId,
    rejection.rejected.fence,
    rejection.current.holderId,
    rejection.current.fence,
  ]);

/** Sends `step` under `lease` through its resource's sidecar, the signed token in `Lease-Fence-Token`. */
const writeToSlot = async (gateUrl: string, lease: Lease, step: string): Promise<WriteOutcome> => {
  try {
    const response = await fetch(`${gateUrl}/slots/${encodeURIComponent(lease.resource)}/deploy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'lease-fence-token': lease.signedToken },
      body: JSON.stringify({ step }),
      signal: AbortSignal.timeout(3000),
    });
    if (response.status === 200) {
      await response.text(); // the recording upstream's plain-text answer
      return { kind: 'written' };
    }
    const body = (await response.json()) as {
      reason?: string;
      seq?: number;
      rejected?: { holderId: string; fence: number };
      current?: { holderId: string; fence: number };
    };
    if (
      response.status === 409 &&
      body.seq !== undefined &&
      body.rejected !== undefined &&
      body.current !== undefined
    ) {
      const kind = body.reason === 'double-grant' ? 'double-grant' : 'stale';
      return {
        kind: 'refused',
        seq: body.seq,
        content: contentOf({ kind, rejected: body.rejected, current: body.current }),
      };
    }
    return { kind: 'unanswered' };
  } catch {
    return { kind: 'unanswered' };
  }
};

/** Reads the whole log through `GET /v1/events`. */
const readLog = async (coordinatorUrl: string): Promise<CoordinatorEvent[]> => {
  const events: CoordinatorEvent[] = [];
  for (let after = 0; ;) {
    const response = await fetch(`${coordinatorUrl}/v1/events?after=${after}&limit=1000`, {
      headers: { authorization: `Bearer ${TEST_TOKENS.viewer.token}` },
    });
    const page = EventsReplySchema.parse(await response.json());
    events.push(...page.events.map((recorded) => recorded.event));
    const last = page.events.at(-1);
    if (last === undefined || last.position >= page.head) return events;
    after = last.position;
  }
};

/** Per resource, the gate's `nextSeq` from its own floor file (what it made durable). */
const readGateSeqs = async (dataDir: string): Promise<Map<string, number>> => {
  const seqs = new Map<string, number>();
  for (const resource of RESOURCES) {
    const store = await openFileFloorStore({
      path: join(gateDataDir(dataDir, resource), `${encodeURIComponent(resource)}.floor.json`),
      resource,
    });
    seqs.set(resource, (await store.load())?.nextSeq ?? 1);
  }
  return seqs;
};

/**
 * Runs the chaos: starts both processes, runs the workload while killing and restarting them
 * `cycles` times, lets the gate drain its outbox, and checks the log.
 * @throws if a process cannot be (re)started; the invariants are reported, not thrown.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  if (!existsSync(GATE_MAIN))
    throw new Error(`${GATE_MAIN} is missing: build it first with \`npx nx run @lease-fence/gate:build\``);
  const startedAt = performance.now();
  const random = createRandom(options.seed ?? 1);
  const between = ([low, high]: readonly [number, number]): number => low + Math.floor(random() * (high - low + 1));
  const log = options.log ?? (() => undefined);
  const coordinatorDir = await createTempDir('lease-fence-chaos-coordinator-');
  const slotDir = await createTempDir('lease-fence-chaos-gate-');
  const upstream = await startRecordingUpstream();
  // Short leases and a short grace keep the workload moving across coordinator restarts.
  const coordinatorEnv = { LEASE_FENCE_TTL_MILLIS: '600', LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '100' };
  // A loaded machine can take long to start a process: wait for it rather than fail the run.
  const startTimeoutMillis = 180_000;
  /** The processes running now, for the clean-up. */
  const started: { coordinator?: RunningCoordinator; gate?: GateProcess } = {};
  try {
    return await chaosCycles();
  } finally {
    // Whatever happened, nothing of this run stays behind.
    if (started.gate !== undefined) await stopGate(started.gate, 'SIGKILL');
    await started.coordinator?.kill();
    await upstream.close();
    await removeTempDir(coordinatorDir);
    await removeTempDir(slotDir);
  }

  async function chaosCycles(): Promise<ChaosReport> {
    let coordinator = (started.coordinator = await startCoordinator({
      dataDir: coordinatorDir,
      env: coordinatorEnv,
      startTimeoutMillis,
    }));
    const coordinatorPort = new URL(coordinator.url).port;
    let gate = (started.gate = await startGate({
      coordinatorUrl: coordinator.url,
      upstreamUrl: upstream.url,
      dataDir: slotDir,
      ports: new Map(),
    }));
    const gateUrls = gate.urls;
    const gatePorts = new Map([...gateUrls].map(([resource, url]) => [resource, Number(new URL(url).port)]));

    const acknowledgedGrants: { resource: string; holderId: string; fence: number }[] = [];
    const answeredRefusals: { resource: string; seq: number; content: string }[] = [];
    let stopping = false;

    const clients = AGENTS.map(
      (agent) =>
        new LeaseFenceClient({
          baseUrl: coordinator.url,
          token: agent.token,
          holderId: agent.holderId,
          clockSkewMillis: 50,
          timeoutMillis: 1000,
          retry: { maxAttempts: 3, initialDelayMillis: 20, maxDelayMillis: 200 },
          transport: options.transport ?? 'http',
        }),
    );
    const acquire = async (client: LeaseFenceClient, resource: string): Promise<Lease | undefined> => {
      let result: AcquireResult;
      try {
        result = await client.acquire(resource, { ttlMillis: 600 });
      } catch {
        return undefined; // the coordinator is down or recovering: nothing was acknowledged
      }
      if (!result.ok) return undefined;
      acknowledgedGrants.push({ resource, holderId: result.lease.holderId, fence: result.lease.fence });
      return result.lease;
    };
    const release = async (client: LeaseFenceClient, lease: Lease): Promise<void> => {
      await client.release(lease).catch(() => undefined); // best effort: a lease not released expires
    };
    const outcomes = { written: 0, refused: 0, unanswered: 0 };
    const note = async (resource: string, outcome: WriteOutcome): Promise<void> => {
      outcomes[outcome.kind] += 1;
      if (outcome.kind === 'refused') answeredRefusals.push({ resource, seq: outcome.seq, content: outcome.content });
      if (outcome.kind === 'unanswered') await sleep(100); // the slot is down: do not spin
    };

    // The workload: per resource, first takes the lease and writes, second takes it over and
    // writes, first writes again under its old fence (refused once second's write landed).
    const workload = async (resource: string, offset: number): Promise<void> => {
      const slotUrl = gateUrls.get(resource)!;
      for (let round = 0; !stopping; round += 1) {
        const [first, second] = round % 2 === offset ? [clients[0]!, clients[1]!] : [clients[1]!, clients[0]!];
        const older = await acquire(first, resource);
        if (older === undefined) {
          await sleep(50);
          continue;
        }
        await note(resource, await writeToSlot(slotUrl, older, `round ${round} claim`));
        await release(first, older);
        let newer: Lease | undefined;
        for (let attempt = 0; newer === undefined && attempt < 40 && !stopping; attempt += 1) {
          newer = await acquire(second, resource);
          if (newer === undefined) await sleep(50);
        }
        if (newer === undefined) continue;
        await note(resource, await writeToSlot(slotUrl, newer, `round ${round} take-over`));
        await note(resource, await writeToSlot(slotUrl, older, `round ${round} stale`));
        await release(second, newer);
      }
    };

    let coordinatorFirst = 0;
    let gateFirst = 0;
    const restartCoordinator = async (): Promise<void> => {
      const t = performance.now();
      coordinator = started.coordinator = await startCoordinator({
        dataDir: coordinatorDir,
        env: { ...coordinatorEnv, PORT: coordinatorPort },
        startTimeoutMillis,
      });
      log(`coordinator up again in ${Math.round(performance.now() - t)} ms`);
    };
    const restartGate = async (): Promise<void> => {
      const t = performance.now();
      gate = started.gate = await startGate({
        coordinatorUrl: coordinator.url,
        upstreamUrl: upstream.url,
        dataDir: slotDir,
        ports: gatePorts,
      });
      log(`gate up again in ${Math.round(performance.now() - t)} ms`);
    };

    const running = RESOURCES.map((resource, index) => workload(resource, index % 2));
    try {
      for (let cycle = 1; cycle <= options.cycles; cycle += 1) {
        const refusedBefore = outcomes.refused;
        const progressDeadline = Date.now() + 30_000;
        while (outcomes.refused === refusedBefore && Date.now() < progressDeadline) await sleep(50);
        await sleep(between(options.runMillis ?? [0, 800]));
        const order = random() < 0.5 ? 'coordinator-first' : 'gate-first';
        if (order === 'coordinator-first') coordinatorFirst += 1;
        else gateFirst += 1;
        const kills =
          order === 'coordinator-first'
            ? [() => coordinator.kill(), () => stopGate(gate, 'SIGKILL')]
            : [() => stopGate(gate, 'SIGKILL'), () => coordinator.kill()];
        await kills[0]!();
        await sleep(between([0, 300]));
        await kills[1]!();
        await sleep(between([0, 200]));
        const restartedAt = performance.now();
        if (random() < 0.5) {
          await restartCoordinator();
          await restartGate();
        } else {
          await restartGate();
          await restartCoordinator();
        }
        log(
          `cycle ${cycle}/${options.cycles}: killed ${order === 'coordinator-first' ? 'coordinator, then gate' : 'gate, then coordinator'}; both up again in ${Math.round(performance.now() - restartedAt)} ms; writes so far ${JSON.stringify(outcomes)}`,
        );
      }
    } finally {
      stopping = true;
      await Promise.all(running);
      await Promise.all(clients.map((client) => client.close()));
    }

    // Let the gate drain its outbox: every durable refusal must reach the log.
    const durable = await readGateSeqs(slotDir);
    const deadline = Date.now() + 60_000;
    let events = await readLog(coordinator.url);
    const loggedSeqs = (resource: string): number[] =>
      events.flatMap((event) =>
        event.type === 'FenceRejected' && event.data.gateId === GATE_ID && event.data.resource === resource
          ? [event.data.seq]
          : [],
      );
    while (
      Date.now() < deadline &&
      RESOURCES.some((resource) => new Set(loggedSeqs(resource)).size < (durable.get(resource) ?? 1) - 1)
    ) {
      await sleep(200);
      events = await readLog(coordinator.url);
    }
    await stopGate(gate, 'SIGTERM');
    await coordinator.stop();

    let refusalsDurable = 0;
    let refusalsMissingFromLog = 0;
    let refusalsLoggedTwice = 0;
    let seqGaps = 0;
    const loggedContent = new Map<string, string>();
    for (const event of events) {
      if (event.type === 'FenceRejected' && event.data.gateId === GATE_ID)
        loggedContent.set(`${event.data.resource}#${event.data.seq}`, contentOf(event.data));
    }
    for (const resource of RESOURCES) {
      const made = (durable.get(resource) ?? 1) - 1;
      refusalsDurable += made;
      const seqs = loggedSeqs(resource);
      const distinct = new Set(seqs);
      refusalsLoggedTwice += seqs.length - distinct.size;
      for (let seq = 1; seq <= made; seq += 1) if (!distinct.has(seq)) refusalsMissingFromLog += 1;
      const sorted = [...distinct].sort((a, b) => a - b);
      sorted.forEach((seq, index) => {
        if (seq !== index + 1) seqGaps += 1;
      });
    }
    const refusalsWithOtherContent = answeredRefusals.filter(
      (refusal) => loggedContent.get(`${refusal.resource}#${refusal.seq}`) !== refusal.content,
    ).length;
    const granted = new Set(
      events.flatMap((event) =>
        event.type === 'LeaseGranted' ? [`${event.data.resource}|${event.data.holderId}|${event.data.fence}`] : [],
      ),
    );
    const grantsLost = acknowledgedGrants.filter(
      (grant) => !granted.has(`${grant.resource}|${grant.holderId}|${grant.fence}`),
    ).length;
    return {
      cycles: options.cycles,
      coordinatorFirst,
      gateFirst,
      refusalsDurable,
      writesAccepted: outcomes.written,
      refusalsAnswered: answeredRefusals.length,
      refusalsLogged: events.filter((event) => event.type === 'FenceRejected' && event.data.gateId === GATE_ID).length,
      refusalsMissingFromLog,
      refusalsLoggedTwice,
      refusalsWithOtherContent,
      seqGaps,
      rejectionsMissingEvents: events.filter((event) => event.type === 'RejectionsMissing').length,
      grantsAcknowledged: acknowledgedGrants.length,
      grantsLost,
      wallMillis: Math.round(performance.now() - startedAt),
    };
  }
}
