/**
 * Black-box tests of `lease-fence run`: the BUILT bin as a child process against the BUILT
 * coordinator (started the way test/sdk starts it), running a small Node script as the command.
 * No timing assertions; every process is stopped by PID (the command by its process group).
 */
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { eventually } from '../support/eventually.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { startBlackholeProxy, type BlackholeProxy } from './support/blackhole-proxy.js';
import { isAlive, killGroup, runCli, startCli } from './support/cli-process.js';

/**
 * The command `run` starts: prints `{ pid, env }` (its LEASE_FENCE_* variables) as one JSON line
 * once its signal handlers are installed, and by mode: `exit:N` exits N; `ignore-term` logs each SIGINT/SIGTERM/SIGHUP to the log file and
 * keeps running; `plain` installs no handler (a signal ends it). It exits by itself after 60 s so a
 * failed test leaves nothing behind.
 */
const COMMAND = `
import { appendFileSync } from 'node:fs';
const [mode, logFile] = process.argv.slice(2);
const names = ['LEASE_FENCE_RESOURCE', 'LEASE_FENCE_FENCE', 'LEASE_FENCE_HOLDER', 'LEASE_FENCE_TOKEN'];
const env = Object.fromEntries(names.map((name) => [name, process.env[name]]));
if (mode === 'ignore-term')
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => appendFileSync(logFile, signal + '\\n'));
// Printed once the handlers are in place: a test that signals after this line cannot race them.
console.log(JSON.stringify({ pid: process.pid, env }));
if (mode.startsWith('exit:')) process.exit(Number(mode.slice(5)));
setTimeout(() => process.exit(99), 60_000);
`;

interface Started {
  readonly pid: number;
  readonly env: Record<string, string | undefined>;
}

let app: RunningCoordinator;
let dir: string;
let script: string;
let agentEnv: Record<string, string>;
const groups: number[] = [];

beforeAll(async () => {
  app = await startCoordinator();
  dir = await createTempDir('lease-fence-cli-');
  script = join(dir, 'command.mjs');
  await writeFile(script, COMMAND);
  const tokenFile = join(dir, 'agent-a.token');
  await writeFile(tokenFile, `${TEST_TOKENS.agentA.token}\n`);
  agentEnv = { LEASE_FENCE_URL: app.url, LEASE_FENCE_AGENT_TOKEN_FILE: tokenFile };
});

afterEach(() => {
  for (const pid of groups.splice(0)) killGroup(pid);
});

afterAll(async () => {
  await app?.cleanup();
  if (dir !== undefined) await removeTempDir(dir);
});

const holders = async (): Promise<{ resource: string; holderId: string; fence: number }[]> =>
  (
    await call<{ leases: { resource: string; holderId: string; fence: number }[] }>(app.url, 'GET', '/v1/leases', {
      token: TEST_TOKENS.viewer.token,
    })
  ).body.leases;

const acquireAs = (token: string, resource: string, ttlMillis: number) =>
  call<{ ok: boolean; grant?: { fence: number } }>(app.url, 'POST', `/v1/leases/${resource}/acquire`, {
    token,
    json: { requestId: `test-${resource}-${Math.random()}`, ttlMillis },
  });

