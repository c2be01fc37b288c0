/**
 * The `/v1/stream` WebSocket against the started app: catch-up → caught-up → live, resume
 * without gap or duplicate, stats and heartbeats, auth at the upgrade, a slow consumer
 * disconnected with `closing` and resumed from its last position, a client that stops
 * answering WebSocket pings terminated, and live clients told to resume (`closing`, error) when
 * the log stops decoding.
 */
import { join } from 'node:path';
import type { EventFrame, StreamFrame } from '@lease-fence/protocol';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { type CoordinatorHttp, coordinatorHttp } from '../support/coordinator-http.js';
import { openStream } from '../support/stream-client.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

const isEvent = (frame: StreamFrame): frame is EventFrame => frame.type === 'event';

/** Attempts a WebSocket upgrade at `url` that the server refuses; resolves with the HTTP status and body. */
const refusedUpgrade = (url: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => {
      socket.close();
      reject(new Error(`the upgrade at ${url} was accepted`));
    });
    socket.once('error', () => undefined);
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response
        .setEncoding('utf8')
        .on('data', (chunk: string) => {
          body += chunk;
        })
        .on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
  });
const positionsOf = (frames: readonly StreamFrame[]): number[] => frames.filter(isEvent).map((f) => f.position);
const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

describe('GET /v1/stream', () => {
  let app: RunningCoordinator;
  let agentA: CoordinatorHttp;
  let agentB: CoordinatorHttp;
  let viewer: CoordinatorHttp;
  let counter = 0;

  beforeAll(async () => {
    app = await startCoordinator({
      env: { LEASE_FENCE_STREAM_HEARTBEAT_MILLIS: '100', LEASE_FENCE_STREAM_STATS_MILLIS: '100' },
    });
    agentA = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
    agentB = coordinatorHttp(app.url, TEST_TOKENS.agentB.token);
    viewer = coordinatorHttp(app.url, TEST_TOKENS.viewer.token);
    // Some history: three grants and a release.
    for (const resource of ['s-1', 's-2', 's-3'])
      await agentA.post(`/v1/leases/${resource}/acquire`, { requestId: `setup-${resource}` });
    const held = await viewer.get<{ leases: { resource: string; fence: number }[] }>('/v1/leases');
    const s1 = held.body.leases.find((l) => l.resource === 's-1');
    await agentA.post('/v1/leases/s-1/release', { fence: s1?.fence });
  });

  afterAll(async () => {
    await app?.cleanup();
  });

  it('sends every event after the position in order, then caught-up at the head, then live events', async () => {
    // Arrange
    const head = await viewer.head();
    const stream = await openStream(app.wsUrl, { after: 0, token: TEST_TOKENS.viewer.token });

    // Act
    const caughtUp = await stream.waitFor((f) => f.type === 'caught-up');
    await agentB.post(`/v1/leases/live-${++counter}/acquire`, { requestId: 'live' });
    const live = await stream.waitFor((f): f is EventFrame => isEvent(f) && f.position > head);

    // Assert
    const beforeCaughtUp = stream.frames.slice(0, stream.frames.indexOf(caughtUp));
    expect(positionsOf(beforeCaughtUp)).toEqual(range(1, head));
    expect(caughtUp).toEqual({ type: 'caught-up', position: head });
    expect(live.position).toBe(head + 1);
    expect(live.event).toMatchObject({ type: 'LeaseGranted', data: { holderId: 'agent-b' } });
    await stream.close();
  });

  it('resumes after a given position with no gap and no duplicate', async () => {
    // Arrange
    const head = await viewer.head();
    const after = head - 2;

    // Act
    const stream = await openStream(app.wsUrl, { after, bearer: TEST_TOKENS.agentA.token });
    await stream.waitFor((f) => f.type === 'caught-up');

    // Assert
    expect(positionsOf(stream.frames)).toEqual([after + 1, after + 2]);
    await stream.close();
  });

  it('with batch=1 sends the same frames in the same order, several to a message', async () => {
    // Arrange
    const head = await viewer.head();
    const single = await openStream(app.wsUrl, { after: 0, token: TEST_TOKENS.viewer.token });
    const batched = await openStream(app.wsUrl, { after: 0, token: TEST_TOKENS.viewer.token, batch: true });

    // Act
    await single.waitFor((f) => f.type === 'caught-up');
    await batched.waitFor((f) => f.type === 'caught-up');
    await agentB.post(`/v1/leases/live-${++counter}/acquire`, { requestId: 'live-batch' });
    await single.waitFor((f) => isEvent(f) && f.position > head);
    await batched.waitFor((f) => isEvent(f) && f.position > head);

    // Assert
    const eventsAndCaughtUp = (frames: readonly StreamFrame[]): StreamFrame[] =>
      frames.filter((f) => f.type === 'event' || f.type === 'caught-up');
    expect(eventsAndCaughtUp(batched.frames)).toEqual(eventsAndCaughtUp(single.frames));
    expect(positionsOf(batched.frames)).toEqual(range(1, head + 1));
    expect(batched.messages()).toBeLessThan(batched.frames.length);
    await single.close();
    await batched.close();
  });

  it('sends caught-up at once when the client already has the head', async () => {
    const head = await viewer.head();
    const stream = await openStream(app.wsUrl, { after: head, token: TEST_TOKENS.gate.token });
    expect(await stream.waitFor((f) => f.type === 'caught-up')).toEqual({ type: 'caught-up', position: head });
    expect(positionsOf(stream.frames)).toEqual([]);
    await stream.close();
  });

  it('sends stats frames with denial counters by reason (denials are not in the log)', async () => {
    // Arrange: a 'held' denial
    const resource = `contended-${++counter}`;
    await agentA.post(`/v1/leases/${resource}/acquire`, { requestId: 'c1' });
    await agentB.post(`/v1/leases/${resource}/acquire`, { requestId: 'c2' });
    const stream = await openStream(app.wsUrl, { token: TEST_TOKENS.viewer.token });

    // Act
    const stats = await stream.waitFor((f) => f.type === 'stats');

    // Assert
    expect(stats).toMatchObject({ type: 'stats', bootId: expect.any(String), grants: expect.any(Number) });
    expect((stats as Extract<StreamFrame, { type: 'stats' }>).denials.held).toBeGreaterThanOrEqual(1);
    await stream.close();
  });

  it('sends heartbeats with the head position while nothing happens', async () => {
    const head = await viewer.head();
    const stream = await openStream(app.wsUrl, { after: head, token: TEST_TOKENS.viewer.token });
    const heartbeat = await stream.waitFor((f) => f.type === 'heartbeat');
    expect(heartbeat).toMatchObject({ type: 'heartbeat', position: head });
    await stream.close();
  });

  it.each([
    ['no token', {}, 401],
    ['an unknown token', { token: 'nope' }, 401],
    ['a negative after', { token: TEST_TOKENS.viewer.token, after: -1 }, 400],
  ])('refuses the upgrade with %s as an HTTP %i', async (_name, options, status) => {
    await expect(openStream(app.wsUrl, options)).rejects.toMatchObject({ status });
  });

  it.each(['after=0x10', 'after=1e3', 'after=', 'after=1&after=2'])(
    'refuses %s at the upgrade with 400 and the same words as GET /v1/events',
    async (query) => {
      // Act
      const refused = await refusedUpgrade(`${app.wsUrl}/v1/stream?${query}&token=${TEST_TOKENS.viewer.token}`);
      const history = await viewer.get<{ message: string }>(`/v1/events?${query}`);

      // Assert
      expect(refused.status).toBe(400);
      expect(history.status).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid-request', message: history.body.message });
      expect(history.body.message).toMatch(/^after: /);
    },
  );

  it('logs a refused stream token at warn without the token (it travels in the query string)', async () => {
    await expect(openStream(app.wsUrl, { token: 'stream-secret-token' })).rejects.toMatchObject({ status: 401 });
    expect(await app.waitForLog((l) => l.path === '/v1/stream' && l.reason === 'unknown bearer token')).toMatchObject({
      level: 40,
      method: 'GET',
      status: 401,
    });
    expect(JSON.stringify(app.logs)).not.toContain('stream-secret-token');
  });

  it('answers a plain GET (no WebSocket upgrade) with 426 Upgrade Required saying how to connect', async () => {
    const reply = await viewer.get<{ error: string; message: string }>('/v1/stream');
    expect(reply.status).toBe(426);
    expect(reply.headers.get('upgrade')).toBe('websocket');
    expect(reply.body).toMatchObject({
      error: 'upgrade-required',
      message: expect.stringContaining('connect with a WebSocket client'),
    });
  });

  it('closes a client whose position is beyond the head with closing at the head', async () => {
    const head = await viewer.head();
    const stream = await openStream(app.wsUrl, { after: head + 100, token: TEST_TOKENS.viewer.token });
    await stream.closed;
    expect(stream.frames).toEqual([{ type: 'closing', reason: 'after-beyond-head', position: head }]);
  });
});

