/**
 * One coordinator per log, against the built app: a second coordinator started on the same data
 * dir and namespace refuses to start, naming the running one, before it touches the log (so the
 * running one is not superseded); and a coordinator that cannot bind its port exits without
 * having appended to its log (it binds first, then recovers).
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, spawnCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { stopByPid, waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';

interface EventsBody {
  events: { position: number; event: { type: string } }[];
  head: number;
}

const running: RunningCoordinator[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const app of running.reverse()) await app.cleanup(); // a coordinator before the one owning its data dir
  for (const dir of dirs) await removeTempDir(dir);
});

/**
 * Runs a coordinator until it exits; returns its exit code and all its output. One that is still
 * running after `deadlineMillis` (it started when it should not have) is killed: code `null`.
 */
async function runToExit(
  env: Record<string, string>,
  deadlineMillis = 20_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawnCoordinator({ HOST: '127.0.0.1', ...env });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const deadline = setTimeout(() => void stopByPid(child, 'SIGKILL'), deadlineMillis);
  const exit = await waitForExit(child);
  clearTimeout(deadline);
  return { code: exit.code, output };
}

describe('a second coordinator on the same data dir and namespace', () => {
  it("exits non-zero naming the running one's pid, appends nothing, and the running one keeps granting", async () => {
    // Given a running coordinator that granted a lease (no uptime checkpoint during the test, so
    // its log moves only if something appends to it)
    const first = await startCoordinator({ env: { LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '3600000' } });
    running.push(first);
    const agent = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    const viewer = coordinatorHttp(first.url, TEST_TOKENS.viewer.token);
    expect((await agent.post('/v1/leases/before/acquire', { requestId: 'before' })).status).toBe(200);
    const headBefore = await viewer.head();

    // When a second one is started on the same data dir (on a free port: only the lock can stop it)
    const second = await runToExit({
      PORT: '0',
      LEASE_FENCE_DATA_DIR: first.dataDir,
      LEASE_FENCE_TOKENS_FILE: join(first.dataDir, 'tokens.json'),
    });

    // Then it refused to start, saying who holds the log and what to do
    expect(second.code, second.output).toBe(1);
    expect(second.output).toContain(
      `another coordinator (pid ${first.pid}) holds ${join(first.dataDir, 'default.events.sqlite')}; stop it or use another LEASE_FENCE_DATA_DIR/LEASE_FENCE_NAMESPACE`,
    );
    // And the running coordinator was not touched: same log, still ready, still granting
    expect(await viewer.head()).toBe(headBefore);
    expect((await viewer.get('/readyz')).status).toBe(200);
    const after = await agent.post<{ grant: { fence: number } }>('/v1/leases/after/acquire', { requestId: 'after' });
    expect(after.status).toBe(200);
    expect(await viewer.head()).toBe(headBefore + 1);
  });

  it('starts alongside on another namespace of the same data dir (one lock per log file)', async () => {
    // Given
    const first = await startCoordinator();
    running.push(first);

    // When
    const other = await startCoordinator({
      dataDir: first.dataDir,
      env: { LEASE_FENCE_NAMESPACE: 'other', LEASE_FENCE_TOKENS_FILE: join(first.dataDir, 'tokens.json') },
    });
    running.push(other);

    // Then both serve
    expect((await coordinatorHttp(other.url).get('/readyz')).status).toBe(200);
    expect((await coordinatorHttp(first.url).get('/readyz')).status).toBe(200);
  });

  it('starts at once after the holder was killed (kill -9 leaves its lock file behind)', async () => {
    // Given a coordinator that crashed
    const first = await startCoordinator();
    running.push(first);
    await first.kill();

    // When another starts on the same data dir
    const second = await startCoordinator({
      dataDir: first.dataDir,
      env: { LEASE_FENCE_TOKENS_FILE: join(first.dataDir, 'tokens.json') },
    });
    running.push(second);

    // Then it serves, and says it replaced the dead one's lock
    expect((await coordinatorHttp(second.url).get('/readyz')).status).toBe(200);
    expect(second.logs).toContainEqual(
      expect.objectContaining({ previousPid: first.pid, msg: expect.stringContaining('which is gone') }),
    );
  });
});

describe('a coordinator that cannot bind its port', () => {
  let blocker: Server;

  afterAll(async () => {
    await new Promise((resolve) => blocker?.close(resolve));
  });

  it('exits without having appended to its log: recovery starts only once the port is bound', async () => {
    // Given a port that is taken, and a fresh data dir
    blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    const dataDir = await createTempDir('lease-fence-no-port-');
    dirs.push(dataDir);
    const tokensFile = await writeTokensFile(dataDir);

    // When a coordinator is started on that port
    const refused = await runToExit({
      PORT: String(port),
      LEASE_FENCE_DATA_DIR: dataDir,
      LEASE_FENCE_TOKENS_FILE: tokensFile,
    });

    // Then it exits 1 for the port
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toContain('EADDRINUSE');
    // And its log holds no boot of it: a coordinator started there next finds only its own CoordinatorStarted
    const next = await startCoordinator({ dataDir, env: { LEASE_FENCE_TOKENS_FILE: tokensFile } });
    running.push(next);
    const events = await coordinatorHttp(next.url, TEST_TOKENS.viewer.token).get<EventsBody>('/v1/events');
    expect(events.body.events.map((recorded) => recorded.event.type)).toEqual(['CoordinatorStarted']);
  });
});
