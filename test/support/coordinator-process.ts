/**
 * Starts the BUILT coordinator (`apps/coordinator/dist/main.js`) as a child process on an
 * ephemeral loopback port, with a temp data dir and a temp tokens file, and waits for its
 * `listening` and `ready` log lines (JSON on stdout) — no polling, no sleeps. Stop it by PID
 * (SIGTERM), or crash it (SIGKILL) and start another on the same data dir.
 *
 * Build first: `npx nx run @lease-fence/coordinator:build` (Nx does it before `test` runs).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type ChildExit, stopByPid, waitForExit } from './stop-by-pid.js';
import { createTempDir, removeTempDir } from './temp-dir.js';
import { startTcpFront, type TcpFront } from './tcp-front.js';
import { writeTokensFile, type TokenEntry } from './test-tokens.js';

/** The workspace root, found from this file. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The coordinator's built entry point. */
export const COORDINATOR_MAIN = join(REPO_ROOT, 'apps/coordinator/dist/main.js');

/** One JSON log line of the coordinator (pino): `msg`, `level` (30 = info) and any fields. */
export interface LogLine {
  readonly msg?: string;
  readonly level?: number;
  readonly [field: string]: unknown;
}

/** Options of {@link startCoordinator}. */
export interface StartCoordinatorOptions {
  /** Data directory; a fresh temp dir when omitted (removed by `cleanup()`). Pass the previous one to restart on the same log. */
  readonly dataDir?: string;
  /** Tokens file entries; default `TEST_TOKENS`. Ignored when `env.LEASE_FENCE_TOKENS_FILE` is given. */
  readonly tokens?: readonly TokenEntry[];
  /** Extra environment (e.g. `LEASE_FENCE_EVENT_LOG: 'memory'`). `PORT`, `HOST`, `LEASE_FENCE_DATA_DIR` are set by the helper unless given here. */
  readonly env?: Readonly<Record<string, string>>;
  /** Wait for the `ready` line too (recovery finished). @defaultValue true */
  readonly waitForReady?: boolean;
  /** Give up waiting after this long (milliseconds). @defaultValue 30 000 */
  readonly startTimeoutMillis?: number;
}

/** A running coordinator child process. */
export interface RunningCoordinator {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `ws://127.0.0.1:<port>` */
  readonly wsUrl: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Every JSON log line so far, in order. */
  readonly logs: readonly LogLine[];
  /** stderr so far (config errors are printed there). */
  readonly stderr: () => string;
  /** Resolves with the first log line (past or future) matching `predicate`; rejects if the process exits first or after `timeoutMillis`. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMillis?: number): Promise<LogLine>;
  /** SIGTERM by PID; resolves with how it exited. */
  stop(): Promise<ChildExit>;
  /** SIGKILL by PID (`kill -9`); resolves once it is gone. */
  kill(): Promise<ChildExit>;
  /** Stops the process if it still runs and removes the data dir if the helper created it. */
  cleanup(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running)
    if (child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
});

/** Environment variables of the parent that must not leak into the child's configuration. */
const isCoordinatorVariable = (name: string): boolean =>
  name.startsWith('LEASE_FENCE_') || ['PORT', 'HOST', 'LOG_LEVEL'].includes(name);