describe('GET /v1/stream with a slow consumer', () => {
  let app: RunningCoordinator;

  beforeAll(async () => {
    app = await startCoordinator({
      env: {
        LEASE_FENCE_EVENT_LOG: 'memory',
        LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES: '8192',
        LEASE_FENCE_STREAM_STATS_MILLIS: '60000',
      },
    });
  });

  afterAll(async () => {
    await app?.cleanup();
  });

  // With batch=1 the frames a turn holds back count as buffered too (coalescing-socket.ts), so the
  // bound holds the same.
  it.each([{ batch: false }, { batch: true }])(
    'sends closing and disconnects a client that stops reading, which then resumes with no gap and no duplicate (batch: $batch)',
    async ({ batch }) => {
      // Given a live client that stops reading
      const agent = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
      const viewer = coordinatorHttp(app.url, TEST_TOKENS.viewer.token);
      const stream = await openStream(app.wsUrl, { token: TEST_TOKENS.viewer.token, batch });
      const live = await stream.waitFor((f) => f.type === 'caught-up');
      stream.pause();

      // When writers keep appending until the server gives up on it (this client: past its caught-up position)
      let disconnected = false;
      const slow = app
        .waitForLog(
          (l) => l.msg === 'stream: slow consumer disconnected' && Number(l.position) > Number(live.position),
          45_000,
        )
        .then((line) => {
          disconnected = true;
          return line;
        });
      let n = 0;
      while (!disconnected) {
        await Promise.all(
          Array.from({ length: 32 }, () => {
            const resource = `slow-${batch ? 'batched' : 'single'}-${n++}`;
            return agent.post(`/v1/leases/${resource}/acquire`, { requestId: resource, ttlMillis: 60_000 });
          }),
        );
      }
      const logged = await slow;
      stream.resume();
      const closed = await stream.closed;

      // Then it was told why and where to resume, and got every event up to there, in order
      const closing = stream.frames.at(-1);
      expect(closed.code).toBe(1013);
      expect(closing).toEqual({ type: 'closing', reason: 'slow-consumer', position: logged.position });
      const firstPart = positionsOf(stream.frames);
      expect(firstPart).toEqual(range(1, firstPart.length));
      expect(firstPart.at(-1)).toBe(logged.position);

      // And resuming after that position delivers the rest exactly once
      const head = await viewer.head();
      const resumed = await openStream(app.wsUrl, { after: Number(logged.position), token: TEST_TOKENS.viewer.token });
      const caughtUp = await resumed.waitFor((f) => f.type === 'caught-up');
      expect(caughtUp).toEqual({ type: 'caught-up', position: head });
      expect([...firstPart, ...positionsOf(resumed.frames)]).toEqual(range(1, head));
      await resumed.close();
    },
  );
});

