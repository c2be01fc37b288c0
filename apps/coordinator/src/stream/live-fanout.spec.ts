import {
  createMemoryEventLog,
  type CoordinatorEvent,
  type MemoryEventLog,
  type RecordedEvent,
  type Subscription,
} from '@lease-fence/coordinator-core';
import type { StreamFrame } from '@lease-fence/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeEventFrame } from './event-frame.js';
import { LiveFanout, type LiveMember } from './live-fanout.js';
import { StreamConnection, type StreamSocket } from './stream-connection.js';

const released = (atMillis: number): CoordinatorEvent => ({
  type: 'LeaseReleased',
  version: 1,
  data: { bootId: 'boot', atMillis, wallMillis: 0, resource: 'r', holderId: 'h', fence: 1 },
});

/** Appends `count` events to `log` after its current version. */
async function append(log: MemoryEventLog, count: number): Promise<void> {
  const version = await log.version();
  await log.append(
    Array.from({ length: count }, (_, i) => released(version + i + 1)),
    { expectedVersion: version },
  );
}

/** Every event of `log` from position `from`. */
async function readFrom(log: MemoryEventLog, from: number): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for await (const recorded of log.read({ from })) events.push(recorded);
  return events;
}

/** Waits, turn by turn, until `condition` holds (fails after 10 000 turns). */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000; turn += 1) {
    if (condition()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not met in 10 000 turns');
}

/** A member double: records what it is delivered; `accept` = false makes it refuse (a disconnected viewer). */
class RecordingMember implements LiveMember {
  readonly positions: number[] = [];
  readonly frames: Buffer[] = [];
  detachedWith: { error: unknown } | undefined;
  accept = true;
  constructor(public lastPosition: number) {}

  deliver(position: number, frame: Buffer): boolean {
    if (!this.accept) return false;
    this.positions.push(position);
    this.frames.push(frame);
    this.lastPosition = position;
    return true;
  }

  detach(error: unknown): void {
    this.detachedWith = { error };
  }
}

/** A socket double for a StreamConnection: records the raw data of every frame. */
class RawSocket implements StreamSocket {
  bufferedAmount = 0;
  readyState = 1;
  readonly sent: (string | Buffer)[] = [];
  send(data: string | Buffer, callback?: (error?: Error) => void): void {
    this.sent.push(data);
    callback?.();
  }
  close(): void {
    this.readyState = 2;
  }
  terminate(): void {
    this.readyState = 3;
  }
  frames(): StreamFrame[] {
    return this.sent.map((data) => JSON.parse(data.toString()) as StreamFrame);
  }
}

const stopping: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopping.splice(0)) await stop();
});

/** A running fan-out over a fresh memory log that already holds `initial` events. */
async function runningFanout(initial: number, retainedEvents = 8) {
  const log = createMemoryEventLog();
  if (initial > 0) await append(log, initial);
  const failures: unknown[] = [];
  const fanout = new LiveFanout(log, { retainedEvents, onFailure: (error) => failures.push(error) });
  fanout.start();
  stopping.push(
    () => fanout.stop(),
    () => log.close(),
  );
  await until(() => fanout.isRunning);
  return { log, fanout, failures };
}

