import { describe, expect, it } from 'vitest';
import { coalesceWrites, type Corkable, type TextFrameClient } from './coalescing-socket.js';

/** A client double that records what reaches it, and a socket double that records cork state. */
function doubles(): {
  client: TextFrameClient & { sent: string[]; binary: boolean[]; closed: unknown[]; terminated: number };
  socket: Corkable & { log: string[] };
} {
  const socket = {
    log: [] as string[],
    cork() {
      this.log.push('cork');
    },
    uncork() {
      this.log.push('uncork');
    },
  };
  const client = {
    sent: [] as string[],
    binary: [] as boolean[],
    closed: [] as unknown[],
    terminated: 0,
    bufferedAmount: 42,
    readyState: 1,
    send(data: string | Buffer, options: { readonly binary: boolean }) {
      socket.log.push(`send ${data.toString()}`);
      this.sent.push(data.toString());
      this.binary.push(options.binary);
    },
    close(code?: number, reason?: string) {
      this.closed.push([code, reason]);
    },
    terminate() {
      this.terminated += 1;
    },
  };
  return { client, socket };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('corks the socket once for every send of a turn and uncorks it on the next turn, keeping the order', async () => {
    // Arrange
    const { client, socket } = doubles();
    const coalesced = coalesceWrites(client, socket);

    // Act
    coalesced.send('a');
    coalesced.send('b');
    coalesced.send('c');
    const beforeNextTurn = [...socket.log];
    await nextTurn();

    // Assert
    expect(beforeNextTurn).toEqual(['cork', 'send a', 'send b', 'send c']);
    expect(socket.log).toEqual(['cork', 'send a', 'send b', 'send c', 'uncork']);
  });

  it('corks again for the sends of a later turn', async () => {
    const { client, socket } = doubles();
    const coalesced = coalesceWrites(client, socket);

    coalesced.send('a');
    await nextTurn();
    coalesced.send('b');
    await nextTurn();

    expect(socket.log).toEqual(['cork', 'send a', 'uncork', 'cork', 'send b', 'uncork']);
  });

  it('flushes the frames of the turn before a close or terminate, so a closing frame is not lost', () => {
    const { client, socket } = doubles();
    const coalesced = coalesceWrites(client, socket);

    coalesced.send('closing');
    coalesced.close(1001, 'shutdown');
    coalesced.terminate();

    expect(socket.log).toEqual(['cork', 'send closing', 'uncork']);
    expect(client.closed).toEqual([[1001, 'shutdown']]);
  });

  it("sends a Buffer as a text frame, like a string (the fan-out's shared bytes of a JSON frame)", async () => {
    // Arrange
    const { client, socket } = doubles();
    const coalesced = coalesceWrites(client, socket);

    // Act
    coalesced.send('{"a":1}');
    coalesced.send(Buffer.from('{"b":2}'));
    await nextTurn();

    // Assert
    expect(client.sent).toEqual(['{"a":1}', '{"b":2}']);
    expect(client.binary).toEqual([false, false]);
  });

  it("reports the client's buffered bytes and state and passes close and terminate through", () => {
    const { client, socket } = doubles();
    const coalesced = coalesceWrites(client, socket);

    coalesced.close(1013, 'slow-consumer');
    coalesced.terminate();

    expect(coalesced.bufferedAmount).toBe(42);
    expect(coalesced.readyState).toBe(1);
    expect(client.closed).toEqual([[1013, 'slow-consumer']]);
    expect(client.terminated).toBe(1);
    expect(socket.log).toEqual([]);
  });
});

describe('coalesceWrites with batch', () => {
  it('sends the frames of one turn as one batch message, in order, splicing strings and Buffers', async () => {
    // Arrange
    const { client, socket } = doubles();
    const batched = coalesceWrites(client, socket, { batch: true });

    // Act
    batched.send('{"type":"event","position":1}');
    batched.send(Buffer.from('{"type":"event","position":2}'));
    batched.send('{"type":"caught-up","position":2}');
    const beforeNextTurn = [...client.sent];
    await nextTurn();

    // Assert
    expect(beforeNextTurn).toEqual([]);
    expect(client.sent).toHaveLength(1);
    expect(JSON.parse(client.sent[0] ?? '')).toEqual({
      type: 'batch',
      frames: [
        { type: 'event', position: 1 },
        { type: 'event', position: 2 },
        { type: 'caught-up', position: 2 },
      ],
    });
    expect(client.binary).toEqual([false]);
  });

  it('sends a lone frame of a turn as itself, and each later turn as its own message', async () => {
    const { client, socket } = doubles();
    const batched = coalesceWrites(client, socket, { batch: true });

    batched.send('{"a":1}');
    await nextTurn();
    batched.send('{"b":2}');
    batched.send('{"c":3}');
    await nextTurn();

    expect(client.sent).toEqual(['{"a":1}', '{"type":"batch","frames":[{"b":2},{"c":3}]}']);
  });

  it('counts the held bytes in bufferedAmount until they are sent, so the slow-consumer bound sees them', async () => {
    const { client, socket } = doubles();
    const batched = coalesceWrites(client, socket, { batch: true });

    batched.send('{"é":1}'); // 7 characters, 8 bytes in UTF-8
    batched.send(Buffer.from('{"b":2}'));
    const held = batched.bufferedAmount;
    await nextTurn();

    expect(held).toBe(42 + 8 + 7);
    expect(batched.bufferedAmount).toBe(42);
  });

  it("runs every send's callback once the message holding its frame was written", async () => {
    // Arrange: a client double that completes each write when told to
    const { client, socket } = doubles();
    const pending: ((error?: Error) => void)[] = [];
    const send = client.send.bind(client);
    client.send = (data, options, callback) => {
      send(data, options);
      if (callback !== undefined) pending.push(callback);
    };
    const batched = coalesceWrites(client, socket, { batch: true });
    const flushed: string[] = [];

    // Act
    batched.send('{"a":1}', () => flushed.push('a'));
    batched.send('{"b":2}');
    batched.send('{"c":3}', () => flushed.push('c'));
    await nextTurn();
    const beforeWrite = [...flushed];
    for (const callback of pending) callback();

    // Assert
    expect(beforeWrite).toEqual([]);
    expect(flushed).toEqual(['a', 'c']);
  });

  it('sends what the turn holds before a close or terminate, so a closing frame is not lost', () => {
    const { client, socket } = doubles();
    const batched = coalesceWrites(client, socket, { batch: true });

    batched.send('{"type":"event","position":9}');
    batched.send('{"type":"closing","reason":"shutdown","position":9}');
    batched.close(1001, 'shutdown');
    batched.terminate();

    expect(client.sent).toEqual([
      '{"type":"batch","frames":[{"type":"event","position":9},{"type":"closing","reason":"shutdown","position":9}]}',
    ]);
    expect(client.closed).toEqual([[1001, 'shutdown']]);
    expect(client.terminated).toBe(1);
  });
});
