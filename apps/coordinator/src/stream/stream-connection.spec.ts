import { EventLogCorruptError, type RecordedEvent, type Subscription } from '@lease-fence/coordinator-core';
import type { StreamFrame } from '@lease-fence/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LiveFanout } from './live-fanout.js';
import { StreamConnection, type StreamConnectionOptions, type StreamSocket } from './stream-connection.js';

/**
 * A socket double: records frames, holds send callbacks until `flush()`, lets a test set
 * `bufferedAmount`; while `paused` (the client reads nothing), every send adds its bytes to it.
 */
class FakeSocket implements StreamSocket {
  bufferedAmount = 0;
  paused = false;
  readyState = 1;
  readonly frames: StreamFrame[] = [];
  closedWith: { code?: number; reason?: string } | undefined;
  terminated = false;
  private pending: (() => void)[] = [];

  send(data: string | Buffer, callback?: (error?: Error) => void): void {
    this.frames.push(JSON.parse(data.toString()) as StreamFrame);
    if (this.paused) this.bufferedAmount += data.length;
    if (callback !== undefined) this.pending.push(() => callback());
  }

  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.readyState = 2;
  }

  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }

  /** The kernel took everything: send callbacks run. */
  flush(): void {
    this.bufferedAmount = 0;
    const pending = this.pending;
    this.pending = [];
    for (const run of pending) run();
  }
}

/** A subscription double fed by the test. */
class FakeSubscription implements Subscription {
  closed = false;
  private readonly queue: RecordedEvent[] = [];
  private wake: (() => void) | undefined;
  private failure: Error | undefined;

  /** The next read throws `error` (as a log read of a record that does not decode). */
  fail(error: Error): void {
    this.failure = error;
    this.wake?.();
  }

