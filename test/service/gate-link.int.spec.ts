/**
 * The gate link `/v1/gates/link` at the HTTP edge: a plain GET is told to upgrade (426, like
 * `/v1/stream`), a refused token gets a real HTTP status before any upgrade, and a gate that stops
 * answering pings is terminated (like a stream client), while one that answers stays linked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GATE_LINK_PATH } from '@lease-fence/protocol';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

let app: RunningCoordinator;

beforeAll(async () => {
  app = await startCoordinator({
    env: {
      LEASE_FENCE_EVENT_LOG: 'memory',
      LEASE_FENCE_STREAM_PING_MILLIS: '200',
      LEASE_FENCE_STREAM_STATS_MILLIS: '60000',
    },
  });
});

afterAll(async () => {
  await app?.cleanup();
});

/** Opens a gate link with the gate token; `autoPong: false` makes a gate that never answers pings. */
const openLink = (autoPong: boolean): Promise<WebSocket> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(`${app.wsUrl}${GATE_LINK_PATH}`, {
      headers: { authorization: `Bearer ${TEST_TOKENS.gate.token}` },
      autoPong,
    });
    socket.once('open', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });

/** The HTTP status an upgrade to `path` with `token` was refused with (rejects if it upgraded). */
const refusedUpgrade = (path: string, token: string | undefined): Promise<number> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(`${app.wsUrl}${path}`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => {
      socket.close();
      reject(new Error(`${path} upgraded`));
    });
    socket.once('error', () => undefined);
  });

describe('GET /v1/gates/link', () => {
  it('answers a plain GET (no WebSocket upgrade) with 426 Upgrade Required saying how to connect', async () => {
    const reply = await call(app.url, 'GET', GATE_LINK_PATH, { token: TEST_TOKENS.gate.token });
    expect(reply.status).toBe(426);
    expect(reply.headers.get('upgrade')).toBe('websocket');
    expect(reply.body).toMatchObject({
      error: 'upgrade-required',
      message: expect.stringContaining('connect with a WebSocket client'),
    });
  });

  it('refuses an upgrade before it happens: 401 without a token, 403 for a viewer, 404 on a path that is no WebSocket', async () => {
    expect(await refusedUpgrade(GATE_LINK_PATH, undefined)).toBe(401);
    expect(await refusedUpgrade(GATE_LINK_PATH, TEST_TOKENS.viewer.token)).toBe(403);
    expect(await refusedUpgrade('/v1/leases', TEST_TOKENS.viewer.token)).toBe(404);
  });

  it('terminates a gate that does not answer a ping by the next one, and keeps a gate that answers', async () => {
    // Given a gate that answers pings and one that never does
    const answering = await openLink(true);
    const silent = await openLink(false);
    const silentClosed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    let answeringPings = 0;
    answering.on('ping', () => {
      answeringPings += 1;
    });

    // When the pings come
    const closeCode = await silentClosed;
    const logged = await app.waitForLog((l) => l.msg === 'gate link: unresponsive gate terminated (no pong)');
    const pingsBefore = answeringPings;
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (answeringPings >= pingsBefore + 3) resolve();
        else setTimeout(check, 50);
      };
      check();
    });

    // Then the silent one was terminated (no close handshake) and logged once; the other is still linked
    expect(closeCode).toBe(1006);
    expect(logged).toMatchObject({ level: 30, gateId: TEST_TOKENS.gate.gateId, pingIntervalMillis: 200 });
    expect(app.logs.filter((l) => l.msg === logged.msg)).toHaveLength(1);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    answering.close();
  });
});
