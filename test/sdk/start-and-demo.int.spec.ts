/**
 * `npm start` as a user runs it (`scripts/start.mjs --skip-build`; Nx builds the projects
 * before this suite): the coordinator on the SQLite log, tokens created on the first run, the
 * demo producing grants, renewals, expiries and refused stale writes, its slots fenced first (each
 * grant reserved, then admitted by the deploy slot's gate, then granted), and a clean stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorBuilt, ROOT } from './support/coordinator-process.js';
import { waitForEventTypes } from './support/event-stream.js';

/** A started `scripts/start.mjs`. */
interface StartedScript {
  readonly child: ChildProcess;
  readonly output: string[];
  readonly dashboardUrl: string;
  readonly exited: Promise<number | null>;
}

const runStart = async (
  dataDir: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<StartedScript> => {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs'), '--skip-build', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', LEASE_FENCE_DATA_DIR: dataDir, ...env },
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const dashboardUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      output.push(line);
      const match = /^dashboard: (\S+)/.exec(line);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void exited.then((code) =>
      reject(
        new Error(`start.mjs exited with ${String(code)} before printing the dashboard URL:\n${output.join('\n')}`),
      ),
    );
  });
  return { child, output, dashboardUrl, exited };
};

const stopStart = async (started: StartedScript): Promise<number | null> => {
  process.kill(started.child.pid as number, 'SIGTERM');
  return started.exited;
};

describe.skipIf(!coordinatorBuilt())('scripts/start.mjs', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lease-fence-start-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('with --coordinator-only creates private tokens on the first run and serves the API with the viewer token it prints', async () => {
    // Act
    const started = await runStart(dataDir, ['--coordinator-only']);
    const dashboard = new URL(started.dashboardUrl);
    const leases = await fetch(`${dashboard.origin}/v1/leases`, {
      headers: { authorization: `Bearer ${dashboard.searchParams.get('token') ?? ''}` },
    });
    const code = await stopStart(started);

    // Assert
    const tokens = JSON.parse(await readFile(join(dataDir, 'tokens.json'), 'utf8')) as {
      role: string;
      token: string;
    }[];
    expect(tokens.map((entry) => entry.role)).toEqual(['viewer', 'agent', 'agent', 'agent', 'agent', 'gate']);
    expect(new Set(tokens.map((entry) => entry.token)).size).toBe(6);
    expect((await stat(join(dataDir, 'tokens.json'))).mode & 0o077).toBe(0);
    expect(dashboard.searchParams.get('token')).toBe(tokens[0]?.token);
    expect(leases.status).toBe(200);
    expect(started.output.some((line) => line.includes(' agent-'))).toBe(false);
    expect(code).toBe(0);
    await expect(fetch(`${dashboard.origin}/readyz`)).rejects.toThrow();
  });

  it('runs the demo: the log shows fence-first grants, renewals, expiries and refused stale writes; Ctrl-C stops everything cleanly', async () => {
    // Arrange: the tokens from the first run are reused; a faster demo.
    const tokensBefore = await readFile(join(dataDir, 'tokens.json'), 'utf8');
    const started = await runStart(dataDir, [], {
      DEMO_TTL_MILLIS: '1500',
      DEMO_MODEL_CALL_MILLIS: '300-2500',
      DEMO_STALL_PROBABILITY: '0.5',
      DEMO_RESOURCES: 'deploy-slot-a,deploy-slot-b',
      DEMO_RESOURCE_RESTART_EVERY_MILLIS: '8000',
      DEMO_SEED: '20260101',
    });
    const dashboard = new URL(started.dashboardUrl);

    // Act
    const seen = await waitForEventTypes(
      dashboard.origin,
      dashboard.searchParams.get('token') ?? '',
      ['FenceReserved', 'FenceAdmitted', 'LeaseGranted', 'LeaseRenewed', 'LeaseExpired', 'FenceRejected'],
      90_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n--- start.mjs output ---\n${started.output.slice(-80).join('\n')}`);
    });
    const code = await stopStart(started);

    // Assert
    expect(await readFile(join(dataDir, 'tokens.json'), 'utf8')).toBe(tokensBefore);
    expect(seen).toMatchObject({
      FenceReserved: expect.any(Number),
      FenceAdmitted: expect.any(Number),
      LeaseGranted: expect.any(Number),
      LeaseRenewed: expect.any(Number),
      LeaseExpired: expect.any(Number),
      FenceRejected: expect.any(Number),
    });
    expect(
      started.output.some((line) => / agent-\d +deploy-slot-[ab] +wrote .* REFUSED by the gate with 409/.test(line)),
    ).toBe(true);
    expect(started.output.some((line) => line.includes('[start] stopped'))).toBe(true);
    expect(code).toBe(0);
    await expect(fetch(`${dashboard.origin}/readyz`)).rejects.toThrow();
  }, 150_000);
});
