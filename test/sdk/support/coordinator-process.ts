/**
 * Starts the real coordinator (`apps/coordinator/dist/main.js`) as a child process on
 * 127.0.0.1, port 0, with a temporary data directory and tokens file; stops it by PID.
 * Small on purpose: the SDK tests need nothing more.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { followUntilListening } from '../../support/listening-child.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A tokens-file entry. */
export type TokenEntry =
  | { readonly token: string; readonly role: 'agent'; readonly holderId: string }
  | { readonly token: string; readonly role: 'gate'; readonly resources: readonly string[]; readonly gateId: string }
  | { readonly token: string; readonly role: 'viewer' };

/** Tokens for tests: four agents, a gate for `deploy-*`, a viewer. */
export const TEST_TOKENS: readonly TokenEntry[] = [
  { token: 'viewer-token', role: 'viewer' },
  ...[1, 2, 3, 4].map((index) => ({
    token: `agent-${index}-token`,
    role: 'agent' as const,
    holderId: `agent-${index}`,
  })),
  { token: 'gate-token', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] },
];

/** A running coordinator. */
export interface CoordinatorProcess {
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly tokensFile: string;
  /** Everything it logged on stdout, one JSON line each. */
  readonly logLines: readonly string[];
  /** SIGTERM, wait for the exit, remove the data directory. */
  stop(): Promise<void>;
}

/** True when the coordinator has been built. */
export const coordinatorBuilt = (): boolean => existsSync(join(ROOT, 'apps/coordinator/dist/main.js'));

/** Starts the coordinator and resolves once it logged `listening`. */
export const startCoordinator = async (
  options: { readonly env?: Readonly<Record<string, string>> } = {},
): Promise<CoordinatorProcess> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sdk-coordinator-'));
  const tokensFile = join(dataDir, 'tokens.json');
  await writeFile(tokensFile, JSON.stringify(TEST_TOKENS));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'apps/coordinator/dist/main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LEASE_FENCE_DATA_DIR: dataDir,
      LEASE_FENCE_TOKENS_FILE: tokensFile,
      LOG_LEVEL: 'info',
      ...options.env,
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { url: listening, logLines } = followUntilListening(child, 'the coordinator');
  const url = await listening;
  return {
    url,
    pid: child.pid as number,
    dataDir,
    tokensFile,
    logLines,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid as number, 'SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};
