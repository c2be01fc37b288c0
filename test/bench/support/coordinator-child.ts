/**
 * Starts the BUILT coordinator (`apps/coordinator/dist/main.js`) for a benchmark: a child process
 * on an ephemeral loopback port with the given data dir and tokens file, awaited through its
 * `listening` and `ready` JSON log lines. Stopped by PID. Like `test/support/coordinator-process.ts`,
 * but it finds the build from the repository root (benchmarks run compiled from another folder),
 * can pass Node flags (`--cpu-prof`), and records when each line arrived.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type ChildExit, stopByPid, waitForExit } from '../../support/stop-by-pid.js';
import { repoRoot } from './bench-env.js';

/**
 * `--cpu-prof` flags when `LEASE_FENCE_BENCH_CPU_PROF_DIR` names a folder: the coordinator then
 * writes a `.cpuprofile` there when it stops (open it in Chrome DevTools → Performance).
 */
export function cpuProfileArgs(): string[] {
  const dir = process.env.LEASE_FENCE_BENCH_CPU_PROF_DIR;
  return dir === undefined || dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** Options of {@link startBenchCoordinator}. */
export interface BenchCoordinatorOptions {
  readonly dataDir: string;
  readonly tokensFile: string;
  /** Extra environment for the coordinator (`LEASE_FENCE_*`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags placed before the entry point, e.g. `['--cpu-prof', '--cpu-prof-dir=…']`. */
  readonly nodeArgs?: readonly string[];
  /** Give up waiting for `ready` after this long (milliseconds). @defaultValue 600 000 */
  readonly readyTimeoutMillis?: number;
  /** The entry point to run: another build's `apps/coordinator/dist/main.js` (absolute path). @defaultValue this checkout's */
  readonly main?: string;
}

/** A running benchmark coordinator. */
export interface BenchCoordinator {
  readonly url: string;
  readonly wsUrl: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** `performance.now()` when the process was spawned, when `listening` and when `ready` were read. */
  readonly spawnedAtMillis: number;
  readonly listeningAtMillis: number;
  readonly readyAtMillis: number;
  /** The `ready` log line (it carries `recovery`: events replayed, snapshot used, replay milliseconds). */
  readonly ready: Readonly<Record<string, unknown>>;
  /** SIGTERM by PID, SIGKILL after 10 s; resolves once it is gone. */
  stop(): Promise<ChildExit>;
}

/**
 * Spawns the coordinator and waits until it is ready.
 * @throws if the build is missing, or the process exits or stays unready past `readyTimeoutMillis` (with its output).
 */
export async function startBenchCoordinator(options: BenchCoordinatorOptions): Promise<BenchCoordinator> {
  const root = repoRoot();
  const main = options.main ?? join(root, 'apps', 'coordinator', 'dist', 'main.js');
  if (!existsSync(main))
    throw new Error(`${main} is missing: build it with \`npx nx run @lease-fence/coordinator:build\``);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('LEASE_FENCE_') && !['PORT', 'HOST', 'LOG_LEVEL'].includes(name),
    ),
  );
  const spawnedAtMillis = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...cpuProfileArgs(), main], {
    cwd: root,
    env: {
      ...inherited,
      PORT: '0',
      HOST: '127.0.0.1',
      LEASE_FENCE_DATA_DIR: options.dataDir,
      LEASE_FENCE_TOKENS_FILE: options.tokensFile,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  let listening: { line: Record<string, unknown>; at: number } | undefined;
  const exited = waitForExit(child);
  try {
    const ready = await new Promise<{ line: Record<string, unknown>; at: number }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('coordinator not ready in time')),
        options.readyTimeoutMillis ?? 600_000,
      );
      createInterface({ input: child.stdout! }).on('line', (text) => {
        if (output.length < 200) output.push(text);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          return;
        }
        if (line.msg === 'listening') listening = { line, at: performance.now() };
        if (line.msg === 'ready') {
          clearTimeout(timer);
          resolve({ line, at: performance.now() });
        }
      });
      void exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`coordinator exited (code ${exit.code}, signal ${exit.signal}) before it was ready`));
      });
    });
    const url = String(listening?.line.url ?? ready.line.url);
    return {
      url,
      wsUrl: url.replace(/^http/, 'ws'),
      pid: child.pid!,
      child,
      spawnedAtMillis,
      listeningAtMillis: listening?.at ?? ready.at,
      readyAtMillis: ready.at,
      ready: ready.line,
      stop: () => stopByPid(child, 'SIGTERM'),
    };
  } catch (error) {
    await stopByPid(child, 'SIGKILL');
    throw new Error(`${(error as Error).message}; output:\n${output.join('\n').slice(-3000)}`, { cause: error });
  }
}