  push(...positions: number[]): void {
    for (const position of positions) {
      this.queue.push({
        position,
        recordedAtMillis: 1_700_000_000_000,
        event: {
          type: 'LeaseReleased',
          version: 1,
          data: { bootId: 'boot', atMillis: position, wallMillis: 0, resource: 'r', holderId: 'h', fence: 1 },
        },
      });
    }
    this.wake?.();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    while (!this.closed) {
      const next = this.queue.shift();
      if (next === undefined && this.failure !== undefined) throw this.failure;
      if (next !== undefined) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);
/** A fan-out the client cannot join yet (its gap is more than the fan-out retains). */
const unjoinableFanout = { join: () => false, leave: () => undefined } as unknown as LiveFanout;
const eventPositions = (frames: readonly StreamFrame[]): number[] =>
  frames.flatMap((f) => (f.type === 'event' ? [f.position] : []));

function connect(options: Partial<StreamConnectionOptions> & Pick<StreamConnectionOptions, 'after' | 'head'>) {
  const socket = new FakeSocket();
  const subscription = new FakeSubscription();
  const slow: number[] = [];
  const connection = new StreamConnection(socket, () => subscription, {
    maxBufferedBytes: 1000,
    catchUpHighWaterBytes: 250,
    closeGraceMillis: 5000,
    now: () => 0,
    onSlowConsumer: (position) => slow.push(position),
    ...options,
  });
  const running = connection.run();
  return { socket, subscription, connection, running, slow };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('StreamConnection', () => {
  describe('a failing subscription', () => {
    it('sends closing event-log-corrupt with the last good position, the damaged position, the field and the HTTP wording, then closes 1011', async () => {
      // Given a client reading from position 0 and a log whose record 3 does not decode
      const { socket, subscription, running } = connect({ after: 0, head: 5, fanout: unjoinableFanout });
      const corrupt = new EventLogCorruptError({
        position: 3,
        issues: [{ path: 'data', message: 'invalid JSON: Unterminated string in JSON at position 5' }],
      });
      subscription.push(1, 2);
      await settle();

      // When the read reaches it
      subscription.fail(corrupt);

      // Then run rejects with it, and the client was told what and where, resuming after 2
      await expect(running).rejects.toBe(corrupt);
      expect(socket.frames.at(-1)).toEqual({
        type: 'closing',
        reason: 'event-log-corrupt',
        position: 2,
        corruptPosition: 3,
        field: 'data',
        message: 'event at position 3 is corrupt: data: invalid JSON: Unterminated string in JSON at position 5',
      });
      expect(socket.closedWith).toEqual({ code: 1011, reason: 'event-log-corrupt' });
    });

    it('sends closing error, with no internals, for any other failure', async () => {
      const { socket, subscription, running } = connect({ after: 0, head: 5, fanout: unjoinableFanout });
      subscription.fail(new Error('socket hang up at 10.0.0.1'));
      await expect(running).rejects.toThrow('socket hang up');
      expect(socket.frames.at(-1)).toEqual({ type: 'closing', reason: 'error', position: 0 });
      expect(socket.closedWith).toEqual({ code: 1011, reason: 'error' });
    });
  });

  describe('catch-up', () => {
    it('sends the events after the position in order, then caught-up at the head, then live events', async () => {
      // Arrange
      const { socket, subscription } = connect({ after: 0, head: 2 });

      // Act
      subscription.push(1, 2);
      await settle();
      subscription.push(3);
      await settle();

      // Assert
      expect(socket.frames.map((f) => (f.type === 'event' ? f.position : f.type))).toEqual([1, 2, 'caught-up', 3]);
      expect(socket.frames[2]).toEqual({ type: 'caught-up', position: 2 });
    });

    it('sends caught-up first when the client already has the head', async () => {
      const { socket } = connect({ after: 5, head: 5 });
      await settle();
      expect(socket.frames).toEqual([{ type: 'caught-up', position: 5 }]);
    });

    it('waits for the socket to flush before reading on once over the high-water mark, so history never piles up', async () => {
      // Arrange: a client that is slower than the log
      const { socket, subscription } = connect({ after: 0, head: 3 });
      socket.bufferedAmount = 300;

      // Act
      subscription.push(1, 2, 3);
      await settle();
      const beforeFlush = eventPositions(socket.frames);
      socket.flush();
      await settle();

      // Assert: one event went out and the pump waited; after the flush the rest followed
      expect(beforeFlush).toEqual([1]);
      expect(eventPositions(socket.frames)).toEqual([1, 2, 3]);
      expect(socket.closedWith).toBeUndefined();
    });
  });

  describe('slow consumer', () => {
    it('keeps pacing a client past its connect-time head until it joins the live feed, instead of cutting it as slow', async () => {
      // Arrange: connected at head 2, not on the fan-out yet, and then paused (a background browser tab)
      const { socket, subscription, slow } = connect({ after: 0, head: 2, fanout: unjoinableFanout });
      subscription.push(1, 2);
      await settle();
      socket.paused = true;

      // Act: the log grows meanwhile; then the client reads at full speed
      subscription.push(...range(3, 60));
      await settle();
      const sentWhilePaused = eventPositions(socket.frames).length;
      socket.paused = false;
      for (let round = 0; round < 200 && eventPositions(socket.frames).length < 60; round += 1) {
        socket.flush();
        await settle();
      }

      // Assert: the pump waited for the client instead of piling frames up, and cut nobody
      expect(sentWhilePaused).toBeLessThan(10);
      expect(eventPositions(socket.frames)).toEqual(range(1, 60));
      expect(slow).toEqual([]);
      expect(socket.closedWith).toBeUndefined();
    });

    it('once live, sends closing with the last position instead of buffering past the bound, and stops reading', async () => {
      // Arrange: a live client that has position 4 and stopped reading
      const { socket, subscription, slow, running } = connect({ after: 4, head: 4 });
      await settle();
      socket.bufferedAmount = 1001;

      // Act
      subscription.push(5);
      await running;

      // Assert
      expect(socket.frames).toEqual([
        { type: 'caught-up', position: 4 },
        { type: 'closing', reason: 'slow-consumer', position: 4 },
      ]);
      expect(socket.closedWith).toEqual({ code: 1013, reason: 'slow-consumer' });
      expect(slow).toEqual([4]);
      expect(subscription.closed).toBe(true);
    });

    it('keeps a live client at the bound connected', async () => {
      const { socket, subscription } = connect({ after: 0, head: 0 });
      socket.bufferedAmount = 1000;
      subscription.push(1);
      await settle();
      expect(eventPositions(socket.frames)).toEqual([1]);
      expect(socket.closedWith).toBeUndefined();
    });

    it('destroys the socket when the client does not complete the close handshake in time', async () => {
      // Arrange
      vi.useFakeTimers();
      const { socket, connection } = connect({ after: 0, head: 0, closeGraceMillis: 5000 });

      // Act
      connection.disconnect('slow-consumer', 1013);
      vi.advanceTimersByTime(4999);
      const early = socket.terminated;
      vi.advanceTimersByTime(1);

      // Assert
      expect(early).toBe(false);
      expect(socket.terminated).toBe(true);
    });
  });

  describe('fan-out deliveries', () => {
    it('skips positions the client already has (its own read was ahead of the fan-out) and sends the next one', async () => {
      // Arrange: a client that has 5
      const { socket, connection } = connect({ after: 5, head: 5 });
      await settle();
      const frame = (position: number): Buffer =>
        Buffer.from(
          JSON.stringify({
            type: 'event',
            position,
            recordedAtMillis: 0,
            event: {
              type: 'LeaseReleased',
              version: 1,
              data: { bootId: 'boot', atMillis: position, wallMillis: 0, resource: 'r', holderId: 'h', fence: 1 },
            },
          }),
        );

      // Act
      const accepted = [4, 5, 6].map((position) => connection.deliver(position, frame(position)));

      // Assert
      expect(accepted).toEqual([true, true, true]);
      expect(socket.frames.map((f) => (f.type === 'event' ? f.position : f.type))).toEqual(['caught-up', 6]);
      expect(connection.lastPosition).toBe(6);
    });

    it('refuses a delivery that would leave a gap, sending nothing', async () => {
      const { socket, connection } = connect({ after: 5, head: 5 });
      await settle();

      expect(() => connection.deliver(7, Buffer.from('{}'))).toThrow(
        'StreamConnection: fan-out delivered position 7 after 5 (bug)',
      );
      expect(socket.frames).toEqual([{ type: 'caught-up', position: 5 }]);
    });

    it('disconnects a live client over the bound as a slow consumer instead of sending the shared frame', async () => {
      const { socket, connection, slow } = connect({ after: 5, head: 5 });
      await settle();
      socket.bufferedAmount = 1001;

      const accepted = connection.deliver(6, Buffer.from('{}'));

      expect(accepted).toBe(false);
      expect(socket.frames.at(-1)).toEqual({ type: 'closing', reason: 'slow-consumer', position: 5 });
      expect(slow).toEqual([5]);
    });
  });

  describe('heartbeats', () => {
    it('counts idle time from the last frame other than stats', async () => {
      // Arrange
      let now = 0;
      const { connection, subscription } = connect({ after: 0, head: 0, now: () => now });
      await settle();

      // Act
      now = 100;
      connection.send({
        type: 'stats',
        bootId: 'b',
        wallMillis: 0,
        denials: {},
        grants: 0,
        renewals: 0,
        releases: 0,
        rejections: 0,
      });
      now = 250;
      const idleAfterStats = connection.idleMillis();
      subscription.push(1);
      await settle();

      // Assert
      expect(idleAfterStats).toBe(250);
      expect(connection.idleMillis()).toBe(0);
    });
  });
});
