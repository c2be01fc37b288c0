/**
 * The demo (`node dist/main.js`): deploy slots behind real `lease-fence-gate` sidecars (a plain
 * deploy recorder as their upstream, one sidecar child process per slot, each with its floor and
 * refusal outbox under `<LEASE_FENCE_DEMO_DIR>/gates/<slot>`), N contending agents (worker
 * threads) that deploy through the gates with their signed tokens, and a proxy that loses some
 * of their lease replies, all against a running coordinator. Within a minute the coordinator's log shows
 * grants, renewals, expiries, reassignments and refused stale writes (FenceRejected).
 *
 * Configuration: see `config.ts` (`LEASE_FENCE_URL`, `LEASE_FENCE_TOKENS_FILE`, `DEMO_*`).
 * Stops cleanly on SIGINT / SIGTERM (or after `DEMO_DURATION_MILLIS`, or when the IPC channel of
 * its launcher `scripts/start.mjs` closes because the launcher died): agents release their
 * leases, then each gate reports its last refusals and exits.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { resourceMatches } from '@lease-fence/protocol';
import type { AgentWorkerData } from './agent-worker.js';
import type { AgentStats } from './agent/agent.js';
import { readDemoConfig } from './config.js';
import { openDeployRecorder } from './deploy-recorder/deploy-recorder.js';
import { startGateProcess } from './gate-process.js';
import { createLogger, seconds } from './log.js';
import { openLossyProxy } from './lossy-proxy.js';
import { createRandom } from './random.js';
import { readDemoTokens } from './tokens.js';

const log = createLogger('demo');
const config = readDemoConfig(process.env);
const tokens = await readDemoTokens(config.tokensFile);
const agents = tokens.agents.slice(0, config.agents);
mkdirSync(config.dataDir, { recursive: true });
log(
  undefined,
  `${agents.length} agents on ${config.resources.join(', ')}; ttl ${seconds(config.ttlMillis)}, model calls ${seconds(config.modelCallMillis.min)}–${seconds(config.modelCallMillis.max)}, ` +
    `stall probability ${config.stallProbability}, lost replies ${config.lostReplyRate}, seed ${config.seed}`,
);

/** Set once the demo stops: nothing is restarted from then on. */
let stopping = false;

await waitForCoordinator(config.coordinatorUrl);

const random = createRandom(config.seed);
const proxy = await openLossyProxy({
  upstreamUrl: config.coordinatorUrl,
  shouldDrop: () => random.chance(config.lostReplyRate),
  log: createLogger('proxy'),
});

/** How long after an exit the demo did not cause it restarts a gate, in milliseconds. */
const UNEXPECTED_EXIT_RESTART_DELAY_MILLIS = 1000;
/** How often each gate reports its status (floor, outbox backlog, counters) to the coordinator, in milliseconds. */
const GATE_STATUS_REPORT_MILLIS = 2000;

// The upstream: a plain service that records the deploys reaching it and checks nothing.
const recorder = await openDeployRecorder({ port: 0, log: createLogger('deploy-slots') });
log(
  undefined,
  `the deploy recorder (the slots' upstream) listens on ${recorder.url}; GET ${recorder.url}/deploys lists what reached it`,
);

/** One `lease-fence-gate` sidecar per slot, in front of the recorder: the fenced resource. */
interface SlotGate {
  readonly resource: string;
  readonly dataDir: string;
  /** Fixed after the first start, so agents find a restarted gate at the same URL. */
  port: number;
  url: string;
  child: ChildProcess | undefined;
}
const gateLog = createLogger('gate');
const slotGates = new Map<string, SlotGate>(
  config.resources.map((resource) => [
    resource,
    {
      resource,
      dataDir: join(config.dataDir, 'gates', encodeURIComponent(resource)),
      port: 0,
      url: '',
      child: undefined,
    },
  ]),
);

/** Starts (or restarts) the gate of one slot; a restart keeps its port and its data directory (floor and outbox). */
const startGate = async (slot: SlotGate): Promise<void> => {
  mkdirSync(slot.dataDir, { recursive: true });
  const started = await startGateProcess({
    resource: slot.resource,
    upstreamUrl: recorder.url,
    coordinatorUrl: config.coordinatorUrl,
    gateToken: tokens.gate.token,
    dataDir: slot.dataDir,
    port: slot.port,
    statusReportMillis: GATE_STATUS_REPORT_MILLIS,
    log: gateLog,
  });
  slot.child = started.child;
  slot.url = started.url;
  slot.port = Number(new URL(started.url).port);
  log(slot.resource, `its lease-fence-gate listens on ${started.url} (pid ${String(started.child.pid)})`);
  // An exit the demo did not cause (its timed crash and its stop remove this listener first):
  // restart at once, so agents do not meet a closed port until the next timed crash.
  started.child.once('exit', (code, signal) => {
    if (stopping) return;
    log(
      slot.resource,
      `its gate exited (${signal === null ? `code ${String(code)}` : `signal ${signal}`}) unexpectedly; restarting it`,
    );
    setTimeout(() => void restartGate(slot), UNEXPECTED_EXIT_RESTART_DELAY_MILLIS);
  });
};
await Promise.all([...slotGates.values()].map(startGate));

