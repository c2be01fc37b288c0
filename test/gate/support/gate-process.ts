/**
 * Starts the BUILT sidecar (`apps/gate/dist/main.js`) as a child process, configured only by
 * its environment as an operator would, on 127.0.0.1 port 0; stops it by PID (SIGTERM, or
 * SIGKILL for a crash).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { followUntilListening } from '../../support/listening-child.js';
import { stopByPid, waitForExit } from '../../support/stop-by-pid.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built sidecar's entry point. */
export const GATE_MAIN = join(ROOT, 'apps/gate/dist/main.js');

/** True when the sidecar has been built. */
export const gateBuilt = (): boolean => existsSync(GATE_MAIN);

/** A running sidecar. */
export interface GateProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it logged on stdout, one JSON line each. */
  readonly logLines: readonly string[];
  /** Its stderr so far. */
  readonly stderr: () => string;
  /** SIGTERM (or `signal`) by PID and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** How to start a sidecar besides its environment. */
export interface GateStartOptions {
  /**
   * The largest file the sidecar may write, in 512-byte blocks (`ulimit -f`, RLIMIT_FSIZE): a write
   * past it fails with EFBIG after its first bytes, as on a disk that fills up. @defaultValue no limit
   */
  readonly fileSizeLimitBlocks?: number;
}

/** Spawns the sidecar with `env` (on top of PATH only), on 127.0.0.1 port 0. */
const spawnGate = (env: Readonly<Record<string, string>>, options: GateStartOptions = {}): ChildProcess => {
  const limit = options.fileSizeLimitBlocks;
  // `exec`: the shell that sets the limit becomes the sidecar, so its PID is the sidecar's.
  const [command, args] =
    limit === undefined
      ? [process.execPath, [GATE_MAIN]]
      : ['/bin/sh', ['-c', `ulimit -f ${limit} && exec "$0" "$1"`, process.execPath, GATE_MAIN]];
  return spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
  });
};

/**
 * Runs a sidecar that is expected to refuse to start: resolves with its exit code and stderr once
 * it exits. One still running after `timeoutMillis` is stopped by PID (SIGKILL) and reported so.
 */
export async function runGateExpectingExit(
  env: Readonly<Record<string, string>>,
  timeoutMillis = 15_000,
): Promise<{ readonly code: number | null; readonly stderr: string; readonly stillRunning: boolean }> {
  const child = spawnGate(env);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout?.resume();
  let stillRunning = false;
  const timer = setTimeout(() => {
    stillRunning = true;
    void stopByPid(child, 'SIGKILL');
  }, timeoutMillis);
  const { code } = await waitForExit(child);
  clearTimeout(timer);
  return { code, stderr, stillRunning };
}

/** Spawns the sidecar with `env` (on top of PATH only) and resolves once it logged `listening`. */
export async function startGate(
  env: Readonly<Record<string, string>>,
  options: GateStartOptions = {},
): Promise<GateProcess> {
  const child = spawnGate(env, options);
  const { url: listening, logLines, stderr } = followUntilListening(child, 'the gate');
  const url = await listening;
  return {
    url,
    child,
    logLines,
    stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      await stopByPid(child, signal);
      await waitForExit(child);
    },
  };
}

export { eventually } from '../../support/eventually.js';
