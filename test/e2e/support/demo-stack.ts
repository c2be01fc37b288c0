/**
 * What `npm start` runs, started the way the black-box tests start it: the BUILT coordinator on
 * an ephemeral loopback port with a temporary data dir (SQLite log) and tokens file, serving the
 * built dashboard, and the built demo (`apps/demo/dist/main.js`: deploy slots behind gate sidecars and
 * contending agents) against it. The coordinator can be crashed (`kill -9`) and restarted on the
 * same data dir and the same port, so the demo's agents and the browser reconnect to it.
 *
 * Build first: `npx nx run-many -t build -p @lease-fence/coordinator @lease-fence/dashboard @lease-fence/demo`
 * (Nx does it before the test project's `test` target).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  COORDINATOR_MAIN,
  REPO_ROOT,
  startCoordinator,
  type RunningCoordinator,
} from '../../support/coordinator-process.js';
import { stopByPid } from '../../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../../support/temp-dir.js';
import { writeTokensFile, type TokenEntry } from '../../support/test-tokens.js';

/** The built dashboard the coordinator serves at `/`. */
export const DASHBOARD_DIST = join(REPO_ROOT, 'apps/dashboard/dist');
/** The built demo's entry point. */
export const DEMO_MAIN = join(REPO_ROOT, 'apps/demo/dist/main.js');

/** The viewer token of the stack (exists only in tests). */
export const E2E_VIEWER_TOKEN = 'e2e-viewer-7c1d4b9a02';

/** One viewer, four agents (`agent-1` … `agent-4`) and the demo's gate (`deploy-gate` over `deploy-*`). */
export const E2E_TOKENS: readonly TokenEntry[] = [
  { token: E2E_VIEWER_TOKEN, role: 'viewer' },
  ...[1, 2, 3, 4].map((index): TokenEntry => ({
    token: `e2e-agent-${index}-5e8f30c1`,
    role: 'agent',
    holderId: `agent-${index}`,
  })),
  { token: 'e2e-gate-91b2d6f4a7', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] },
];

/**
 * The demo's settings for the browser tests: a short TTL (1.5 s, so stalls of 2.5–3 s outlive it)
 * and a stall in half of the model calls, so a refused stale write (`FenceRejected`) reaches the
 * log within seconds rather than a minute. See `apps/demo/src/config.ts`.
 */
export const E2E_DEMO_ENV: Readonly<Record<string, string>> = {
  DEMO_AGENTS: '4',
  DEMO_RESOURCES: 'deploy-slot-a,deploy-slot-b,deploy-slot-c',
  DEMO_TTL_MILLIS: '1500',
  DEMO_MODEL_CALL_MILLIS: '300-2500',
  DEMO_STALL_PROBABILITY: '0.5',
  DEMO_SEED: '20260528',
};

/**
 * The coordinator's settings: the defaults, serving the built dashboard. (The stream's heartbeat
 * stays at 5 s and reaches only idle clients, so a paused page must learn the head of the log
 * from the events its stream drops, as it would in production.)
 */
const COORDINATOR_ENV: Readonly<Record<string, string>> = {
  LEASE_FENCE_DASHBOARD_DIR: DASHBOARD_DIST,
};

/** Options of {@link startDemoStack}. */
export interface DemoStackOptions {
  /** More coordinator settings (e.g. `LEASE_FENCE_FENCE_FIRST`), kept across restarts. @defaultValue none */
  readonly coordinatorEnv?: Readonly<Record<string, string>>;
}

/** A running coordinator + demo. */
export interface DemoStack {
  /** `http://127.0.0.1:<port>`; the same across {@link DemoStack.crashAndRestartCoordinator}. */
  readonly url: string;
  readonly viewerToken: string;
  readonly dataDir: string;
  /** The demo's last output lines (for failure messages). */
  demoOutput(): string;
  /**
   * `kill -9` of the coordinator, then a new one on the same data dir and port; resolves once it
   * logged `ready` (recovery done, `CoordinatorStarted` appended).
   */
  crashAndRestartCoordinator(): Promise<RunningCoordinator>;
  /** Stops the demo (SIGTERM: its agents release their leases), then the coordinator, and removes the data dir. */
  stop(): Promise<void>;
}

/** Names what is not built yet, or undefined when everything the stack runs is built. */
export function missingBuildReason(): string | undefined {
  const missing = [COORDINATOR_MAIN, DEMO_MAIN, join(DASHBOARD_DIST, 'index.html')].filter((file) => !existsSync(file));
  return missing.length === 0
    ? undefined
    : `not built: ${missing.join(', ')}; run \`npx nx run-many -t build -p @lease-fence/coordinator @lease-fence/dashboard @lease-fence/demo\``;
}

/**
 * Starts the coordinator (waits for `ready`) and the demo (does not wait: tests wait on the log).
 *
 * @throws Error from {@link missingBuildReason}, or when the coordinator does not start.
 */
export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const notBuilt = missingBuildReason();
  if (notBuilt !== undefined) throw new Error(notBuilt);
  const dataDir = await createTempDir('lease-fence-e2e-');
  const tokensFile = await writeTokensFile(dataDir, E2E_TOKENS);
  const env = { ...COORDINATOR_ENV, ...options.coordinatorEnv, LEASE_FENCE_TOKENS_FILE: tokensFile };
  let coordinator: RunningCoordinator;
  try {
    coordinator = await startCoordinator({ dataDir, env });
  } catch (error) {
    await removeTempDir(dataDir);
    throw error;
  }
  const url = coordinator.url;
  const demo = spawnDemo({ coordinatorUrl: url, tokensFile, demoDir: join(dataDir, 'demo') });

  return {
    url,
    viewerToken: E2E_VIEWER_TOKEN,
    dataDir,
    demoOutput: () => demo.output.join('\n'),
    async crashAndRestartCoordinator() {
      await coordinator.kill();
      coordinator = await startCoordinator({ dataDir, env: { ...env, PORT: new URL(url).port } });
      return coordinator;
    },
    async stop() {
      try {
        await stopByPid(demo.child, 'SIGTERM', 20_000);
        await coordinator.stop();
      } finally {
        await coordinator.cleanup();
        await removeTempDir(dataDir);
      }
    },
  };
}

interface SpawnedDemo {
  readonly child: ChildProcess;
  /** The last 200 lines it printed. */
  readonly output: string[];
}

/** Starts `apps/demo/dist/main.js` as `scripts/start.mjs` does (same environment variables). */
function spawnDemo(options: {
  readonly coordinatorUrl: string;
  readonly tokensFile: string;
  readonly demoDir: string;
}): SpawnedDemo {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('DEMO_') && !name.startsWith('LEASE_FENCE_')),
  );
  const child = spawn(process.execPath, [DEMO_MAIN], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...inherited,
      ...E2E_DEMO_ENV,
      LEASE_FENCE_URL: options.coordinatorUrl,
      LEASE_FENCE_TOKENS_FILE: options.tokensFile,
      LEASE_FENCE_DEMO_DIR: options.demoDir,
    },
  });
  const output: string[] = [];
  const keep = (line: string): void => {
    output.push(line);
    if (output.length > 200) output.shift();
  };
  createInterface({ input: child.stdout! }).on('line', keep);
  createInterface({ input: child.stderr! }).on('line', (line) => keep(`stderr: ${line}`));
  process.once('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, output };
}