/** Opens a bare `ws` client on the stream as the viewer; `autoPong: false` makes it a peer that never answers pings. */
/**
 * Opens a stream; `caughtUp` and `firstPing` are watched from the start, since the first frames
 * and a ping can arrive in the same read as the upgrade reply, before the code awaiting `open` runs.
 */
const openBareStream = (
  wsUrl: string,
  autoPong: boolean,
): Promise<{ socket: WebSocket; caughtUp: Promise<void>; firstPing: Promise<void> }> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(`${wsUrl}/v1/stream?token=${TEST_TOKENS.viewer.token}`, { autoPong });
    const caughtUp = new Promise<void>((caught) =>
      socket.on('message', (data) => {
        if ((JSON.parse(String(data)) as StreamFrame).type === 'caught-up') caught();
      }),
    );
    const firstPing = new Promise<void>((pinged) => socket.once('ping', () => pinged()));
    socket.once('open', () => {
      socket.off('error', reject);
      resolve({ socket, caughtUp, firstPing });
    });
    socket.once('error', reject);
  });
/** Resolves once `socket` has received `count` more pings; rejects if it closes first. */
const pingsReceived = (socket: WebSocket, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0;
    const onPing = (): void => {
      seen += 1;
      if (seen < count) return;
      socket.off('close', onClose);
      socket.off('ping', onPing);
      resolve();
    };
    const onClose = (code: number): void => {
      socket.off('ping', onPing);
      reject(new Error(`closed (${code}) after ${seen} of ${count} pings`));
    };
    socket.on('ping', onPing);
    socket.once('close', onClose);
  });

