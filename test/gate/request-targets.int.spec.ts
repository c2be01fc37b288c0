/**
 * Request targets the gate does not forward, sent to the BUILT sidecar on a raw connection as a
 * client or a misconfigured HTTP proxy client sends them: `CONNECT host:port` (authority-form, a
 * tunnel request) and `OPTIONS *` (asterisk-form). Each must get the gate's 400 `bad-request`
 * naming what is wrong, never a silently dropped connection, and nothing reaches the upstream.
 * No coordinator is needed: the gate answers these before any token is looked at.
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';

/** Sends `text` on a new connection; resolves with everything received once the gate closed it, or after 3 s. */
const exchange = (gateUrl: string, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(gateUrl);
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let received = '';
    const timer = setTimeout(() => socket.destroy(), 3_000);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });

/** The JSON body of the gate's answer in `received` (whatever its framing). */
const bodyOf = (received: string): { reason: string; message: string } =>
  JSON.parse(received.slice(received.indexOf('{'), received.lastIndexOf('}') + 1)) as {
    reason: string;
    message: string;
  };

describe.skipIf(!gateBuilt())('request targets the gate does not forward', () => {
  let upstream: RecordingUpstream;
  let gate: GateProcess;
  let gateDir: string;
  let closedPort: number;

  beforeAll(async () => {
    gateDir = await createTempDir('request-targets-gate-');
    upstream = await startRecordingUpstream();
    // A coordinator address nobody listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: 'deploy-targets',
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: `http://127.0.0.1:${closedPort}`,
      LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
      LEASE_FENCE_DATA_DIR: gateDir,
    });
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await upstream?.close();
    await removeTempDir(gateDir);
  });

  it('answers CONNECT 400 bad-request naming the method, not a dropped connection', async () => {
    const received = await exchange(
      gate.url,
      `CONNECT ${new URL(upstream.url).host} HTTP/1.1\r\nHost: ${new URL(upstream.url).host}\r\n\r\n`,
    );

    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    const body = bodyOf(received);
    expect(body).toMatchObject({ ok: false, reason: 'bad-request' });
    expect(body.message).toContain('CONNECT');
    expect(upstream.received).toEqual([]);
  });

  it('answers OPTIONS * 400 bad-request saying the target must be a path, not calling it an absolute URL', async () => {
    const received = await exchange(gate.url, 'OPTIONS * HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n');

    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    const body = bodyOf(received);
    expect(body).toMatchObject({ ok: false, reason: 'bad-request' });
    expect(body.message).toContain('"*"');
    expect(body.message).not.toContain('absolute URL');
    expect(upstream.received).toEqual([]);
  });
});
