/**
 * Runs the BUILT `lease-fence` bin (`apps/cli/dist/main.js`) as a child process, with only the
 * environment a test gives it (the parent's `LEASE_FENCE_*` variables are dropped), collecting its
 * stdout lines and stderr. Stopped by PID; the commands `lease-fence run` starts are stopped by
 * their process group (see {@link killGroup}).
 *
 * Build first: `npx nx run @lease-fence/cli:build`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../support/coordinator-process.js';
import { type ChildExit, waitForExit } from '../../support/stop-by-pid.js';

/** The CLI's built entry point. */
export const CLI_MAIN = join(REPO_ROOT, 'apps/cli/dist/main.js');

/** A running `lease-fence` process. */
export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout lines so far. */
  readonly lines: readonly string[];
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the first stdout line (past or future) matching `predicate`; rejects if the process exits first. */
  waitForLine(predicate: (line: string) => boolean): Promise<string>;
  /** Resolves when it has exited, with its code or signal. */
  readonly exited: Promise<ChildExit>;
}

/** How a finished `lease-fence` run ended, and what it printed. */
export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) if (child.pid !== undefined) killQuietly(child.pid, 'SIGKILL');
});

/** Sends `signal` to a PID (a negative one: a process group), ignoring one that is gone. */
export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** SIGKILLs the process group `pid` leads (a command `lease-fence run` started), if it is still there. */
export const killGroup = (pid: number): void => killQuietly(-pid, 'SIGKILL');

/** Whether a process with this PID exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `lease-fence <args>` with `env` (plus PATH and HOME). */
export function startCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): CliProcess {
  if (!existsSync(CLI_MAIN))
    throw new Error(`${CLI_MAIN} is missing: build it with \`npx nx run @lease-fence/cli:build\``);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('LEASE_FENCE_')),
  ) as Record<string, string>;
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = waitForExit(child);
  void exited.then(() => running.delete(child));
  const lines: string[] = [];
  let stderr = '';
  const watchers = new Set<(line: string) => void>();
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const watcher of [...watchers]) watcher(line);
  });
  const waitForLine = (predicate: (line: string) => boolean): Promise<string> => {
    const seen = lines.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const watcher = (line: string): void => {
        if (!predicate(line)) return;
        watchers.delete(watcher);
        resolve(line);
      };
      watchers.add(watcher);
      void exited.then((exit) => {
        if (!watchers.has(watcher)) return;
        watchers.delete(watcher);
        reject(new Error(`lease-fence exited (${JSON.stringify(exit)}) before the line; stderr: ${stderr}`));
      });
    });
  };
  return { child, pid: child.pid as number, lines, stderr: () => stderr, waitForLine, exited };
}

/** Runs `lease-fence <args>` to its end. */
export async function runCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  const cli = startCli(args, env);
  // 'close' comes after 'exit' and after its output streams have ended, so every line is in
  const { code, signal } = await new Promise<ChildExit>((resolve) =>
    cli.child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return { code, signal, stdout: cli.lines.map((line) => `${line}\n`).join(''), stderr: cli.stderr() };
}
