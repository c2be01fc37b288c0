/**
 * The demo (`node dist/main.js`): a fenced deploy slot (a child process with its own SQLite
 * database), N contending agents (worker threads), and a proxy that loses some of their lease
 * replies, all against a running coordinator. Within a minute the coordinator's log shows
 * grants, renewals, expiries, reassignments and refused stale writes (FenceRejected).
 *
 * Configuration: see `config.ts` (`LEASE_FENCE_URL`, `LEASE_FENCE_TOKENS_FILE`, `DEMO_*`).
 * Stops cleanly on SIGINT / SIGTERM (or after `DEMO_DURATION_MILLIS`, or when the IPC channel of
 * its launcher `scripts/start.mjs` closes because the launcher died): agents release their
 * leases, then the slot reports its last refusals and exits.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { resourceMatches } from '@lease-fence/protocol';
import type { AgentWorkerData } from './agent-worker.js';
import type { AgentStats } from './agent/agent.js';
import { readDemoConfig } from './config.js';
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

await waitForCoordinator(config.coordinatorUrl);

const random = createRandom(config.seed);
const proxy = await openLossyProxy({
  upstreamUrl: config.coordinatorUrl,
  shouldDrop: () => random.chance(config.lostReplyRate),
  log: createLogger('proxy'),
});

/** How long after an exit the demo did not cause it restarts the deploy slot, in milliseconds. */
const UNEXPECTED_EXIT_RESTART_DELAY_MILLIS = 1000;

// The fenced resource: a child process, so it can crash (kill -9) and restart with its floors.
let slot: ChildProcess | undefined;
let slotPort = 0;
const startSlot = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./deploy-slot-main.js', import.meta.url)), [], {
      detached: true,
      env: {
        ...process.env,
        LEASE_FENCE_URL: config.coordinatorUrl,
        DEMO_GATE_TOKEN: tokens.gate.token,
        DEMO_RESOURCES: config.resources.join(','),
        DEMO_SLOT_PORT: String(slotPort),
        LEASE_FENCE_DEMO_DIR: config.dataDir,
      },
    });
    slot = child;
    child.once('message', (message: { type?: string; url?: string }) => {
      if (message.type === 'listening' && message.url !== undefined) {
        slotPort = Number(new URL(message.url).port);
        log(undefined, `the deploy slot listens on ${message.url} (pid ${String(child.pid)})`);
        child.removeAllListeners('exit');
        // An exit the demo did not cause (its timed crash and its stop remove this listener first):
        // restart at once, so agents do not meet a closed port until the next timed crash.
        child.once('exit', (code, signal) => {
          if (stopping) return;
          log(
            undefined,
            `the deploy slot exited (${signal === null ? `code ${String(code)}` : `signal ${signal}`}) unexpectedly; restarting it`,
          );
          setTimeout(() => void restartSlot(), UNEXPECTED_EXIT_RESTART_DELAY_MILLIS);
        });
        resolve(message.url);
      }
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`deploy slot exited before listening (code ${String(code)}, signal ${String(signal)})`)),
    );
  });
const slotUrl = await startSlot();

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
    slotUrl,
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

const restartTimer =
  config.resourceRestartEveryMillis > 0
    ? setInterval(() => {
        const crashed = slot;
        // Exited already (killed from outside, or a restart still under way): its 'exit' listener
        // restarts it, and a second restart would start a second slot.
        if (crashed === undefined || crashed.exitCode !== null || crashed.signalCode !== null) return;
        log(undefined, 'the deploy slot CRASHES (kill -9); restarting it: its floors come back from its database');
        crashed.removeAllListeners('exit');
        crashed.once('exit', () => void restartSlot());
        crashed.kill('SIGKILL');
      }, config.resourceRestartEveryMillis)
    : undefined;

/** Starts the slot again, retrying every 2 s until it listens (or the demo stops). */
async function restartSlot(): Promise<void> {
  while (!stopping) {
    try {
      await startSlot();
      return;
    } catch (error) {
      log(
        undefined,
        `the deploy slot did not restart (${error instanceof Error ? error.message : String(error)}); trying again in 2 s`,
      );
      await delay(2000);
    }
  }
}

let stopping = false;
const stop = async (why: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  if (restartTimer !== undefined) clearInterval(restartTimer);
  log(undefined, `stopping (${why}): agents release their leases`);
  for (const { worker } of workers) worker.postMessage({ type: 'stop' });
  const agentsDone = Promise.all(workers.map(({ exited }) => exited));
  const timedOut = await Promise.race([agentsDone.then(() => false), delay(15_000).then(() => true)]);
  if (timedOut) await Promise.all(workers.map(({ worker }) => worker.terminate()));
  const current = slot;
  if (current !== undefined && current.exitCode === null && current.signalCode === null) {
    current.removeAllListeners('exit');
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill('SIGTERM');
    await Promise.race([exited, delay(5000)]);
  }
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