const started = (line: string): Started => JSON.parse(line) as Started;
const isStartLine = (line: string): boolean => line.startsWith('{"pid"');
const payloadOf = (jws: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

describe('lease-fence run', () => {
  it('runs the command with the lease in its environment, passes its exit code through, and releases', async () => {
    const result = await runCli(
      ['run', '--resource', 'cli-normal', '--', process.execPath, script, 'exit:3'],
      agentEnv,
    );

    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    const { env } = started(result.stdout.trim());
    expect(env).toMatchObject({ LEASE_FENCE_RESOURCE: 'cli-normal', LEASE_FENCE_HOLDER: 'agent-a' });
    expect(Number(env.LEASE_FENCE_FENCE)).toBeGreaterThan(0);
    expect(payloadOf(env.LEASE_FENCE_TOKEN ?? '')).toMatchObject({
      resource: 'cli-normal',
      holderId: 'agent-a',
      fence: Number(env.LEASE_FENCE_FENCE),
    });
    expect((await holders()).filter((lease) => lease.resource === 'cli-normal')).toEqual([]);
  });

  it('exits 0 when the command does', async () => {
    const result = await runCli(['run', '-r', 'cli-zero', process.execPath, script, 'exit:0'], agentEnv);
    expect(result.code).toBe(0);
  });

  it('exits 75 naming the holder, its fence and how long when the resource is held past --wait', async () => {
    const held = await acquireAs(TEST_TOKENS.agentB.token, 'cli-held', 60_000);
    expect(held.status).toBe(200);

    const result = await runCli(
      ['run', '--resource', 'cli-held', '--wait', '300ms', '--', process.execPath, script, 'exit:0'],
      agentEnv,
    );

    expect(result.code).toBe(75);
    expect(result.stdout).toBe(''); // the command never ran
    expect(result.stderr).toContain('cli-held is held by agent-b');
    expect(result.stderr).toContain(`under fence ${held.body.grant?.fence}`);
    expect(result.stderr).toMatch(/for up to [\d.]+ (s|min \d+ s) more/);
    expect(result.stderr).toContain('gave up after --wait 300 ms');
  });

  it('exits 69 naming the URL and the failure when the coordinator is down', async () => {
    const closedUrl = await closedPortUrl();
    const result = await runCli(['run', '-r', 'cli-down', '--', process.execPath, script, 'exit:0'], {
      ...agentEnv,
      LEASE_FENCE_URL: closedUrl,
    });

    expect(result.code).toBe(69);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`cannot reach the coordinator at ${closedUrl}`);
    expect(result.stderr).toContain('ECONNREFUSED');
  });

  it('exits 77 when the token is not an agent’s, saying its role', async () => {
    const result = await runCli(['run', '-r', 'cli-role', '--', process.execPath, script, 'exit:0'], {
      LEASE_FENCE_URL: app.url,
      LEASE_FENCE_AGENT_TOKEN: TEST_TOKENS.viewer.token,
    });
    expect(result.code).toBe(77);
    expect(result.stderr).toContain('lease-fence run needs an agent token');
    expect(result.stderr).toContain('LEASE_FENCE_AGENT_TOKEN has the viewer role');
    expect(result.stderr).not.toContain(TEST_TOKENS.viewer.token);
  });

  it('exits 77 when the coordinator does not know the token', async () => {
    const result = await runCli(['run', '-r', 'cli-role', '--token', 'no-such-token', '--', 'true'], {
      LEASE_FENCE_URL: app.url,
    });
    expect(result.code).toBe(77);
    expect(result.stderr).toContain('refused the token from --token (HTTP 401)');
  });

  it.each([
    [['--ttl', '30'], '--ttl: must be a whole number with a unit: 500ms, 30s, 2m or 1h, got "30"'],
    [['--wait', '-1s'], '--wait: must be a whole number with a unit'],
    [['--grace', '1.5s'], '--grace: must be a whole number with a unit'],
    [['--ttl', '100ms'], '--ttl: must be longer than the clock skew (500 ms, --clock-skew), got 100ms'],
    [
      ['--ttl', '99999999999s'],
      '--ttl: must be at most 2147483647ms (about 596h, the longest timer), got "99999999999s"',
    ],
    // Past the coordinator's bounds: its 400 names the wire's field, which the user never typed.
    [['--ttl', '2h'], '--ttl: is out of range: must be between 100 and 3600000 milliseconds'],
  ])('exits 64 for %j, naming the flag, and runs nothing', async (flags, message) => {
    const result = await runCli(
      ['run', '-r', 'cli-flags', ...flags, '--', process.execPath, script, 'exit:0'],
      agentEnv,
    );
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('ttlMillis');
    expect(result.stdout).toBe('');
  });

  it("exits 64 for run's flags after the command, saying they go before it (they were the command's own)", async () => {
    const result = await runCli(['run', process.execPath, script, 'exit:0', '-r', 'cli-order'], agentEnv);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain("error: required option '-r, --resource <resource>' not specified");
    expect(result.stderr).toContain(
      "run's options go before the command, and everything after it is the command's: lease-fence run -r deploy-slot-a --ttl 30s -- ./deploy.sh production",
    );
    expect(result.stdout).toBe('');
  });

  it('exits 64 for a --url with the API path on it, saying to give the base URL, and runs nothing', async () => {
    const result = await runCli(
      ['run', '-r', 'cli-url-path', '--url', `${app.url}/v1`, '--', process.execPath, script, 'exit:0'],
      agentEnv,
    );
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(`no lease-fence coordinator answers at ${app.url}/v1`);
    expect(result.stderr).toContain(`--url (or LEASE_FENCE_URL) must be the coordinator's base URL`);
    expect(result.stdout).toBe('');
  });

  it('exits 127 when the command is not found, and releases', async () => {
    const result = await runCli(['run', '-r', 'cli-missing', '--', 'no-such-command-3f9a'], agentEnv);
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('cannot run "no-such-command-3f9a": not found');
    expect((await holders()).filter((lease) => lease.resource === 'cli-missing')).toEqual([]);
  });

  it('passes Ctrl-C (SIGINT) to the command, exits 128+2 when it dies of it, and releases', async () => {
    const cli = startCli(['run', '-r', 'cli-ctrl-c', '--', process.execPath, script, 'plain'], agentEnv);
    const { pid } = started(await cli.waitForLine(isStartLine));
    groups.push(pid);
    expect((await holders()).filter((lease) => lease.resource === 'cli-ctrl-c')).toHaveLength(1);

    process.kill(cli.pid, 'SIGINT');

    expect((await cli.exited).code).toBe(130);
    expect(isAlive(pid)).toBe(false);
    expect((await holders()).filter((lease) => lease.resource === 'cli-ctrl-c')).toEqual([]);
  });

  it('passes SIGTERM to a command that handles it and keeps the lease while the command runs on', async () => {
    const logFile = join(dir, 'term.log');
    const cli = startCli(['run', '-r', 'cli-term', '--', process.execPath, script, 'ignore-term', logFile], agentEnv);
    const { pid } = started(await cli.waitForLine(isStartLine));
    groups.push(pid);

    process.kill(cli.pid, 'SIGTERM');
    await eventually('the command to log SIGTERM', () => readIfExists(logFile).includes('SIGTERM'), 60_000);
    expect(isAlive(pid)).toBe(true);
    expect((await holders()).filter((lease) => lease.resource === 'cli-term')).toHaveLength(1);

    process.kill(pid, 'SIGKILL');
    expect((await cli.exited).code).toBe(128 + 9);
    expect((await holders()).filter((lease) => lease.resource === 'cli-term')).toEqual([]);
  });

  describe('when the lease is lost', () => {
    let proxy: BlackholeProxy;
    beforeAll(async () => {
      proxy = await startBlackholeProxy(app.url);
    });
    afterAll(async () => {
      await proxy?.close();
    });

    it('sends the command SIGTERM, then SIGKILL after --grace, and exits 79, while another holder takes the resource', async () => {
      const logFile = join(dir, 'lost.log');
      const cli = startCli(
        ['run', '-r', 'cli-lost', '--ttl', '2s', '--grace', '1s', '--clock-skew', '100ms', '--'].concat([
          process.execPath,
          script,
          'ignore-term',
          logFile,
        ]),
        { ...agentEnv, LEASE_FENCE_URL: proxy.url },
      );
      const { pid, env } = started(await cli.waitForLine(isStartLine));
      groups.push(pid);

      proxy.blackhole(); // the agent can no longer renew; the coordinator still serves others
      const taken = await eventually(
        'agent-b to take cli-lost',
        async () => {
          const reply = await acquireAs(TEST_TOKENS.agentB.token, 'cli-lost', 60_000);
          return reply.status === 200 ? reply.body.grant : undefined;
        },
        60_000,
      );

      const exit = await cli.exited;
      expect(exit.code).toBe(79);
      expect(taken?.fence).toBeGreaterThan(Number(env.LEASE_FENCE_FENCE));
      expect(readIfExists(logFile)).toContain('SIGTERM'); // it was asked first …
      expect(isAlive(pid)).toBe(false); // … and, ignoring that, killed
      expect(cli.stderr()).toContain(`lost the lease on cli-lost (fence ${env.LEASE_FENCE_FENCE})`);
      expect(cli.stderr()).toContain('SIGTERM, then SIGKILL after 1.0 s');
    });
  });
});

const readIfExists = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** A URL on a loopback port nothing listens on (bound, then closed). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