const uncovered = config.resources.filter(
  (resource) => !tokens.gate.resources.some((pattern) => resourceMatches(pattern, resource)),
);
if (uncovered.length > 0)
  log(undefined, `warning: the gate token does not cover ${uncovered.join(', ')}; refusals there will not be reported`);

const stats: AgentStats[] = [];
const workers = agents.map((agent, index) => {
  const data: AgentWorkerData = {
    holderId: agent.holderId,
    token: agent.token,
    coordinatorUrl: proxy.url,
    gateUrls: Object.fromEntries([...slotGates.values()].map((slot) => [slot.resource, slot.url])),
    resources: config.resources,
    ttlMillis: config.ttlMillis,
    clockSkewMillis: config.clockSkewMillis,
    modelCallMillis: config.modelCallMillis,
    stallProbability: config.stallProbability,
    seed: config.seed + index + 1,
  };
  const worker = new Worker(new URL('./agent-worker.js', import.meta.url), { workerData: data });
  worker.on('message', (message: { type?: string; stats?: AgentStats }) => {
    if (message.type === 'stats' && message.stats !== undefined) stats.push(message.stats);
  });
  worker.on('error', (error) => log(undefined, `${agent.holderId} crashed: ${error.message}`));
  return { worker, exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())) };
});

let crashes = 0;
const restartTimer =
  config.resourceRestartEveryMillis > 0
    ? setInterval(() => {
        // One gate at a time, in turn.
        const slot = [...slotGates.values()][crashes % slotGates.size]!;
        crashes += 1;
        const crashed = slot.child;
        // Exited already (killed from outside, or a restart still under way): its 'exit' listener
        // restarts it, and a second restart would start a second gate.
        if (crashed === undefined || crashed.exitCode !== null || crashed.signalCode !== null) return;
        log(
          slot.resource,
          'its gate CRASHES (kill -9); restarting it: its floor and outbox come back from its data directory',
        );
        crashed.removeAllListeners('exit');
        crashed.once('exit', () => void restartGate(slot));
        crashed.kill('SIGKILL');
      }, config.resourceRestartEveryMillis)
    : undefined;

/** Starts a slot's gate again, retrying every 2 s until it listens (or the demo stops). */
async function restartGate(slot: SlotGate): Promise<void> {
  while (!stopping) {
    try {
      await startGate(slot);
      return;
    } catch (error) {
      log(
        slot.resource,
        `its gate did not restart (${error instanceof Error ? error.message : String(error)}); trying again in 2 s`,
      );
      await delay(2000);
    }
  }
}

const stop = async (why: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  if (restartTimer !== undefined) clearInterval(restartTimer);
  log(undefined, `stopping (${why}): agents release their leases`);
  for (const { worker } of workers) worker.postMessage({ type: 'stop' });
  const agentsDone = Promise.all(workers.map(({ exited }) => exited));
  const timedOut = await Promise.race([agentsDone.then(() => false), delay(15_000).then(() => true)]);
  if (timedOut) await Promise.all(workers.map(({ worker }) => worker.terminate()));
  // Each gate drains its refusal outbox before it exits (SIGTERM), within its own bound.
  await Promise.all(
    [...slotGates.values()].map(async ({ child }) => {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      child.removeAllListeners('exit');
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      if ((await Promise.race([exited.then(() => false), delay(5000).then(() => true)])) === true)
        child.kill('SIGKILL');
    }),
  );
  await recorder.close();
  await proxy.close();
  const total = stats.reduce(
    (sum, each) => ({
      grants: sum.grants + each.grants,
      denials: sum.denials + each.denials,
      accepted: sum.accepted + each.acceptedWrites,
      refused: sum.refused + each.refusedWrites,
      lost: sum.lost + each.lostLeases,
    }),
    { grants: 0, denials: 0, accepted: 0, refused: 0, lost: 0 },
  );
  log(
    undefined,
    `done: ${total.grants} grants, ${total.denials} denials, ${total.lost} leases lost, ${total.accepted} writes accepted, ${total.refused} stale writes refused, ${proxy.dropped} replies dropped by the proxy`,
  );
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
// Started by scripts/start.mjs with an IPC channel: the channel closes when the launcher dies.
if (process.channel !== undefined) {
  process.channel.unref();
  process.once('disconnect', () => void stop('launcher gone'));
}
if (config.durationMillis > 0)
  setTimeout(() => void stop(`ran for ${seconds(config.durationMillis)}`), config.durationMillis);

/** Waits until the coordinator answers `GET /readyz` with 200 (up to 60 s). */
async function waitForCoordinator(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${url.replace(/\/+$/, '')}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the coordinator at ${url} was not ready within 60 s`);
    await delay(250);
  }
}

function delay(millis: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, millis));
}
