import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { decideReply } from '../http/api-exception.filter.js';
import { AgentSession, type AgentSessionSocket } from './agent-session.js';
import { agentSessionSocketOf } from './agent-session-socket.js';

describe('agentSessionSocketOf, over a real ws connection on 127.0.0.1', () => {
  let server: Server;
  let agent: WebSocket;
  let port: AgentSessionSocket;
  let tcp: Socket;
  let serverSide: WebSocket;
  let received: string[];

  beforeEach(async () => {
    // Arrange: a ws server upgraded from an HTTP server's `upgrade` event, as the coordinator's
    const wss = new WebSocketServer({ noServer: true });
    server = createServer();
    const accepted = new Promise<[WebSocket, IncomingMessage]>((resolve) =>
      server.on('upgrade', (request, socket, head) =>
        wss.handleUpgrade(request, socket, head, (client) => resolve([client, request])),
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    agent = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    received = [];
    agent.on('message', (data) => received.push(String(data)));
    const [client, request] = await accepted;
    serverSide = client;
    tcp = request.socket as Socket;
    port = agentSessionSocketOf(client, tcp);
    await once(agent, 'open');
  });

  afterEach(async () => {
    agent.terminate();
    server.close();
    await once(server, 'close');
  });

  it('counts corked frames in bufferedAmount, and writes them in one system call at uncork', async () => {
    // Arrange: count the writes that reach the TCP socket's implementation (each is one write or writev)
    const writev = vi.spyOn(tcp as unknown as { _writev: (...args: unknown[]) => void }, '_writev');
    const write = vi.spyOn(tcp as unknown as { _write: (...args: unknown[]) => void }, '_write');

    // Act
    port.cork();
    port.send('a'.repeat(100));
    port.send('b'.repeat(100));
    const heldBytes = port.bufferedAmount;
    const writesWhileCorked = writev.mock.calls.length + write.mock.calls.length;
    port.uncork();
    const writesAfterUncork = writev.mock.calls.length + write.mock.calls.length;
    await vi.waitFor(() => expect(received).toHaveLength(2));

    // Assert: each frame is a 2-byte header and its 100 bytes
    expect(heldBytes).toBe(2 * (2 + 100));
    expect(writesWhileCorked).toBe(0);
    expect(writesAfterUncork).toBe(1);
    expect(received).toEqual(['a'.repeat(100), 'b'.repeat(100)]);
    expect(port.bufferedAmount).toBe(0);
  });

  it('writes each frame on its own without a cork (what the cork saves)', async () => {
    // Arrange
    const writev = vi.spyOn(tcp as unknown as { _writev: (...args: unknown[]) => void }, '_writev');
    const write = vi.spyOn(tcp as unknown as { _write: (...args: unknown[]) => void }, '_write');

    // Act
    port.send('a'.repeat(100));
    port.send('b'.repeat(100));
    await vi.waitFor(() => expect(received).toHaveLength(2));

    // Assert
    expect(writev.mock.calls.length + write.mock.calls.length).toBe(2);
  });

  it("disconnects an agent that never reads within the slow-reader time and the close grace, not ws's 30 s close timeout", async () => {
    // Arrange: the agent stops reading its TCP socket; each operation answers 256 KiB
    (agent as unknown as { _socket: Socket })._socket.pause();
    const big = 'x'.repeat(256 * 1024);
    const slow: string[] = [];
    const session = new AgentSession(port, {
      operations: {
        acquire: () => Promise.resolve({ big }),
        renew: () => Promise.resolve({}),
        release: () => Promise.resolve({}),
      },
      decide: (error) => decideReply(error, { maxBodyBytes: 16_384 }),
      onBug: () => undefined,
      maxInFlight: 256,
      maxBufferedBytes: 64 * 1024,
      slowReaderMillis: 200,
      drainCheckMillis: 10,
      closeGraceMillis: 200,
      onSlowReader: (reason) => slow.push(reason),
    });
    serverSide.once('close', () => session.closed());
    const closed = once(serverSide, 'close');
    const startedMillis = performance.now();

    // Act: replies until the kernel's buffers are full and the session's own exceed the bound
    for (let id = 1; id <= 64; id += 1) session.receive(JSON.stringify({ id, op: 'acquire', resource: 'r', body: {} }));
    await closed;

    // Assert
    expect(slow).toHaveLength(1);
    expect(performance.now() - startedMillis).toBeLessThan(5_000);
  });
});
