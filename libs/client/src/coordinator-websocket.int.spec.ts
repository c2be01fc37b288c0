import { once } from 'node:events';
import { Socket, type AddressInfo } from 'node:net';
import { AGENT_LINK_SUBPROTOCOL } from '@lease-fence/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { CoordinatorWebSocket } from './coordinator-websocket.js';

/** Accepts any body: these tests are about how frames are written, not how replies are parsed. */
const ANY = { safeParse: (data: unknown) => ({ success: true as const, data }) };

describe('CoordinatorWebSocket, against a ws server on 127.0.0.1 that answers when told', () => {
  let server: WebSocketServer;
  let link: CoordinatorWebSocket;
  let frames: { id: number; resource: string }[];
  let peer: WebSocket | undefined;

  const answerAll = (): void => {
    for (const { id } of frames.splice(0)) peer!.send(JSON.stringify({ id, status: 200, body: { ok: true } }));
  };
  const request = (resource: string): Promise<unknown> =>
    link.request(`release ${resource}`, 'release', resource, { fence: 1 }, { 200: ANY });

  beforeEach(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => AGENT_LINK_SUBPROTOCOL });
    await once(server, 'listening');
    frames = [];
    server.on('connection', (socket) => {
      peer = socket;
      socket.on('message', (data) => frames.push(JSON.parse(String(data)) as { id: number; resource: string }));
    });
    link = new CoordinatorWebSocket('test', {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 'agent-token',
      timeoutMillis: 5_000,
      retry: { maxAttempts: 1 },
    });
    // The connection opens on the first operation.
    const first = request('warm-up');
    await vi.waitFor(() => expect(frames).toHaveLength(1));
    answerAll();
    await first;
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await link.close();
    server.close();
  });

  it('writes the requests of one turn in one system call, and those of a later turn in another', async () => {
    // Arrange: count the writes reaching any TCP socket of this process (the server writes nothing meanwhile)
    const writev = vi.spyOn(Socket.prototype as unknown as { _writev: (...args: unknown[]) => void }, '_writev');
    const write = vi.spyOn(Socket.prototype as unknown as { _write: (...args: unknown[]) => void }, '_write');
    const writes = (): number => writev.mock.calls.length + write.mock.calls.length;

    // Act: three operations started in one turn, then one in a later turn
    const together = [request('a'), request('b'), request('c')];
    await vi.waitFor(() => expect(frames).toHaveLength(3));
    const writesForOneTurn = writes();
    const later = request('d');
    await vi.waitFor(() => expect(frames).toHaveLength(4));
    const writesForTwoTurns = writes();
    answerAll();
    await Promise.all([...together, later]);

    // Assert
    expect(writesForOneTurn).toBe(1);
    expect(writesForTwoTurns).toBe(2);
  });
});