describe('GET /v1/stream keepalive', () => {
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

  it('terminates a client that does not answer a ping by the next one, and keeps a client that answers', async () => {
    // Given a client that answers pings (as browsers do) and one that never does (a laptop that slept)
    const viewer = coordinatorHttp(app.url, TEST_TOKENS.viewer.token);
    const head = await viewer.head();
    const { socket: answering } = await openBareStream(app.wsUrl, true);
    const {
      socket: silent,
      caughtUp: silentCaughtUp,
      firstPing: silentPinged,
    } = await openBareStream(app.wsUrl, false);
    const silentClosed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));

    // When the pings come
    await silentCaughtUp;
    await silentPinged;
    const closeCode = await silentClosed;
    const logged = await app.waitForLog((l) => l.msg === 'stream: unresponsive client terminated (no pong)');
    await pingsReceived(answering, 3); // three more deadlines pass

    // Then the silent one was terminated (no close handshake), counted and logged once; the other is still connected
    const metrics = (await viewer.get('/metrics')).text;
    expect(closeCode).toBe(1006);
    expect(logged).toMatchObject({ level: 30, position: head, pingIntervalMillis: 200 });
    expect(app.logs.filter((l) => l.msg === logged.msg)).toHaveLength(1);
    expect(metrics).toMatch(/^lease_fence_stream_unresponsive_terminations_total 1$/m);
    expect(metrics).toMatch(/^lease_fence_stream_clients 1$/m);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    answering.close();
  });
});

describe('GET /v1/stream when the coordinator stops', () => {
  it("sends closing (shutdown) with the client's last position, closes with 1001, and the process exits 0", async () => {
    // Given a caught-up client
    const app = await startCoordinator({ env: { LEASE_FENCE_EVENT_LOG: 'memory' } });
    try {
      const stream = await openStream(app.wsUrl, { token: TEST_TOKENS.viewer.token });
      const caughtUp = await stream.waitFor((f) => f.type === 'caught-up');

      // When the coordinator is told to stop
      const exit = await app.stop();
      const closed = await stream.closed;

      // Then the client was told where to resume, and the process ended cleanly
      expect(stream.frames.at(-1)).toEqual({
        type: 'closing',
        reason: 'shutdown',
        position: caughtUp.type === 'caught-up' ? caughtUp.position : -1,
      });
      expect(closed.code).toBe(1001);
      expect(exit).toEqual({ code: 0, signal: null });
    } finally {
      await app.cleanup();
    }
  });
});

describe('GET /v1/stream when the log stops decoding', () => {
  let app: RunningCoordinator;

  afterAll(async () => {
    await app?.cleanup();
  });

  it('sends each live client closing (event-log-corrupt) at its last position, naming the damaged record as GET /v1/events does, and closes it with 1011', async () => {
    // Given a live client (on the shared live subscription once it has caught up) and one event after it connected
    app = await startCoordinator({
      env: { LEASE_FENCE_STREAM_HEARTBEAT_MILLIS: '100', LEASE_FENCE_STREAM_STATS_MILLIS: '100' },
    });
    const agent = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);
    const head = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).head();
    const stream = await openStream(app.wsUrl, { after: head, token: TEST_TOKENS.viewer.token });
    await stream.waitFor((f) => f.type === 'caught-up');
    await agent.post('/v1/leases/corrupt-next/acquire', { requestId: 'before-the-damage' });
    await stream.waitFor((f) => f.type === 'event' && f.position === head + 1);

    // When a record that does not decode appears in the log file (damage, or a foreign writer)
    const db = new Database(join(app.dataDir, 'default.events.sqlite'));
    db.prepare('INSERT INTO events (position, type, version, data, recorded_at) VALUES (?, ?, ?, ?, ?)').run(
      head + 2,
      'LeaseGranted',
      1,
      '{not json',
      Date.now(),
    );
    db.close();

    // Then the client is told where to resume and what is damaged, in the words of the HTTP reply, and the socket is closed
    const closed = await stream.closed;
    const reply = await coordinatorHttp(app.url, TEST_TOKENS.viewer.token).get<{ error: string; message: string }>(
      `/v1/events?after=${head + 1}`,
    );
    expect(reply.status).toBe(500);
    expect(reply.body.message).toContain(`event at position ${head + 2} is corrupt: data`);
    expect(stream.frames.at(-1)).toEqual({
      type: 'closing',
      reason: reply.body.error,
      position: head + 1,
      corruptPosition: head + 2,
      field: 'data',
      message: reply.body.message,
    });
    expect(closed).toMatchObject({ code: 1011, reason: 'event-log-corrupt' });
  });
});
