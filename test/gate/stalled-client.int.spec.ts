/**
 * A writer that stops sending in the middle of its body (a stalled agent, a NAT that dropped
 * the connection without a reset) in front of an upstream with no request timeout of its own,
 * through the BUILT sidecar. Each such write holds one of the gate's upstream connections (128)
 * until the client's connection ends: 130 of them left every other request, reads included,
 * waiting without a bound. The gate must cut a client connection silent for longer than
 * `LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS` (plus a margin), which frees its upstream connection.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';

const RESOURCE = 'deploy-stalled-client';
const READYZ = '/.well-known/lease-fence-gate/readyz';
const UPSTREAM_TIMEOUT_MILLIS = 1_000;
/** More than the gate's 128 upstream connections. */
const STALLED_WRITERS = 130;

describe.skipIf(!gateBuilt())('a writer whose body stalls', () => {
  let coordinator: RunningCoordinator;
  let upstream: Server;
  let upstreamUrl: string;
  let gate: GateProcess;
  let gateDir: string;
  /** Each request whose body reached the upstream whole. */
  const upstreamSaw: string[] = [];

  beforeAll(async () => {
    gateDir = await createTempDir('stalled-client-gate-');
    coordinator = await startCoordinator();
    upstream = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        upstreamSaw.push(`${request.url} ended`);
        response.end('ok');
      });
    });
    upstream.requestTimeout = 0;
    upstream.headersTimeout = 0;
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: RESOURCE,
      LEASE_FENCE_GATE_UPSTREAM: upstreamUrl,
      LEASE_FENCE_COORDINATOR_URL: coordinator.url,
      LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
      LEASE_FENCE_DATA_DIR: gateDir,
      LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS: String(UPSTREAM_TIMEOUT_MILLIS),
    });
    await eventually('the gate to be ready', async () => (await fetch(`${gate.url}${READYZ}`)).status === 200);
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await coordinator?.cleanup();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
    await removeTempDir(gateDir);
  });

  it('130 of them are disconnected once silent past the timeout, and a read then gets through', async () => {
    // Arrange: a current lease
    const reply = await coordinatorHttp(coordinator.url, TEST_TOKENS.agentA.token).post<{
      grant: { signedToken: string };
    }>(`/v1/leases/${RESOURCE}/acquire`, { requestId: `stalled-${Math.random()}`, ttlMillis: 60_000 });
    expect(reply.status).toBe(200);
    const { hostname, port } = new URL(gate.url);

    // Act: more stalled writers than the gate has upstream connections: headers and half the body, then silence
    const stalled = Array.from(
      { length: STALLED_WRITERS },
      (_, index) =>
        new Promise<boolean>((resolve) => {
          const socket = connect(Number(port), hostname, () =>
            socket.write(
              `POST /stalled-${index} HTTP/1.1\r\nHost: gate\r\nLease-Fence-Token: ${reply.body.grant.signedToken}\r\nContent-Length: 100\r\n\r\nhalf`,
            ),
          );
          socket.on('error', () => undefined);
          socket.on('close', () => resolve(true));
          setTimeout(() => {
            socket.destroy();
            resolve(false);
          }, 10_000);
        }),
    );
    const closedByGate = await Promise.all(stalled);
    const read = await fetch(`${gate.url}/read`, { signal: AbortSignal.timeout(5_000) });

    // Assert: each cut by the gate within the timeout and its margin; none reached the upstream whole; the read passed
    expect(closedByGate.filter((closed) => !closed)).toEqual([]);
    expect(read.status).toBe(200);
    expect(upstreamSaw).toEqual(['/read ended']);
  });
});