/** Spawns the coordinator without waiting for anything; for start-up failure tests. */
export function spawnCoordinator(env: Readonly<Record<string, string>>): ChildProcess {
  if (!existsSync(COORDINATOR_MAIN)) {
    throw new Error(
      `${COORDINATOR_MAIN} is missing: build it first with \`npx nx run @lease-fence/coordinator:build\``,
    );
  }
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !isCoordinatorVariable(name)));
  const child = spawn(process.execPath, [COORDINATOR_MAIN], {
    cwd: REPO_ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Starts a coordinator and waits until it listens (and, by default, is ready).
 * @throws if it exits or does not get there within `startTimeoutMillis`; the message includes its output.
 */
export async function startCoordinator(options: StartCoordinatorOptions = {}): Promise<RunningCoordinator> {
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await createTempDir('lease-fence-coordinator-'));
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    LEASE_FENCE_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ...options.env,
  };
  env.LEASE_FENCE_TOKENS_FILE ??= await writeTokensFile(dataDir, options.tokens);
  const child = spawnCoordinator(env);
  const logs: LogLine[] = [];
  let stderr = '';
  const watchers = new Set<(line: LogLine) => void>();
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      line = { msg: text };
    }
    logs.push(line);
    for (const watcher of [...watchers]) watcher(line);
  });
  const exited = waitForExit(child);

  const waitForLog = (predicate: (line: LogLine) => boolean, timeoutMillis = 30_000): Promise<LogLine> => {
    const seen = logs.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = (): void => {
        watchers.delete(watcher);
        clearTimeout(timer);
      };
      const watcher = (line: LogLine): void => {
        if (predicate(line)) {
          done();
          resolve(line);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching log line within ${timeoutMillis} ms; output:\n${tail()}`));
      }, timeoutMillis);
      watchers.add(watcher);
      void exited.then((exit) => {
        // Let the last stdout lines be parsed before giving up.
        setImmediate(() => {
          if (!watchers.has(watcher)) return;
          done();
          reject(
            new Error(
              `coordinator exited (code ${exit.code}, signal ${exit.signal}) before the expected log line; output:\n${tail()}`,
            ),
          );
        });
      });
    });
  };
  const tail = (): string => [...logs.slice(-20).map((l) => JSON.stringify(l)), stderr.slice(-2000)].join('\n');

  const cleanup = async (): Promise<void> => {
    await stopByPid(child, 'SIGKILL');
    if (ownsDataDir) await removeTempDir(dataDir);
  };
  try {
    const timeoutMillis = options.startTimeoutMillis ?? 30_000;
    const listening = await waitForLog((l) => l.msg === 'listening', timeoutMillis);
    if (options.waitForReady ?? true) await waitForLog((l) => l.msg === 'ready', timeoutMillis);
    const url = String(listening.url);
    return {
      url,
      wsUrl: url.replace(/^http/, 'ws'),
      pid: child.pid!,
      dataDir,
      child,
      logs,
      stderr: () => stderr,
      waitForLog,
      stop: () => stopByPid(child, 'SIGTERM'),
      kill: () => stopByPid(child, 'SIGKILL'),
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Starts an active coordinator on `dataDir` (waits until ready) and a standby on the same log
 * (`LEASE_FENCE_ROLE=standby`), and waits until the standby follows the log.
 * @param env - Environment of both (e.g. the heartbeat and checkpoint interval).
 * @param takeoverAfterMillis - The standby's `LEASE_FENCE_TAKEOVER_AFTER_MILLIS`.
 * @returns both; the caller cleans them up (the active one is cleaned up here if the standby fails to start).
 */
export async function startActiveWithStandby(
  dataDir: string,
  env: Readonly<Record<string, string>>,
  takeoverAfterMillis: number,
): Promise<{ readonly active: RunningCoordinator; readonly standby: RunningCoordinator }> {
  const active = await startCoordinator({ dataDir, env });
  try {
    const standby = await startCoordinator({
      dataDir,
      env: { ...env, LEASE_FENCE_ROLE: 'standby', LEASE_FENCE_TAKEOVER_AFTER_MILLIS: String(takeoverAfterMillis) },
      waitForReady: false,
    });
    await standby.waitForLog((line) => String(line.msg).startsWith('standby: following the log'));
    return { active, standby };
  } catch (error) {
    await active.cleanup();
    throw error;
  }
}

/**
 * {@link startActiveWithStandby} on a fresh log (a temp directory named after `tempDirPrefix`), with a
 * {@link startTcpFront} forwarding to the active one: the failover tests' arrangement, where the front
 * plays the operator's load balancer. Each cleanup (the log's directory, both coordinators, the front)
 * is handed to `defer` as soon as it exists; the caller runs them in reverse order after the test.
 */
export async function startPairBehindFront(
  tempDirPrefix: string,
  env: Readonly<Record<string, string>>,
  takeoverAfterMillis: number,
  defer: (cleanup: () => Promise<unknown>) => void,
): Promise<{ readonly active: RunningCoordinator; readonly standby: RunningCoordinator; readonly front: TcpFront }> {
  const dataDir = await createTempDir(tempDirPrefix);
  defer(() => removeTempDir(dataDir));
  const { active, standby } = await startActiveWithStandby(dataDir, env, takeoverAfterMillis);
  defer(() => active.cleanup());
  defer(() => standby.cleanup());
  const front = await startTcpFront(active.url);
  defer(() => front.close());
  return { active, standby, front };
}
