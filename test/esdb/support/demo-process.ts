/**
 * Starts the BUILT demo (`apps/demo/dist/main.js`: deploy slots behind gate sidecars, contending agents and a
 * lossy proxy) as a child process against an already started coordinator, the way
 * `scripts/start.mjs` does, and stops it by PID.
 *
 * Build first: `npx nx run @lease-fence/demo:build` (Nx does it before `test` runs).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../support/coordinator-process.js';
import { type ChildExit, stopByPid } from '../../support/stop-by-pid.js';

/** The demo's built entry point. */
export const DEMO_MAIN = join(REPO_ROOT, 'apps/demo/dist/main.js');

/** Options of {@link startDemo}. */
export interface StartDemoOptions {
  /** The coordinator's base URL (`LEASE_FENCE_URL`), e.g. `http://127.0.0.1:40123`. */
  readonly coordinatorUrl: string;
  /** The coordinator's tokens file (`LEASE_FENCE_TOKENS_FILE`): agent tokens and a gate token with a `gateId`. */
  readonly tokensFile: string;
  /** The demo's data directory (`LEASE_FENCE_DEMO_DIR`: its gates' floors and outboxes); the caller removes it. */
  readonly dataDir: string;
  /** The demo's `DEMO_*` settings (see `apps/demo/src/config.ts`), e.g. `{ DEMO_TTL_MILLIS: '1500' }`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A running demo child process. */
export interface RunningDemo {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Its stdout lines and stderr chunks so far, in arrival order (for failure messages and assertions). */
  readonly output: readonly string[];
  /**
   * SIGTERM by PID: the demo's agents release their leases and its gates exit. A demo still
   * running after `timeoutMillis` (milliseconds, @defaultValue 30 000) is killed with SIGKILL.
   * Resolves with how it exited.
   */
  stop(timeoutMillis?: number): Promise<ChildExit>;
}

/** Variables of the parent that would configure the demo behind the caller's back. */
const isDemoVariable = (name: string): boolean => name.startsWith('DEMO_') || name.startsWith('LEASE_FENCE_');

/**
 * Spawns the built demo. It waits for the coordinator's `/readyz` by itself, so this returns at once.
 * @throws Error naming the build command when `apps/demo/dist/main.js` is missing.
 */
export function startDemo(options: StartDemoOptions): RunningDemo {
  if (!existsSync(DEMO_MAIN)) {
    throw new Error(`${DEMO_MAIN} is missing: build it first with \`npx nx run @lease-fence/demo:build\``);
  }
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !isDemoVariable(name)));
  const child = spawn(process.execPath, [DEMO_MAIN], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...inherited,
      LEASE_FENCE_URL: options.coordinatorUrl,
      LEASE_FENCE_TOKENS_FILE: options.tokensFile,
      LEASE_FENCE_DEMO_DIR: options.dataDir,
      ...options.env,
    },
  });
  const output: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => output.push(line));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  return {
    pid: child.pid!,
    child,
    output,
    stop: (timeoutMillis = 30_000) => stopByPid(child, 'SIGTERM', timeoutMillis),
  };
}
