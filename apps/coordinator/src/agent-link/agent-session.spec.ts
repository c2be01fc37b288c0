import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decideReply } from '../http/api-exception.filter.js';
import { DeniedOutcome } from '../http/denied-outcome.js';
import { AgentSession, type AgentOperation, type AgentSessionSocket } from './agent-session.js';

type SentFrame = { id: number | null; status: number; body: unknown };

/**
 * A socket double: records what the session sent and did. Like a corked TCP socket, it holds what
 * is sent while corked and writes it as one flush when the outermost cork is undone; what is sent
 * uncorked is a flush of its own.
 */
class FakeSocket implements AgentSessionSocket {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: SentFrame[] = [];
  /** The writes that reached the kernel: each the frames of one system call. */
  readonly flushes: number[][] = [];
  #corks = 0;
  #held: number[] = [];
  pauses = 0;
  resumes = 0;
  closedWith: { code: number; reason: string } | undefined;
  terminated = false;
  send(text: string): void {
    const frame = JSON.parse(text) as SentFrame;
    this.sent.push(frame);
    if (this.#corks > 0) this.#held.push(frame.id ?? 0);
    else this.flushes.push([frame.id ?? 0]);
  }
  cork(): void {
    this.#corks += 1;
  }
  uncork(): void {
    this.#corks -= 1;
    if (this.#corks > 0 || this.#held.length === 0) return;
    this.flushes.push(this.#held);
    this.#held = [];
  }
  pause(): void {
    this.pauses += 1;
  }
  resume(): void {
    this.resumes += 1;
  }
  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }
  terminate(): void {
    this.terminated = true;
  }
}

/** An operation whose calls wait until the test settles them. */
function deferredOperation(): AgentOperation & {
  calls: { resource: string; body: unknown; settle: (value: unknown) => void; fail: (error: unknown) => void }[];
} {
  const calls: { resource: string; body: unknown; settle: (value: unknown) => void; fail: (error: unknown) => void }[] =
    [];
  const operation = (resource: string, body: unknown): Promise<unknown> =>
    new Promise((settle, fail) => calls.push({ resource, body, settle, fail }));
  return Object.assign(operation, { calls });
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('AgentSession', () => {
  let socket: FakeSocket;
  let acquire: ReturnType<typeof deferredOperation>;
  let bugs: unknown[];
  const open = (overrides: { maxInFlight?: number; maxBufferedBytes?: number } = {}): AgentSession =>
    new AgentSession(socket, {
      operations: { acquire, renew: acquire, release: acquire },
      decide: (error) => decideReply(error, { maxBodyBytes: 16_384 }),
      onBug: (error) => bugs.push(error),
      maxInFlight: overrides.maxInFlight ?? 4,
      maxBufferedBytes: overrides.maxBufferedBytes ?? 1024,
      slowReaderMillis: 1000,
      drainCheckMillis: 10,
    });

  beforeEach(() => {
    socket = new FakeSocket();
    acquire = deferredOperation();
    bugs = [];
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  describe('bad frames', () => {
    it.each([
      ['{not json', null, 'frame', /^malformed JSON/],
      ['[1,2]', null, 'frame', /must be a JSON object, got an array/],
      ['{"id":3,"op":"steal","resource":"r","body":{}}', 3, 'op', /must be one of acquire, renew, release/],
      ['{"id":"x","op":"acquire","resource":"r","body":{}}', null, 'id', /^must be a number$/],
      [
        '{"id":9007199254740994,"op":"acquire","resource":"r","body":{}}',
        null,
        'id',
        /^must be a safe integer \(at most 9007199254740991\)$/,
      ],
      ['{"id":1.5,"op":"acquire","resource":"r","body":{}}', null, 'id', /^must be an integer$/],
      ['{"id":4,"op":"acquire","resource":7,"body":{}}', 4, 'resource', /must be a string/],
      [
        '{"id":5,"op":"acquire","resource":"r","body":{},"holderId":"someone-else"}',
        5,
        'holderId',
        /not a known field/,
      ],
    ])('answers %s with 400 naming the field (id %s) and runs nothing', async (text, id, path, message) => {
      // Arrange
      open().receive(text);
      await flush();

      // Assert
      expect(acquire.calls).toHaveLength(0);
      expect(socket.sent).toEqual([
        {
          id,
          status: 400,
          body: expect.objectContaining({
            error: 'invalid-request',
            issues: [expect.objectContaining({ path, message: expect.stringMatching(message) })],
          }),
        },
      ]);
    });

    it('answers a frame missing its fields with 400 saying each is required, in the words HTTP uses', async () => {
      // Arrange
      open().receive('{"id":1}');
      await flush();

      // Assert
      expect(acquire.calls).toHaveLength(0);
      expect(socket.sent).toEqual([
        {
          id: 1,
          status: 400,
          body: {
            error: 'invalid-request',
            message:
              'op: is required: one of acquire, renew, release; resource: is required: a string; body: is required',
            issues: [
              { path: 'op', message: 'is required: one of acquire, renew, release' },
              { path: 'resource', message: 'is required: a string' },
              { path: 'body', message: 'is required' },
            ],
          },
        },
      ]);
    });

    it('answers a binary message with 400 naming the frame', () => {
      open().receiveBinary();
      expect(socket.sent).toEqual([
        {
          id: null,
          status: 400,
          body: expect.objectContaining({ issues: [{ path: 'frame', message: 'must be a text message (JSON)' }] }),
        },
      ]);
    });
  });

  describe('replies', () => {
    it('answers each frame with its own id once its operation settles, in completion order, with the mapped status', async () => {
      // Arrange
      open().receive('{"id":1,"op":"acquire","resource":"a","body":{"requestId":"r1"}}');
      open().receive('{"id":2,"op":"acquire","resource":"b","body":{"requestId":"r2"}}');

      // Act: the second settles first, with a denial
      acquire.calls[1]!.fail(new DeniedOutcome({ ok: false, reason: 'held', heldBy: 'agent-b', retryAfterMillis: 5 }));
      await flush();
      acquire.calls[0]!.settle({ ok: true });
      await flush();

      // Assert
      expect(acquire.calls.map((call) => [call.resource, call.body])).toEqual([
        ['a', { requestId: 'r1' }],
        ['b', { requestId: 'r2' }],
      ]);
      expect(socket.sent).toEqual([
        { id: 2, status: 409, body: { ok: false, reason: 'held', heldBy: 'agent-b', retryAfterMillis: 5 } },
        { id: 1, status: 200, body: { ok: true } },
      ]);
    });

    it('writes the replies of one turn in one flush at the end of the turn, and a later turn in its own', async () => {
      // Arrange
      const session = open();
      for (const id of [1, 2, 3])
        session.receive(JSON.stringify({ id, op: 'acquire', resource: `r${id}`, body: { requestId: `q${id}` } }));

      // Act: two operations settle in one turn (as a group commit's replies do), the third in a later one
      acquire.calls[0]!.settle({ ok: true });
      acquire.calls[1]!.fail(new DeniedOutcome({ ok: false, reason: 'held', heldBy: 'agent-b', retryAfterMillis: 5 }));
      await flush();
      const flushesAfterFirstTurn = socket.flushes.map((ids) => [...ids]);
      acquire.calls[2]!.settle({ ok: true });
      await flush();

      // Assert
      expect(flushesAfterFirstTurn).toEqual([[1, 2]]);
      expect(socket.flushes).toEqual([[1, 2], [3]]);
    });

    it('refuses a frame whose id is already in flight under id null, running nothing, and takes the id again once answered', async () => {
      // Arrange
      const session = open();
      session.receive('{"id":7,"op":"acquire","resource":"a","body":{"requestId":"r1"}}');

      // Act
      session.receive('{"id":7,"op":"acquire","resource":"b","body":{"requestId":"r2"}}');
      acquire.calls[0]!.settle({ ok: true });
      await flush();
      session.receive('{"id":7,"op":"acquire","resource":"c","body":{"requestId":"r3"}}');

      // Assert: the refusal is not under id 7, so a client matching replies by id takes 7's grant as 7's
      expect(acquire.calls.map((call) => call.resource)).toEqual(['a', 'c']);
      expect(socket.sent[0]).toMatchObject({ id: null, status: 400 });
      expect(JSON.stringify(socket.sent[0]?.body)).toContain('frame.id');
      expect(JSON.stringify(socket.sent[0]?.body)).toContain('7 is already in flight');
      expect(socket.sent[1]).toEqual({ id: 7, status: 200, body: { ok: true } });
    });

    it('answers a bad frame that reuses an id in flight under id null, not under the id in flight', () => {
      const session = open();
      session.receive('{"id":7,"op":"acquire","resource":"a","body":{}}');

      session.receive('{"id":7,"op":"bogus","resource":"a","body":{}}');
      session.receive('{"id":8,"op":"bogus","resource":"a","body":{}}');

      expect(socket.sent.map((frame) => [frame.id, frame.status])).toEqual([
        [null, 400],
        [8, 400],
      ]);
    });

    it('answers a bug with 500 without its message, and reports it', async () => {
      open().receive('{"id":9,"op":"acquire","resource":"a","body":{}}');
      acquire.calls[0]!.fail(new Error('secret detail'));
      await flush();
      expect(socket.sent).toEqual([
        { id: 9, status: 500, body: { error: 'internal', message: 'internal error; it was logged' } },
      ]);
      expect(bugs).toHaveLength(1);
    });
  });

  describe('backpressure', () => {
    it('stops reading at maxInFlight operations and reads again once a reply brings it below', async () => {
      // Arrange
      const session = open({ maxInFlight: 3 });
      const frame = (id: number): string => JSON.stringify({ id, op: 'acquire', resource: `r${id}`, body: {} });

      // Act
      session.receive(frame(1));
      session.receive(frame(2));
      const pausesBeforeBound = socket.pauses;
      session.receive(frame(3));

      // Assert
      expect(pausesBeforeBound).toBe(0);
      expect(socket.pauses).toBe(1);
      expect(session.paused).toBe(true);
      acquire.calls[0]!.settle({ ok: true });
      await flush();
      expect(socket.resumes).toBe(1);
      expect(session.paused).toBe(false);
      expect(session.inFlight).toBe(2);
    });

    it('stops reading while the replies stay above maxBufferedBytes, and resumes once they drain', async () => {
      // Arrange
      vi.useFakeTimers();
      const session = open({ maxBufferedBytes: 100 });
      session.receive('{"id":1,"op":"acquire","resource":"a","body":{}}');
      socket.bufferedAmount = 5000; // the agent does not read

      // Act
      acquire.calls[0]!.settle({ ok: true });
      await vi.advanceTimersByTimeAsync(0);

      // Assert
      expect(session.paused).toBe(true);
      socket.bufferedAmount = 0;
      await vi.advanceTimersByTimeAsync(20);
      expect(session.paused).toBe(false);
      expect(socket.closedWith).toBeUndefined();
    });

    it('closes a reader whose replies stayed above maxBufferedBytes for slowReaderMillis with 1008 and a reason', async () => {
      // Arrange
      vi.useFakeTimers();
      const session = open({ maxBufferedBytes: 100 });
      session.receive('{"id":1,"op":"acquire","resource":"a","body":{}}');
      socket.bufferedAmount = 5000;
      acquire.calls[0]!.settle({ ok: true });
      await vi.advanceTimersByTimeAsync(0);

      // Act
      await vi.advanceTimersByTimeAsync(999);
      const closedEarly = socket.closedWith;
      await vi.advanceTimersByTimeAsync(20);

      // Assert
      expect(closedEarly).toBeUndefined();
      expect(socket.closedWith).toEqual({ code: 1008, reason: expect.stringMatching(/^slow reader/) });
    });

    it('reads again after closing a slow reader so its close reply can arrive, runs nothing more, and terminates it after the grace', async () => {
      // Arrange: a reader that never reads, closed after slowReaderMillis
      vi.useFakeTimers();
      const told: string[] = [];
      socket = new FakeSocket();
      const session = new AgentSession(socket, {
        operations: { acquire, renew: acquire, release: acquire },
        decide: (error) => decideReply(error, { maxBodyBytes: 16_384 }),
        onBug: (error) => bugs.push(error),
        maxInFlight: 4,
        maxBufferedBytes: 100,
        slowReaderMillis: 1000,
        drainCheckMillis: 10,
        closeGraceMillis: 500,
        onSlowReader: (reason) => told.push(reason),
      });
      session.receive('{"id":1,"op":"acquire","resource":"a","body":{}}');
      socket.bufferedAmount = 5000;
      acquire.calls[0]!.settle({ ok: true });
      await vi.advanceTimersByTimeAsync(1020);
      const resumesAtClose = socket.resumes;

      // Act
      session.receive('{"id":2,"op":"acquire","resource":"b","body":{}}');
      await vi.advanceTimersByTimeAsync(470); // closed at 1 000–1 020 ms: the grace runs to 1 500–1 520
      const terminatedEarly = socket.terminated;
      await vi.advanceTimersByTimeAsync(30);

      // Assert
      expect(socket.closedWith?.code).toBe(1008);
      expect(told).toEqual([socket.closedWith?.reason]);
      expect(resumesAtClose).toBe(1);
      expect(acquire.calls.map((call) => call.resource)).toEqual(['a']);
      expect(terminatedEarly).toBe(false);
      expect(socket.terminated).toBe(true);
    });

    it('does not terminate a slow reader that completed the close handshake within the grace', async () => {
      vi.useFakeTimers();
      const session = open({ maxBufferedBytes: 100 });
      session.receive('{"id":1,"op":"acquire","resource":"a","body":{}}');
      socket.bufferedAmount = 5000;
      acquire.calls[0]!.settle({ ok: true });
      await vi.advanceTimersByTimeAsync(1020);

      session.closed(); // the gateway's 'close' event
      await vi.advanceTimersByTimeAsync(5_000);

      expect(socket.closedWith?.code).toBe(1008);
      expect(socket.terminated).toBe(false);
    });
  });
});
