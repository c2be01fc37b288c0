import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { FakeSocket, ManualTimers } from '../testing/fake-socket.js';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { StreamClient, streamUrl, type ConnectionState } from './stream-client.js';

function logOf(count: number): RecordedEvent[] {
  const log = new LogBuilder();
  log.started();
  for (let i = 1; i < count; i += 1) log.advance(10).granted(`r${i}`, 'agent-a', i);
  return log.events;
}

/** A seeded source of uniform numbers in [0, 1) (a linear congruential generator), for the jitter. */
function seededRandom(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    return x / 2 ** 32;
  };
}

/** The harness's jitter unless a test injects one: the top of each delay's range. */
const TOP_OF_RANGE = (): number => 0.999;

function harness(options: { after?: number; random?: () => number } = {}) {
  const sockets: FakeSocket[] = [];
  const timers = new ManualTimers();
  const delivered: number[] = [];
  const states: ConnectionState[] = [];
  const problems: string[] = [];
  const client = new StreamClient({
    url: (after) => streamUrl('http://127.0.0.1:3000', after, 'viewer-token'),
    connect: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    timers,
    now: () => timers.nowMillis,
    random: options.random ?? TOP_OF_RANGE,
    ...(options.after === undefined ? {} : { after: options.after }),
    onEvent: (e) => delivered.push(e.position),
    onState: (s) => states.push(s),
    onProblem: (m) => problems.push(m),
  });
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;
  return { client, sockets, timers, delivered, states, problems, latest };
}