describe('LiveFanout', () => {
  it('sends two live viewers the very same bytes for each event: the frame encoded once', async () => {
    // Arrange
    const { log, fanout } = await runningFanout(3);
    const a = new RecordingMember(3);
    const b = new RecordingMember(3);
    fanout.join(a, 0);
    fanout.join(b, 0);

    // Act
    await append(log, 2);
    await until(() => b.positions.length === 2);

    // Assert
    expect(a.positions).toEqual([4, 5]);
    expect(b.positions).toEqual([4, 5]);
    expect(a.frames[0]).toBe(b.frames[0]);
    const recorded = await readFrom(log, 4);
    expect(a.frames.map((frame) => frame.toString())).toEqual(recorded.map((event) => encodeEventFrame(event)));
  });

  it("replays the retained frames after a joining viewer's position, then delivers live ones, with no gap or duplicate", async () => {
    // Arrange: the fan-out has read 3 events since it started at 2
    const { log, fanout } = await runningFanout(2);
    await append(log, 3);
    await until(() => fanout.position === 5);
    const late = new RecordingMember(3);

    // Act
    const joined = fanout.join(late, 10_000);
    await append(log, 1);
    await until(() => late.positions.length === 3);

    // Assert
    expect(joined).toBe(true);
    expect(late.positions).toEqual([4, 5, 6]);
  });

  it('does not take a viewer whose position is older than the frames it retains', async () => {
    const { log, fanout } = await runningFanout(0, 2);
    await append(log, 5);
    await until(() => fanout.position === 5);
    const behind = new RecordingMember(2);

    const joined = fanout.join(behind, 10_000);

    expect(joined).toBe(false);
    expect(behind.positions).toEqual([]);
    expect(fanout.size).toBe(0);
  });

  it('does not take a viewer when replaying its gap would exceed the byte budget, and takes it within the budget', async () => {
    const { log, fanout } = await runningFanout(0);
    await append(log, 2);
    await until(() => fanout.position === 2);
    const frameBytes = Buffer.byteLength(encodeEventFrame((await readFrom(log, 1))[0]!));
    const viewer = new RecordingMember(0);

    const overBudget = fanout.join(viewer, 2 * frameBytes - 1);
    const withinBudget = fanout.join(viewer, 2 * frameBytes + 10);

    expect([overBudget, withinBudget]).toEqual([false, true]);
    expect(viewer.positions).toEqual([1, 2]);
  });

  it('does not take viewers before it runs', () => {
    const fanout = new LiveFanout(createMemoryEventLog(), { retainedEvents: 4, onFailure: () => undefined });
    expect(fanout.join(new RecordingMember(0), 10_000)).toBe(false);
  });

  it('drops a viewer that refuses a frame (disconnected) and keeps delivering to the others', async () => {
    const { log, fanout } = await runningFanout(0);
    const leaving = new RecordingMember(0);
    const staying = new RecordingMember(0);
    fanout.join(leaving, 0);
    fanout.join(staying, 0);
    leaving.accept = false;

    await append(log, 2);
    await until(() => staying.positions.length === 2);

    expect(fanout.size).toBe(1);
    expect(staying.positions).toEqual([1, 2]);
  });

  it('detaches a viewer whose delivery throws on its own, and keeps delivering to the others', async () => {
    // Given two viewers, one of which has a bug at position 2
    const { log, fanout, failures } = await runningFanout(0);
    const healthy = new RecordingMember(0);
    const buggy = new RecordingMember(0);
    const bug = new Error('viewer bug at 2');
    buggy.deliver = (position, frame) => {
      if (position === 2) throw bug;
      return RecordingMember.prototype.deliver.call(buggy, position, frame);
    };
    fanout.join(buggy, 0);
    fanout.join(healthy, 0);

    // When three events are appended
    await append(log, 3);
    await until(() => healthy.positions.length === 3);

    // Then only the buggy viewer is detached, with its own error, and the shared subscription goes on
    expect(healthy.positions).toEqual([1, 2, 3]);
    expect(healthy.detachedWith).toBeUndefined();
    expect(buggy.detachedWith).toEqual({ error: bug });
    expect(fanout.size).toBe(1);
    expect(failures).toEqual([]);
  });

  it('detaches every viewer with the error when its subscription fails, reports it once, and can be started again', async () => {
    // Arrange: a log whose subscription fails after one event
    const corrupt = new Error('corrupt event at 2');
    let subscriptions = 0;
    const log = {
      version: async () => 0,
      subscribe: (): Subscription => {
        subscriptions += 1;
        async function* events(): AsyncGenerator<RecordedEvent> {
          await new Promise<void>((resolve) => setImmediate(resolve));
          yield { position: 1, recordedAtMillis: 0, event: released(1) };
          throw corrupt;
        }
        const iterator = events();
        return {
          [Symbol.asyncIterator]: () => iterator,
          close: async () => {
            await iterator.return(undefined);
          },
        };
      },
    };
    const failures: unknown[] = [];
    const fanout = new LiveFanout(log, { retainedEvents: 4, onFailure: (error) => failures.push(error) });
    fanout.start();
    await until(() => fanout.isRunning);
    const viewer = new RecordingMember(0);
    fanout.join(viewer, 0);

    // Act
    await until(() => viewer.detachedWith !== undefined);
    fanout.start();
    await until(() => subscriptions === 2);

    // Assert
    expect(viewer.positions).toEqual([1]);
    expect(viewer.detachedWith).toEqual({ error: corrupt });
    expect(failures).toEqual([corrupt]);
    await fanout.stop();
  });

  it('follows the log while a viewer holds it, stops once the last one lets go, and starts again for the next', async () => {
    // Given a fan-out held by two viewers
    const log = createMemoryEventLog();
    const fanout = new LiveFanout(log, { retainedEvents: 8, onFailure: () => undefined });
    stopping.push(
      () => fanout.stop(),
      () => log.close(),
    );
    const releaseFirst = fanout.hold();
    const releaseSecond = fanout.hold();
    await until(() => fanout.isRunning);

    // When one lets go (twice: idempotent), it keeps following; when the last lets go, it stops
    releaseFirst();
    releaseFirst();
    await new Promise((resolve) => setImmediate(resolve));
    expect(fanout.isRunning).toBe(true);
    releaseSecond();
    await until(() => !fanout.isRunning);

    // Then a new holder starts it again from the log's head
    await append(log, 2);
    const releaseThird = fanout.hold();
    await until(() => fanout.isRunning);
    expect(fanout.position).toBe(2);
    releaseThird();
  });

  it('starts again when a viewer holds it while it is stopping for want of holders', async () => {
    const log = createMemoryEventLog();
    const fanout = new LiveFanout(log, { retainedEvents: 8, onFailure: () => undefined });
    stopping.push(
      () => fanout.stop(),
      () => log.close(),
    );
    const release = fanout.hold();
    await until(() => fanout.isRunning);

    release(); // stopping begins
    const releaseLate = fanout.hold(); // arrives before the stop finished

    await until(() => fanout.isRunning);
    releaseLate();
  });

  it('detaches every viewer without an error when stopped', async () => {
    const { fanout } = await runningFanout(0);
    const viewer = new RecordingMember(0);
    fanout.join(viewer, 0);

    await fanout.stop();

    expect(viewer.detachedWith).toEqual({ error: undefined });
    expect(fanout.isRunning).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN])(
    'refuses %s retained events with a RangeError naming the option',
    (retainedEvents) => {
      expect(() => new LiveFanout(createMemoryEventLog(), { retainedEvents, onFailure: () => undefined })).toThrow(
        new RangeError(
          `LiveFanout: options.retainedEvents must be a positive integer number of events, got ${String(retainedEvents)}`,
        ),
      );
    },
  );
});

