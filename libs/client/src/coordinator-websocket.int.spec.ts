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
