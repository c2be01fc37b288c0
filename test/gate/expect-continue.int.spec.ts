/**
 * `Expect: 100-continue` through the BUILT sidecar, as curl sends it for a body over 1 MiB: the
 * client sends its headers and waits for `100 Continue` before it sends the body. A write the gate
 * refuses (a stale or invalid token) must be answered at once, before its body is sent, and its
 * connection closed (RFC 9110 §10.1.1); an admitted write gets `100 Continue`, then its body
 * reaches the upstream.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireGrant, coordinatorHttp, type TestGrant } from '../support/coordinator-http.js';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';

const RESOURCE = 'deploy-continue';
const READYZ = '/.well-known/lease-fence-gate/readyz';
const BODY = 'the body of the write';

/** What the client received on its connection, and whether the gate closed it. */
interface Exchange {
  readonly received: string;
  readonly closedByGate: boolean;
}

/**
 * Sends `POST path` with `Expect: 100-continue` and `headers` on a raw connection, and the body
 * only once `100 Continue` came; resolves after a final answer's body arrived, the gate closed the
 * connection, or `waitMillis` passed.
 */
const sendExpectingContinue = (
  gateUrl: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  waitMillis = 3_000,
): Promise<Exchange> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(gateUrl);
    const socket = connect(Number(port), hostname);
    let received = '';
    let bodySent = false;
    const done = (closedByGate: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ received, closedByGate });
    };
    const timer = setTimeout(() => done(false), waitMillis);
    socket.on('error', reject);
    socket.on('end', () => done(true));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (!bodySent && received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        bodySent = true;
        socket.write(BODY);
      }
      if (/HTTP\/1\.1 [2-5]\d\d [^]*\r\n\r\n[^]+/.test(received) && !received.includes('transfer-encoding: chunked'))
        setTimeout(() => done(false), 200);
    });
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: gate\r\nExpect: 100-continue\r\nContent-Length: ${BODY.length}\r\n${head}\r\n`,
    );
  });

describe.skipIf(!gateBuilt())('Expect: 100-continue through the sidecar', () => {
  let coordinator: RunningCoordinator;
  let upstream: RecordingUpstream;
  let gate: GateProcess;
  let gateDir: string;

  beforeAll(async () => {
    gateDir = await createTempDir('expect-continue-gate-');
    coordinator = await startCoordinator();
    upstream = await startRecordingUpstream();
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: RESOURCE,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: coordinator.url,
      LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
      LEASE_FENCE_DATA_DIR: gateDir,
    });
    await eventually('the gate to be ready', async () => (await fetch(`${gate.url}${READYZ}`)).status === 200);
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await coordinator?.cleanup();
    await upstream?.close();
    await removeTempDir(gateDir);
  });

  const acquire = (agent: { token: string }): Promise<TestGrant> =>
    acquireGrant(coordinator.url, agent.token, RESOURCE);

  it('answers a refused write before its body, without 100 Continue, and closes; an admitted one gets 100, then its body is forwarded', async () => {
    // Arrange: agent-a's lease, then agent-b's after agent-a released it
    const old = await acquire(TEST_TOKENS.agentA);
    const released = await coordinatorHttp(coordinator.url, TEST_TOKENS.agentA.token).post(
      `/v1/leases/${RESOURCE}/release`,
      { fence: old.fence },
    );
    expect(released.status).toBe(200);
    const current = await acquire(TEST_TOKENS.agentB);
    const admitted = await sendExpectingContinue(gate.url, '/admitted', { 'Lease-Fence-Token': current.signedToken });

    // Act: the stale holder and a forged token write, each waiting for 100 Continue
    const stale = await sendExpectingContinue(gate.url, '/stale', { 'Lease-Fence-Token': old.signedToken });
    const invalid = await sendExpectingContinue(gate.url, '/invalid', { 'Lease-Fence-Token': 'not.a.token' });

    // Assert: the admitted write was continued and landed; the refusals were answered at once and closed
    expect(admitted.received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    expect(admitted.received).toContain(`POST /admitted ${BODY.length}`);
    expect(stale.received).toMatch(/^HTTP\/1\.1 409 /);
    expect(stale.received).toContain('"reason":"stale-fence"');
    expect(stale.received.toLowerCase()).toContain('connection: close');
    expect(stale.closedByGate).toBe(true);
    expect(invalid.received).toMatch(/^HTTP\/1\.1 401 /);
    expect(invalid.closedByGate).toBe(true);
    expect(upstream.received.map((request) => `${request.url} ${request.body}`)).toEqual([`/admitted ${BODY}`]);
  });
});