describe('StreamConnection with a LiveFanout', () => {
  /** A connection on `log` after `after`, with the fan-out, on a RawSocket. */
  async function connectWithFanout(log: MemoryEventLog, fanout: LiveFanout, after: number) {
    const socket = new RawSocket();
    const connection = new StreamConnection(socket, (from) => log.subscribe({ after: from }), {
      after,
      head: await log.version(),
      maxBufferedBytes: 1024 * 1024,
      catchUpHighWaterBytes: 64 * 1024,
      closeGraceMillis: 5000,
      now: () => 0,
      onSlowConsumer: () => undefined,
      fanout,
    });
    const running = connection.run();
    stopping.push(async () => {
      await connection.stop();
      await running;
    });
    return { socket, connection };
  }

  const order = (socket: RawSocket): (number | string)[] =>
    socket.frames().map((f) => (f.type === 'event' ? f.position : f.type));

  it('catches a viewer up from its own read while the log grows, switches to the fan-out, and delivers every event once in order', async () => {
    // Arrange: a log far longer than the fan-out retains, and a fan-out already live at its head
    const { log, fanout } = await runningFanout(300, 16);
    const { socket } = await connectWithFanout(log, fanout, 0);

    // Act: appends go on while the viewer catches up
    for (let round = 0; round < 20; round += 1) await append(log, 5);
    await until(
      () =>
        fanout.size === 1 &&
        socket.frames().at(-1)?.type === 'event' &&
        (socket.frames().at(-1) as { position: number }).position === 400,
    );

    // Assert
    const expected = [
      ...Array.from({ length: 300 }, (_, i) => i + 1),
      'caught-up',
      ...Array.from({ length: 100 }, (_, i) => 301 + i),
    ];
    expect(order(socket)).toEqual(expected);
  });

  it('sends a viewer that starts at the head the same bytes as another live viewer', async () => {
    // Arrange
    const { log, fanout } = await runningFanout(10);
    const first = await connectWithFanout(log, fanout, 10);
    const second = await connectWithFanout(log, fanout, 10);
    await until(() => fanout.size === 2);

    // Act
    await append(log, 3);
    await until(() => second.socket.sent.length === 4);

    // Assert: caught-up, then three events as one shared Buffer each
    expect(order(first.socket)).toEqual(['caught-up', 11, 12, 13]);
    expect(first.socket.sent.slice(1)).toEqual(second.socket.sent.slice(1));
    for (const [i, data] of first.socket.sent.slice(1).entries()) expect(data).toBe(second.socket.sent[i + 1]);
  });

  it('sends caught-up after the head at connect time when the fan-out replays up to it', async () => {
    // Arrange: the fan-out started at 2 and has read 3..6
    const { log, fanout } = await runningFanout(2);
    await append(log, 4);
    await until(() => fanout.position === 6);

    // Act: a viewer at 3 with head 6 joins at once (its gap is retained)
    const { socket } = await connectWithFanout(log, fanout, 3);
    await append(log, 1);
    await until(() => socket.sent.length === 5);

    // Assert
    expect(order(socket)).toEqual([4, 5, 6, 'caught-up', 7]);
  });

  /** A connection at the head whose fan-out detaches it with `error` (undefined: the shared subscription just ended). */
  function detachedMember(error: unknown) {
    const socket = new RawSocket();
    const closes: { code?: number; reason?: string }[] = [];
    socket.close = (code?: number, reason?: string) => {
      closes.push({ code, reason });
      socket.readyState = 2;
    };
    const member = new StreamConnection(
      socket,
      () => {
        throw new Error('not used');
      },
      {
        after: 0,
        head: 0,
        maxBufferedBytes: 1024,
        catchUpHighWaterBytes: 256,
        closeGraceMillis: 5000,
        now: () => 0,
        onSlowConsumer: () => undefined,
        fanout: {
          join: (joining: LiveMember) => {
            queueMicrotask(() => joining.detach(error));
            return true;
          },
          leave: () => undefined,
        } as unknown as LiveFanout,
      },
    );
    return { member, socket, closes };
  }

  it('tells the client to resume (closing, error) and closes it with 1011 when the shared subscription fails, then rejects with the error', async () => {
    const boom = new Error('log unavailable');
    const { member, socket, closes } = detachedMember(boom);

    await expect(member.run()).rejects.toBe(boom);

    expect(socket.frames()).toEqual([
      { type: 'caught-up', position: 0 },
      { type: 'closing', reason: 'error', position: 0 },
    ]);
    expect(closes).toEqual([{ code: 1011, reason: 'error' }]);
  });

  it('tells the client to resume (closing, log-closed) and closes it with 1001 when the events end', async () => {
    const { member, socket, closes } = detachedMember(undefined);

    await member.run();

    expect(socket.frames().at(-1)).toEqual({ type: 'closing', reason: 'log-closed', position: 0 });
    expect(closes).toEqual([{ code: 1001, reason: 'log-closed' }]);
  });
});