describe('StreamClient', () => {
  it('delivers the catch-up in order, then reports live after caught-up', () => {
    // Arrange
    const h = harness();
    const log = logOf(5);

    // Act
    h.client.start();
    h.latest().open().sendEvents(log).send({ type: 'caught-up', position: 5 });

    // Assert
    expect(h.latest().url).toBe('ws://127.0.0.1:3000/v1/stream?after=0&token=viewer-token&batch=1');
    expect(h.delivered).toEqual([1, 2, 3, 4, 5]);
    expect(h.states.map((s) => s.status)).toEqual(['connecting', 'catching-up', 'live']);
  });

  it('reconnects after a drop and resumes after the last delivered position, dropping resent duplicates', () => {
    // Arrange
    const h = harness();
    const log = logOf(8);
    h.client.start();
    h.latest().open().sendEvents(log.slice(0, 3));

    // Act
    h.latest().serverClose(1006);
    h.timers.advance(250);
    h.latest().open().sendEvents(log.slice(1)); // a server that resends from earlier

    // Assert
    // (a reconnect asks for the last delivered event again, 3, to check the log is the same one)
    expect(h.sockets.map((s) => s.after)).toEqual([0, 2]);
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(h.client.duplicatesDropped).toBe(1);
    expect(h.states.find((s) => s.status === 'reconnecting')).toMatchObject({ after: 3, retryInMillis: 249 });
  });

  it('backs off exponentially up to the maximum while the coordinator is down, and resets once connected', () => {
    // (the harness draws the top of each jittered range: 0.999 × 250, × 500, …, × the 10 s cap)
    // Arrange
    const h = harness();
    h.client.start();

    // Act
    const delays: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      h.latest().serverClose(1006);
      delays.push(h.timers.pendingDelays[0]!);
      h.timers.advance(delays[i]!);
    }
    h.latest().open().send({ type: 'caught-up', position: 0 }).serverClose(1006);

    // Assert
    expect(delays).toEqual([249, 499, 999, 1_998, 3_996, 7_992, 9_990, 9_990]);
    expect(h.timers.pendingDelays[0]).toBe(249);
  });

  it('jitters each reconnect delay (full jitter): 200 dashboards dropped together spread out, each below its bound', () => {
    // Arrange: 200 clients, one seeded random source, all connected
    const random = seededRandom(17);
    const clients = Array.from({ length: 200 }, () => harness({ random }));
    clients.forEach((h) => h.client.start());

    // Act: a coordinator restart drops every socket; then the retry fails again, twice
    const rounds: number[][] = [[], [], []];
    for (const round of rounds) {
      for (const h of clients) {
        h.latest().serverClose(1006);
        round.push(h.timers.pendingDelays[0]!);
        h.timers.advance(round[round.length - 1]!);
      }
    }

    // Assert: in [0, 250 · 2^(n-1)) and spread over the range, not in lockstep
    rounds.forEach((delays, n) => {
      const bound = 250 * 2 ** n;
      expect(delays.every((d) => d >= 0 && d < bound && Number.isInteger(d))).toBe(true);
      expect(new Set(delays).size).toBeGreaterThan(100); // in lockstep it would be 1
      expect(Math.min(...delays)).toBeLessThan(bound * 0.1);
      expect(Math.max(...delays)).toBeGreaterThan(bound * 0.9);
    });
  });

  it('never waits longer than maxBackoffMillis, whatever the random source returns', () => {
    // Arrange: a source at the very top of [0, 1)
    const h = harness({ random: () => 1 - Number.EPSILON });
    h.client.start();

    // Act
    const delays: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      h.latest().serverClose(1006);
      delays.push(h.timers.pendingDelays[0]!);
      h.timers.advance(delays[i]!);
    }

    // Assert
    expect(Math.max(...delays)).toBeLessThan(10_000);
  });

  it('treats a gap as a broken stream and resumes after the last position it delivered', () => {
    // Arrange
    const h = harness();
    const log = logOf(6);
    h.client.start();

    // Act
    h.latest().open().sendEvents([log[0]!, log[1]!, log[4]!]);
    h.timers.advance(250);
    h.latest().open().sendEvents(log.slice(2));

    // Assert
    expect(h.problems[0]).toMatch(/gap in the stream: expected position 3, got 5/);
    expect(h.sockets[0]!.closedByClient).toBe(true);
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('delivers the frames of a batch message one by one, in order, like frames sent alone', () => {
    // Arrange
    const h = harness();
    const log = logOf(6);
    h.client.start();

    // Act
    h.latest().open().sendBatch(log.slice(0, 4), { type: 'caught-up', position: 4 }).sendBatch(log.slice(4));

    // Assert
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6]);
    expect(h.states.map((s) => s.status)).toEqual(['connecting', 'catching-up', 'live']);
  });

  it('drops the rest of a batch after a gap inside it and resumes after the last position it delivered', () => {
    // Arrange
    const h = harness();
    const log = logOf(6);
    h.client.start();

    // Act: positions 1, 2, 5, 6 in one batch
    h.latest().open().sendBatch([log[0]!, log[1]!, log[4]!, log[5]!]);
    h.timers.advance(250);
    h.latest().open().sendBatch(log.slice(2));

    // Assert
    expect(h.problems).toEqual([expect.stringMatching(/gap in the stream: expected position 3, got 5/)]);
    expect(h.sockets.map((s) => s.after)).toEqual([0, 1]);
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('refuses a batch holding an invalid frame whole, naming the frame, and keeps the connection', () => {
    // Arrange
    const h = harness();
    const log = logOf(3);
    h.client.start();

    // Act
    h.latest()
      .open()
      .send(
        `{"type":"batch","frames":[${JSON.stringify({ type: 'event', position: 1, recordedAtMillis: 1, event: log[0]!.event })},{"type":"event","position":-1}]}`,
      )
      .sendBatch(log);

    // Assert
    expect(h.problems).toEqual([expect.stringMatching(/^invalid frame: frames\.1\./)]);
    expect(h.delivered).toEqual([1, 2, 3]);
    expect(h.sockets).toHaveLength(1);
  });

  it('reports a frame that fails the protocol schema and keeps the connection', () => {
    // Arrange
    const h = harness();
    h.client.start();

    // Act
    h.latest().open().send('{"type":"event","position":-1}').send({ type: 'heartbeat', position: 0, wallMillis: 1 });

    // Assert
    expect(h.problems).toEqual([expect.stringMatching(/^invalid frame: /)]);
    expect(h.sockets).toHaveLength(1);
  });

  it('while held, counts new events without delivering or keeping them, and on release resumes with no gap and no duplicate', () => {
    // Arrange
    const h = harness();
    const log = logOf(10);
    h.client.start();
    h.latest().open().sendEvents(log.slice(0, 4)).send({ type: 'caught-up', position: 4 });

    // Act: pause at 4, the server keeps streaming
    h.client.hold();
    h.latest().sendEvents(log.slice(4, 9)).send({ type: 'heartbeat', position: 10, wallMillis: 1 });
    const whilePaused = { delivered: [...h.delivered], newSince: h.client.newSinceHold };
    h.client.release();
    h.latest().open().sendEvents(log.slice(4)).send({ type: 'caught-up', position: 10 });

    // Assert
    expect(whilePaused).toEqual({ delivered: [1, 2, 3, 4], newSince: 6 });
    expect(h.sockets.map((s) => s.after)).toEqual([0, 3]);
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(h.client.newSinceHold).toBe(0);
  });

  it('while held on a busy log (no heartbeats), reports the growing head from the event frames it drops', () => {
    // Arrange: a client that records every head it is told about
    const heads: number[] = [];
    const sockets: FakeSocket[] = [];
    const client = new StreamClient({
      url: (after) => streamUrl('http://127.0.0.1:3000', after, 'viewer-token'),
      connect: (url) => {
        const socket = new FakeSocket(url);
        sockets.push(socket);
        return socket;
      },
      timers: new ManualTimers(),
      onEvent: () => undefined,
      onHead: (position) => heads.push(position),
    });
    const log = logOf(9);
    client.start();
    sockets[0]!.open().sendEvents(log.slice(0, 3)).send({ type: 'caught-up', position: 3 });

    // Act: pause, then the server streams five more events and never a heartbeat
    client.hold();
    sockets[0]!.sendEvents(log.slice(3, 8));

    // Assert: the head is known from the dropped frames alone
    expect(heads.at(-1)).toBe(8);
    expect(client.newSinceHold).toBe(5);
  });

  it('releasing a hold that dropped nothing keeps the same socket', () => {
    const h = harness();
    h.client.start();
    h.latest().open().sendEvents(logOf(2));
    h.client.hold();
    h.client.release();
    expect(h.sockets).toHaveLength(1);
  });

  it('raising the hold target beyond what was dropped fetches exactly up to it', () => {
    // Arrange
    const h = harness();
    const log = logOf(10);
    h.client.start();
    h.client.holdAt(3);
    h.latest().open().sendEvents(log);

    // Act
    h.client.holdAt(6);
    h.latest().open().sendEvents(log.slice(3));

    // Assert
    expect(h.delivered).toEqual([1, 2, 3, 4, 5, 6]);
    expect(h.client.newSinceHold).toBe(4);
  });

  it('stops and says so when the server refuses the viewer token', () => {
    // Arrange
    const h = harness();
    h.client.start();

    // Act
    h.latest().open().serverClose(4401, 'invalid viewer token');

    // Assert
    expect(h.client.state).toEqual({ status: 'unauthorized', reason: 'invalid viewer token' });
    expect(h.timers.pendingDelays).toEqual([]);
  });

  it('reconnects when the server sends nothing, not even a heartbeat, for staleAfterMillis', () => {
    // Arrange
    const h = harness();
    h.client.start();
    h.latest().open();

    // Act
    h.timers.advance(30_000);

    // Assert
    expect(h.client.state).toMatchObject({ status: 'reconnecting', reason: 'no frame for 30000 ms' });
  });

  it('counts staleAfterMillis from the last frame: a heartbeat postpones the reconnect by a full period', () => {
    // Arrange
    const h = harness();
    h.client.start();
    h.latest().open();
    h.timers.advance(20_000);
    h.latest().send({ type: 'heartbeat', position: 0, wallMillis: 1 });

    // Act
    h.timers.advance(29_999); // 49 999 ms after open, 29 999 ms after the heartbeat
    const beforePeriod = h.client.state.status;
    h.timers.advance(1);

    // Assert
    expect(beforePeriod).toBe('catching-up');
    expect(h.client.state).toMatchObject({ status: 'reconnecting', reason: 'no frame for 30000 ms' });
    expect(h.sockets).toHaveLength(1);
  });

  it('reconnects immediately after a closing frame, from its own last position', () => {
    // Arrange
    const h = harness({ after: 2 });
    const log = logOf(4);
    h.client.start();
    h.latest().open().sendEvents(log.slice(2, 3)).send({ type: 'closing', reason: 'slow-consumer', position: 4 });

    // Act
    h.timers.advance(250);

    // Assert
    expect(h.sockets.map((s) => s.after)).toEqual([2, 2]);
    expect(h.client.headPosition).toBe(4);
  });

  it('on closing event-log-corrupt, reports the damage at the last good position and keeps growing the back-off while nothing new arrives', () => {
    // Arrange: a coordinator whose record 3 does not decode; each connection opens, then closes on it
    const h = harness();
    const log = logOf(2);
    const corrupt = {
      type: 'closing',
      reason: 'event-log-corrupt',
      position: 2,
      corruptPosition: 3,
      field: 'data',
      message: 'event at position 3 is corrupt: data: invalid JSON',
    } as const;
    h.client.start();
    h.latest().open().sendEvents(log).send(corrupt);

    // Act
    const delays: number[] = [h.timers.pendingDelays[0]!];
    for (let i = 0; i < 4; i += 1) {
      h.timers.advance(delays[i]!);
      h.latest()
        .open()
        .send({ ...corrupt });
      delays.push(h.timers.pendingDelays[0]!);
    }

    // Assert
    expect(delays).toEqual([249, 499, 999, 1_998, 3_996]);
    expect(h.sockets.map((s) => s.after)).toEqual([0, 1, 1, 1, 1]);
    expect(h.client.state).toEqual({
      status: 'log-damaged',
      after: 2,
      attempt: 5,
      retryInMillis: 3_996,
      damage: { position: 3, field: 'data', message: 'event at position 3 is corrupt: data: invalid JSON' },
    });
  });

  it('once a connection delivers again after the damage, resets the back-off and forgets the damage', () => {
    const h = harness();
    h.client.start();
    h.latest().open().send({ type: 'closing', reason: 'event-log-corrupt', position: 0, message: 'bad' });
    h.timers.advance(249);
    h.latest().open().sendEvents(logOf(1)).send({ type: 'caught-up', position: 1 }).serverClose(1006);

    expect(h.client.state).toMatchObject({ status: 'reconnecting', retryInMillis: 249 });
  });

  it('stops and says the log diverged when the coordinator log ends before its position (reset or replaced)', () => {
    // Arrange
    const h = harness({ after: 500 });
    h.client.start();

    // Act
    h.latest().open().send({ type: 'closing', reason: 'after-beyond-head', position: 12 });
    h.latest().serverClose(1008, 'after is beyond the head of the log');
    h.timers.advance(60_000);

    // Assert
    expect(h.client.state).toEqual({ status: 'diverged', position: 500, headPosition: 12 });
    expect(h.sockets).toHaveLength(1);
  });

  it('stops and says the log diverged when, reconnecting, the event at its position is not the one it delivered (a new log grown past it)', () => {
    // Arrange: 3 events of one log delivered, then the coordinator comes back on another log, longer
    const h = harness();
    const first = logOf(3);
    const replaced = new LogBuilder();
    replaced.started();
    for (let i = 1; i < 9; i += 1) replaced.advance(7).granted(`other-${i}`, 'agent-b', i);
    h.client.start();
    h.latest().open().sendEvents(first).send({ type: 'caught-up', position: 3 });
    h.latest().serverClose(1006);
    h.timers.advance(250);

    // Act: the new socket asks for position 3 again and gets the other log's
    h.latest().open().sendEvents(replaced.events.slice(2)).send({ type: 'caught-up', position: 9 });
    h.timers.advance(60_000);

    // Assert: nothing of the other log was delivered, no retry, and the state says why
    expect(h.sockets.map((s) => s.after)).toEqual([0, 2]);
    expect(h.delivered).toEqual([1, 2, 3]);
    expect(h.client.state).toMatchObject({ status: 'diverged', position: 3, differsAt: 3 });
    expect(h.sockets).toHaveLength(2);
  });

  it('stops and says the log diverged when a reconnect catches up below its position (a log one event shorter)', () => {
    // Arrange
    const h = harness();
    h.client.start();
    h.latest().open().sendEvents(logOf(3));
    h.latest().serverClose(1006);
    h.timers.advance(250);

    // Act
    h.latest().open().send({ type: 'caught-up', position: 2 });

    // Assert
    expect(h.client.state).toEqual({ status: 'diverged', position: 3, headPosition: 2 });
  });

  it('rejects a negative resume position, naming the field', () => {
    expect(
      () =>
        new StreamClient({
          url: String,
          connect: () => new FakeSocket('ws://x/'),
          timers: new ManualTimers(),
          after: -1,
          onEvent: () => undefined,
        }),
    ).toThrow(/after must be a non-negative integer \(log position\), got -1/);
  });
});
