/**
 * Start-up of the built app: bad configuration and bad tokens files stop it with exit 1 and a
 * message naming the variable / entry and field; the dashboard build is served at `/` with an
 * SPA fallback when there is one.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, spawnCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

let dir: string;

beforeAll(async () => {
  dir = await createTempDir('lease-fence-startup-');
});

afterAll(async () => {
  await removeTempDir(dir);
});

/** Runs the coordinator until it exits; returns its exit code and all its output. */
async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawnCoordinator({ PORT: '0', HOST: '127.0.0.1', LEASE_FENCE_DATA_DIR: dir, ...env });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exit = await waitForExit(child);
  return { code: exit.code, output };
}

describe('start-up', () => {
  it.each([
    ['PORT', 'not-a-port'],
    ['LEASE_FENCE_TTL_MILLIS', '-1'],
    ['LEASE_FENCE_EVENT_LOG', 'eventstoredb'],
    ['LOG_LEVEL', 'shouty'],
  ])('exits 1 naming %s when it is %s', async (variable, value) => {
    const { code, output } = await runToExit({ [variable]: value });
    expect(code).toBe(1);
    expect(output).toContain(variable);
  });

  it('exits 1 naming HOST, in one clean message, when the host does not resolve', async () => {
    const { code, output } = await runToExit({ HOST: '0.0.0.0x', LEASE_FENCE_TOKENS_FILE: await writeTokensFile(dir) });
    expect(code).toBe(1);
    expect(output).toMatch(
      /lease-fence coordinator: invalid configuration:\n {2}HOST: cannot listen on "0\.0\.0\.0x" \(getaddrinfo (ENOTFOUND|EAI_AGAIN)\)\n/,
    );
    expect(output).not.toContain('"stack"');
    expect(output).not.toMatch(/Error:|^\s+at /m);
  });

  it('exits 1 naming PORT, in one clean message, when the port is taken', async () => {
    // Arrange
    const blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as AddressInfo).port)),
    );
    try {
      // Act
      const { code, output } = await runToExit({
        PORT: String(port),
        LEASE_FENCE_TOKENS_FILE: await writeTokensFile(dir),
      });

      // Assert
      expect(code).toBe(1);
      expect(output).toContain(
        `invalid configuration:\n  PORT: cannot listen on port ${port} of "127.0.0.1" (listen EADDRINUSE)\n`,
      );
      expect(output).not.toMatch(/Error:|^\s+at /m);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('exits 1 naming the entry and the field of a bad tokens file', async () => {
    // Arrange: entry 1 is an agent without holderId
    const file = join(dir, 'bad-tokens.json');
    await writeFile(file, JSON.stringify([TEST_TOKENS.viewer, { token: 'agent-without-holder', role: 'agent' }]));

    // Act
    const { code, output } = await runToExit({ LEASE_FENCE_TOKENS_FILE: file });

    // Assert
    expect(code).toBe(1);
    expect(output).toContain('entry 1 field holderId');
    expect(output).not.toContain('agent-without-holder');
  });

  it('exits 1 naming the tokens file when it does not exist, as a clean configuration error saying how to create one', async () => {
    const { code, output } = await runToExit({ LEASE_FENCE_TOKENS_FILE: join(dir, 'missing.json') });
    expect(code).toBe(1);
    expect(output).toMatch(
      /^lease-fence coordinator: invalid configuration:\n {2}LEASE_FENCE_TOKENS_FILE: .*missing\.json: does not exist; `npm start`/,
    );
    expect(output).toContain('"role":"agent","holderId":"agent-a"');
    expect(output).not.toContain('"stack"');
    expect(output).not.toMatch(/^\s+at /m);
  });
});

describe('dashboard build', () => {
  let app: RunningCoordinator;

  beforeAll(async () => {
    const dashboard = join(dir, 'dashboard');
    await mkdir(join(dashboard, 'assets'), { recursive: true });
    await writeFile(join(dashboard, 'index.html'), '<!doctype html><title>lease-fence dashboard</title>');
    await writeFile(join(dashboard, 'assets', 'app-1234.js'), 'console.log("dashboard")');
    const dataDir = join(dir, 'data');
    await mkdir(dataDir);
    app = await startCoordinator({
      dataDir,
      env: { LEASE_FENCE_DASHBOARD_DIR: dashboard, LEASE_FENCE_TOKENS_FILE: await writeTokensFile(dataDir) },
    });
  });

  afterAll(async () => {
    await app?.cleanup();
  });

  it('says in the start-up log that the dashboard is served, with its URL', () => {
    expect(app.logs).toContainEqual(
      expect.objectContaining({ url: `${app.url}/`, msg: expect.stringContaining('dashboard') }),
    );
  });

  it('serves index.html at / and the static assets', async () => {
    const index = await call(app.url, 'GET', '/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.text).toContain('lease-fence dashboard');
    const asset = await call(app.url, 'GET', '/assets/app-1234.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('falls back to index.html for client-side routes, but not for API paths or missing assets', async () => {
    expect((await call(app.url, 'GET', '/investigation/deploy-slot')).text).toContain('lease-fence dashboard');
    expect((await call(app.url, 'GET', '/v1/leases')).status).toBe(401);
    expect((await call(app.url, 'GET', '/missing.js')).status).toBe(404);
    const traversal = await call(app.url, 'GET', '/assets/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd');
    expect(traversal.text).not.toContain('root:');
  });

  it.each([
    '/health',
    '/livez',
    '/v2/leases',
    '/v2',
    '/healthz/extra',
    '/readyz/extra',
    '/metrics/extra',
    '/docs/missing',
    '/v1/missing',
    // a client whose base URL has a path the coordinator does not serve under (no reverse proxy strips it)
    '/lease-fence/v1/leases',
    '/base/v1/resources/deploy-slot/gate-recovery',
  ])('answers %s, an API-looking path that does not exist, with 404 JSON instead of the dashboard', async (path) => {
    const reply = await call<{ error?: string }>(app.url, 'GET', path, { token: TEST_TOKENS.viewer.token });
    expect(reply.status, reply.text).toBe(404);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.body.error).toBe('not-found');
  });
});
