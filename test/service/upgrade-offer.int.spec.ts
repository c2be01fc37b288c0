/**
 * Requests that offer a protocol upgrade (`curl --http2` sends `Connection: Upgrade,
 * HTTP2-Settings` + `Upgrade: h2c`) are served as the HTTP/1.1 requests they also are: RFC 9110
 * lets a server ignore `Upgrade`. Only a WebSocket upgrade of `/v1/stream` upgrades.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

let app: RunningCoordinator;

beforeAll(async () => {
  app = await startCoordinator();
});

afterAll(async () => {
  await app?.cleanup();
});

/** What curl --http2 adds to a request over plain http://. */
const H2C_OFFER = {
  connection: 'Upgrade, HTTP2-Settings',
  upgrade: 'h2c',
  'http2-settings': 'AAMAAABkAAQCAAAAAAIAAAAA',
};

/** One request with node:http (fetch refuses an Upgrade header); resolves with the status and the body text. */
function send(
  method: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${app.url}${path}`, { method, headers, agent: false }, (response) => {
      let text = '';
      response
        .setEncoding('utf8')
        .on('data', (chunk: string) => {
          text += chunk;
        })
        .on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    outgoing.on('upgrade', () => reject(new Error(`${method} ${path}: the server switched protocols`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Sends raw request bytes and resolves with everything the server wrote until it closed the connection. */
function sendRaw(text: string): Promise<string> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(text));
    let received = '';
    socket
      .setEncoding('latin1')
      .on('data', (chunk: string) => {
        received += chunk;
      })
      .on('end', () => resolve(received))
      .on('error', reject);
  });
}

describe('a request offering Upgrade: h2c', () => {
  it('GET /healthz is answered as HTTP/1.1', async () => {
    const reply = await send('GET', '/healthz', H2C_OFFER);
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ status: 'up' });
  });

  it('GET /v1/leases is answered as HTTP/1.1', async () => {
    const reply = await send('GET', '/v1/leases', {
      ...H2C_OFFER,
      authorization: `Bearer ${TEST_TOKENS.viewer.token}`,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toHaveProperty('leases');
  });

  it('POST acquire is answered as HTTP/1.1, its JSON body read whole', async () => {
    const body = JSON.stringify({ requestId: 'h2c-offer-1', ttlMillis: 5000 });
    const reply = await send(
      'POST',
      '/v1/leases/h2c-slot/acquire',
      {
        ...H2C_OFFER,
        authorization: `Bearer ${TEST_TOKENS.agentA.token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    );
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({
      ok: true,
      grant: { resource: 'h2c-slot', holderId: TEST_TOKENS.agentA.holderId, requestId: 'h2c-offer-1' },
    });
  });

  it('GET /v1/stream gets 426 Upgrade Required: only a WebSocket upgrade upgrades', async () => {
    const reply = await send('GET', '/v1/stream', {
      ...H2C_OFFER,
      authorization: `Bearer ${TEST_TOKENS.viewer.token}`,
    });
    expect(reply.status, reply.text).toBe(426);
  });

  it('keeps the connection usable for the next request', async () => {
    const healthz = (extra: string): string => `GET /healthz HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
    const received = await sendRaw(
      `${healthz('Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n')}${healthz('Connection: close\r\n')}`,
    );
    expect(received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });
});

describe('a HEAD request offering an upgrade', () => {
  it('gets a head without a body', async () => {
    // Act: a WebSocket offer on a path that has none, which used to be refused with a JSON body
    const received = await sendRaw(
      'HEAD /v1/nowhere HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );

    // Assert
    const [head, body] = received.split('\r\n\r\n', 2);
    expect(head).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(body).toBe('');
  });
});
