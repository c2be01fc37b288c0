import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { AgentSessionSocket } from './agent-session.js';
import { agentSessionSocketOf } from './agent-session-socket.js';

describe('agentSessionSocketOf, over a real ws connection on 127.0.0.1', () => {
  let server: Server;
  let agent: WebSocket;
  let port: AgentSessionSocket;
  let tcp: Socket;
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
});
