/**
 * The coordinator always ends when it is told to stop or loses its launcher: a `kill -9` of the
 * launcher's process group (`npm run coordinator` under a supervisor or CI runner) stops the
 * coordinator it started, which frees the port and the data directory for the next start; a
 * SIGTERM ends the process even when the reader of its stdout has gone (where pino's exit-time
 * flush used to retry forever) or has stopped reading; and a shutdown that hangs (here: a gate
 * link whose peer never completes the WebSocket close) is abandoned at
 * `LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS`, logging what was still open.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, startCoordinator } from '../support/coordinator-process.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { type ChildExit, waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

/**
 * How long a stopped coordinator may take to end (milliseconds): its shutdown deadline (10 s) plus
 * the log drain (1 s), with room for a loaded machine. A bound on liveness, not a performance figure.
 */
const EXIT_BOUND_MILLIS = 25_000;

/** Processes to kill and directories to remove after each test, whatever happened. */
const leftovers: { pids: number[]; dirs: string[] } = { pids: [], dirs: [] };

afterEach(async () => {
  for (const pid of leftovers.pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of leftovers.dirs.splice(0)) await removeTempDir(dir);
});

/** Whether `pid` has ended (gone, or a zombie waiting to be reaped) within `timeoutMillis`. */
async function endsWithin(pid: number, timeoutMillis: number): Promise<boolean> {
  for (const startedAt = performance.now(); performance.now() - startedAt < timeoutMillis; await delay(100)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return true;
    }
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return true;
  }
  return false;
}

/** How `child` exited, or `'still running'` after `timeoutMillis`. */
const exitWithin = (child: ChildProcess, timeoutMillis: number): Promise<ChildExit | 'still running'> =>
  Promise.race([waitForExit(child), delay(timeoutMillis, 'still running' as const)]);

/** Starts `scripts/start.mjs --coordinator-only` in a process group of its own; resolves once it printed the dashboard URL. */
async function startLauncher(dataDir: string): Promise<{ launcher: ChildProcess; url: string }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('LEASE_FENCE_') && !['PORT', 'HOST', 'LOG_LEVEL'].includes(name),
    ),
  );
  const launcher = spawn(
    process.execPath,
    [join(REPO_ROOT, 'scripts/start.mjs'), '--skip-build', '--coordinator-only'],
    {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LEASE_FENCE_DATA_DIR: dataDir },
    },
  );
  leftovers.pids.push(launcher.pid!);
  const output: string[] = [];
  launcher.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: launcher.stdout! }).on('line', (line) => {
      output.push(line);
      const match = /^dashboard: (https?:\/\/[^/\s]+)/.exec(line);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void waitForExit(launcher).then((exit) =>
      reject(
        new Error(
          `start.mjs exited (${JSON.stringify(exit)}) before printing the dashboard URL:\n${output.join('\n')}`,
        ),
      ),
    );
  });
  return { launcher, url };
}

describe('a coordinator started by scripts/start.mjs', () => {
  it("stops when the launcher's process group is killed with SIGKILL, freeing the port and the data directory", async () => {
    // Arrange
    const dataDir = await createTempDir('lease-fence-launcher-');
    leftovers.dirs.push(dataDir);
    const { launcher, url } = await startLauncher(dataDir);
    const coordinatorPid = (
      JSON.parse(readFileSync(join(dataDir, 'default.events.sqlite.lock'), 'utf8')) as { pid: number }
    ).pid;
    leftovers.pids.push(coordinatorPid);
    expect(coordinatorPid).not.toBe(launcher.pid);

    // Act: what a supervisor does to `npm run coordinator`
    process.kill(-launcher.pid!, 'SIGKILL');

    // Assert
    expect(await endsWithin(coordinatorPid, EXIT_BOUND_MILLIS)).toBe(true);
    await expect(fetch(`${url}/readyz`)).rejects.toThrow();
    const next = await startCoordinator({ dataDir, env: { LEASE_FENCE_TOKENS_FILE: join(dataDir, 'tokens.json') } });
    await next.cleanup();
  });
});

describe('SIGTERM', () => {
  it('ends the coordinator even when the reader of its stdout is gone', async () => {
    // Arrange: as when the launcher that read its output was killed
    const app = await startCoordinator();
    leftovers.pids.push(app.pid);
    app.child.stdout!.destroy();

    // Act
    process.kill(app.pid, 'SIGTERM');

    // Assert
    expect(await exitWithin(app.child, EXIT_BOUND_MILLIS)).toEqual({ code: 0, signal: null });
    await app.cleanup();
  });
});

/**
 * Opens `/v1/gates/link` with a raw socket and completes the WebSocket handshake, then never
 * sends or answers anything: a gate process that froze (SIGSTOP, a debugger, a swapped-out VM)
 * with its TCP connection still up, so the coordinator's close frame is never answered.
 */
async function openFrozenGateLink(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  leftoverSockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(
        [
          'GET /v1/gates/link HTTP/1.1',
          `Host: ${hostname}:${port}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          `Authorization: Bearer ${TEST_TOKENS.gate.token}`,
          '',
          '',
        ].join('\r\n'),
      );
    });
    socket.once('data', (chunk: Buffer) => {
      const status = chunk.toString('latin1').split('\r\n')[0];
      if (status?.startsWith('HTTP/1.1 101')) resolve();
      else reject(new Error(`gate link handshake refused: ${status}`));
    });
  });
  socket.pause(); // frozen: reads nothing more, answers nothing
  return socket;
}

/** Sockets opened by a test, destroyed after it. */
const leftoverSockets: Socket[] = [];
afterEach(() => {
  for (const socket of leftoverSockets.splice(0)) socket.destroy();
});

describe('the shutdown deadline (LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS)', () => {
  it('ends a SIGTERM shutdown that hangs on a frozen gate link, exiting 1 and logging what was still open', async () => {
    // Arrange: the link's WebSocket close waits for the peer's close frame (30 s in ws), longer than the deadline
    const app = await startCoordinator({ env: { LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS: '2000' } });
    leftovers.pids.push(app.pid);
    await openFrozenGateLink(app.url);
    await app.waitForLog((line) => line.msg === 'gate link: connected');

    // Act
    process.kill(app.pid, 'SIGTERM');

    // Assert
    expect(await exitWithin(app.child, EXIT_BOUND_MILLIS)).toEqual({ code: 1, signal: null });
    const report = await app.waitForLog((line) => line.msg?.startsWith('shutdown did not finish in time') === true);
    expect(report).toMatchObject({
      afterMillis: 2000,
      stillOpen: expect.objectContaining({ TCPSocketWrap: expect.any(Number) }),
    });
    expect(app.logs.some((line) => line.msg === 'stopped')).toBe(false);
    await app.cleanup();
  });
});

describe('SIGTERM with a stalled stdout', () => {
  it('ends the coordinator although the reader of its stdout stopped reading and the pipe is full', async () => {
    // Arrange: a request log line per request, each carrying a 4 KiB path, fills any pipe buffer
    const app = await startCoordinator({ env: { LOG_LEVEL: 'debug' } });
    leftovers.pids.push(app.pid);
    app.child.stdout!.pause();
    const path = `/not-here/${'x'.repeat(4096)}`;
    for (let request = 0; request < 1000; request += 1) {
      const response = await fetch(`${app.url}${path}`);
      await response.arrayBuffer();
    }

    // Act
    process.kill(app.pid, 'SIGTERM');

    // Assert
    expect(await exitWithin(app.child, EXIT_BOUND_MILLIS)).not.toBe('still running');
    await app.cleanup();
  });
});
