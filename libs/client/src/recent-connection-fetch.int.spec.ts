import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { FenceTokenVerifier } from './fence-token-verifier.js';
import { CONNECTION_REUSE_WINDOW_MILLIS } from './recent-connection-fetch.js';
import { createTestSigningKey } from './testing/test-signing-key.js';

/**
 * A coordinator stand-in reached through a partition that healed: each connection answers its
 * first request, then stays open but silent (what a connection cut off by a partition, or to a
 * frozen peer, looks like to the client); a new connection is answered at once.
 */
async function openSilencingServer(body: unknown): Promise<{
  url: string;
  connections: () => number;
  close: () => Promise<void>;
}> {
  const answered = new WeakSet<Socket>();
  let connections = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    if (answered.has(request.socket)) return; // silent from now on: never answered
    answered.add(request.socket);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A pause longer than the reuse window, as between two fetches of the keys or two reports. */
const idle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, CONNECTION_REUSE_WINDOW_MILLIS + 300));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('requests to the coordinator that must not wait on a pooled connection a partition left silent', () => {
  it("the verifier fetches the coordinator's keys again on a new connection after a pause", async () => {
    // Arrange: the keys served once per connection; a verifier that gives a fetch 2 s
    const key = await createTestSigningKey();
    const server = await openSilencingServer(key.jwks);
    cleanups.push(server.close);
    const verifier = new FenceTokenVerifier({
      namespace: 'default',
      keys: { url: `${server.url}/v1/keys`, timeoutMillis: 2_000 },
    });

    // Act: the keys loaded at start, then fetched again (as on an unknown kid, or a set past its age)
    await verifier.loadKeys();
    await idle();
    const second = await verifier.loadKeys().then(
      () => 'loaded',
      (error: unknown) => String(error),
    );

    // Assert: the second fetch was answered on a connection of its own, not sent into the first one
    expect(second).toBe('loaded');
    expect(server.connections()).toBe(2);
  });

  it("the gate's reports after a pause go on a new connection", async () => {
    // Arrange: a gate client that gives an attempt 2 s and does not retry
    const server = await openSilencingServer({ ok: true });
    cleanups.push(server.close);
    const client = new FenceGateClient({
      baseUrl: server.url,
      token: 'gate-token',
      timeoutMillis: 2_000,
      retry: { maxAttempts: 1 },
    });
    const admitted = { resource: 'slot', holderId: 'agent-a', fence: 1 };

    // Act: two reports, one after the other
    await client.reportAdmitted(admitted);
    await idle();
    const second = await client.reportAdmitted({ ...admitted, fence: 2 }).then(
      () => 'reported',
      (error: unknown) => String(error),
    );

    // Assert
    expect(second).toBe('reported');
    expect(server.connections()).toBe(2);
  });
});

describe('a burst of reports', () => {
  it('rides on one connection: no handshake and no TIME_WAIT socket per report', async () => {
    // Arrange: a coordinator stand-in that answers every request and counts connections
    let connections = 0;
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const client = new FenceGateClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 'gate-token',
      retry: { maxAttempts: 1 },
    });

    // Act: 20 reports one after the other, as a gate refusing a writer in a loop sends them
    for (let fence = 1; fence <= 20; fence += 1) {
      await client.reportAdmitted({ resource: 'slot', holderId: 'agent-a', fence });
    }

    // Assert: one, or two when a report went out before undici had put the previous reply's
    // connection back in its pool (it then opens another); never one per report
    expect(connections).toBeLessThanOrEqual(2);
  });
});