describe('CoordinatorWebSocket, when the coordinator goes silent with the socket open', () => {
  /** A coordinator stand-in on 127.0.0.1: answers every frame unless silenced, pongs unless told not to. */
  const openServer = async (options: { autoPong: boolean }) => {
    const server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      autoPong: options.autoPong,
      handleProtocols: () => AGENT_LINK_SUBPROTOCOL,
    });
    await once(server, 'listening');
    const connections: {
      socket: WebSocket;
      /** The TCP socket under it (paused: the server reads nothing more, as a frozen process). */
      tcp: Socket;
      frames: { id: number; body: unknown }[];
      pings: number;
      closed: boolean;
    }[] = [];
    let silent = false;
    server.on('connection', (socket, request) => {
      const connection = {
        socket,
        tcp: request.socket,
        frames: [] as { id: number; body: unknown }[],
        pings: 0,
        closed: false,
      };
      connections.push(connection);
      socket.on('ping', () => (connection.pings += 1));
      socket.on('close', () => (connection.closed = true));
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { id: number; body: unknown };
        connection.frames.push(frame);
        if (!silent) socket.send(JSON.stringify({ id: frame.id, status: 200, body: { ok: true } }));
      });
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      connections,
      /** The open connections stop answering frames (as a frozen coordinator); new connections too. */
      silence: (value = true) => void (silent = value),
      close: () => {
        for (const { socket } of connections) socket.terminate();
        server.close();
      },
    };
  };
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const open = async (serverOptions: { autoPong: boolean }, pingIntervalMillis: number) => {
    const server = await openServer(serverOptions);
    cleanups.push(server.close);
    const link = new CoordinatorWebSocket('test', {
      baseUrl: server.url,
      token: 'agent-token',
      timeoutMillis: 300,
      retry: { maxAttempts: 3, initialDelayMillis: 1, maxDelayMillis: 1 },
      pingIntervalMillis,
    });
    cleanups.push(() => link.close());
    const request = (requestId: string): Promise<unknown> =>
      link.request(`acquire ${requestId}`, 'acquire', requestId, { requestId }, { 200: ANY });
    await request('warm-up');
    return { server, link, request };
  };

  it('retries an operation that timed out on a connection silent since it was sent on a new connection, with the same body', async () => {
    // Arrange: no keepalive within the test (a long ping interval); the coordinator stops answering, pongs included
    const { server, request } = await open({ autoPong: false }, 600_000);
    server.silence();

    // Act: the first attempt times out; the coordinator answers again from the next connection on
    const answered = request('r-1');
    await vi.waitFor(() => expect(server.connections[0]!.frames).toHaveLength(2));
    server.silence(false);
    await answered;

    // Assert: the silent connection was dropped, and the operation resent on a new one with its requestId
    expect(server.connections).toHaveLength(2);
    await vi.waitFor(() => expect(server.connections[0]!.closed).toBe(true));
    expect(server.connections.map((c) => c.frames.at(-1)!.body)).toEqual([{ requestId: 'r-1' }, { requestId: 'r-1' }]);
  });

  it('keeps a connection that spoke since the operation was sent, when the operation timed out', async () => {
    // Arrange: the coordinator does not answer the frame, but pings (alive, only slow to reply)
    const { server, request } = await open({ autoPong: true }, 600_000);
    server.silence();
    const pinger = setInterval(() => server.connections[0]!.socket.ping(), 50);
    cleanups.push(() => clearInterval(pinger));

    // Act
    const answered = request('r-2');
    await vi.waitFor(() => expect(server.connections[0]!.frames).toHaveLength(3), { timeout: 2000 });
    server.silence(false); // the last attempt is answered
    await answered;

    // Assert: every attempt went on the one connection
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]!.closed).toBe(false);
  });

  it('pings an idle link, keeps it while the coordinator answers, and drops it when the coordinator goes silent', async () => {
    // Arrange
    const answering = await open({ autoPong: true }, 20);
    const silent = await open({ autoPong: false }, 20);

    // Act: a few intervals without any operation
    await vi.waitFor(() => expect(answering.server.connections[0]!.pings).toBeGreaterThanOrEqual(4));
    await vi.waitFor(() => expect(silent.server.connections[0]!.closed).toBe(true));
    await silent.request('after');

    // Assert: the answering link is still the first one; the silent one was dropped, and the next operation reconnected
    expect(answering.server.connections).toHaveLength(1);
    expect(answering.server.connections[0]!.closed).toBe(false);
    expect(silent.server.connections).toHaveLength(2);
  });

  it('stops pinging once closed, and its pings keep no process alive', async () => {
    // Arrange: a link that pings every 20 ms
    const timeoutsBefore = process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const { server, link } = await open({ autoPong: true }, 20);
    await vi.waitFor(() => expect(server.connections[0]!.pings).toBeGreaterThanOrEqual(2));

    // Act / Assert: while idle, no timer of the link holds the event loop (only the socket does, until closed).
    // At most as many as before, sampled over several intervals: a timer of an earlier test (ws's close timer) may end meanwhile.
    for (let sample = 0; sample < 5; sample += 1) {
      expect(process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length).toBeLessThanOrEqual(
        timeoutsBefore,
      );
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 10).unref());
    }
    await link.close();
    const pingsAtClose = server.connections[0]!.pings;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.connections[0]!.pings).toBe(pingsAtClose);
  });

  it('closes within the ping interval when the coordinator never completes the close handshake', async () => {
    // Arrange: the coordinator's process is frozen: its TCP socket is open and reads nothing, so no close reply comes
    const { server, link } = await open({ autoPong: true }, 200);
    server.connections[0]!.tcp.pause();

    // Act
    const started = performance.now();
    await link.close();

    // Assert: the close did not wait ws's 30 s for the handshake; the connection is gone (seen once the server reads again)
    expect(performance.now() - started).toBeLessThan(5_000);
    server.connections[0]!.tcp.resume();
    await vi.waitFor(() => expect(server.connections[0]!.closed).toBe(true));
  });

  it('refuses a pingIntervalMillis out of range, naming it', () => {
    for (const pingIntervalMillis of [0, 1.5, -1, 2 ** 31, Number.NaN])
      expect(
        () => new CoordinatorWebSocket('test', { baseUrl: 'http://127.0.0.1:1', token: 't', pingIntervalMillis }),
      ).toThrow(
        new RangeError(
          `test: pingIntervalMillis must be an integer number of milliseconds in [1, 2147483647], got ${pingIntervalMillis}`,
        ),
      );
  });
});
