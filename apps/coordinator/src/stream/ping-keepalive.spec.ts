import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type PingableSocket, PingKeepalive } from './ping-keepalive.js';

/** A socket double: counts pings, records termination, and answers with `pong()` when the test says so. */
class FakePingSocket extends EventEmitter implements PingableSocket {
  readyState = 1;
  pings = 0;
  terminated = false;

  ping(): void {
    this.pings += 1;
  }

  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }

  /** The peer answers the last ping. */
  pong(): void {
    this.emit('pong');
  }
}

const INTERVAL_MILLIS = 1000;

/** A started keepalive whose `watch(socket)` records in `unresponsive` every socket it gives up on. */
function keepalive() {
  const unresponsive: PingableSocket[] = [];
  const keeper = new PingKeepalive({ pingIntervalMillis: INTERVAL_MILLIS });
  keeper.start();
  const subject = {
    watch: (socket: PingableSocket, readingPaused?: () => boolean) =>
      keeper.watch(socket, () => unresponsive.push(socket), readingPaused),
    stop: () => keeper.stop(),
    get size() {
      return keeper.size;
    },
  };
  return { subject, unresponsive };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('PingKeepalive', () => {
  it('pings every watched open client once per interval', () => {
    // Arrange
    const { subject } = keepalive();
    const a = new FakePingSocket();
    const b = new FakePingSocket();
    subject.watch(a);
    subject.watch(b);

    // Act
    vi.advanceTimersByTime(INTERVAL_MILLIS - 1);
    const beforeInterval = [a.pings, b.pings];
    vi.advanceTimersByTime(1);

    // Assert
    expect(beforeInterval).toEqual([0, 0]);
    expect([a.pings, b.pings]).toEqual([1, 1]);
  });

  it('terminates a client that has not answered a ping by the next one, reports it once and stops watching it', () => {
    // Arrange: a peer that went away without a FIN
    const { subject, unresponsive } = keepalive();
    const silent = new FakePingSocket();
    subject.watch(silent);

    // Act
    vi.advanceTimersByTime(INTERVAL_MILLIS); // pinged
    const afterFirstPing = silent.terminated;
    vi.advanceTimersByTime(INTERVAL_MILLIS); // no pong by the next ping
    vi.advanceTimersByTime(5 * INTERVAL_MILLIS);

    // Assert
    expect(afterFirstPing).toBe(false);
    expect(silent.terminated).toBe(true);
    expect(silent.pings).toBe(1);
    expect(unresponsive).toEqual([silent]);
    expect(subject.size).toBe(0);
    expect(silent.listenerCount('pong')).toBe(0);
  });

  it('does not judge a client while this side has paused reading it, and judges it again once reading resumes', () => {
    // Arrange: the agent link stopped reading at its in-flight bound, so the peer's pong waits unread
    const { subject, unresponsive } = keepalive();
    const busy = new FakePingSocket();
    let paused = false;
    subject.watch(busy, () => paused);
    vi.advanceTimersByTime(INTERVAL_MILLIS); // pinged
    paused = true;

    // Act: five intervals paused, then reading resumes and the peer never answers again
    vi.advanceTimersByTime(5 * INTERVAL_MILLIS);
    const whilePaused = { terminated: busy.terminated, pings: busy.pings };
    paused = false;
    vi.advanceTimersByTime(INTERVAL_MILLIS); // pinged, a full interval to answer
    const afterResume = busy.terminated;
    vi.advanceTimersByTime(INTERVAL_MILLIS);

    // Assert
    expect(whilePaused).toEqual({ terminated: false, pings: 1 });
    expect(afterResume).toBe(false);
    expect(busy.terminated).toBe(true);
    expect(unresponsive).toEqual([busy]);
  });

  it('keeps a client that answers every ping before the next one', () => {
    // Arrange
    const { subject, unresponsive } = keepalive();
    const answering = new FakePingSocket();
    subject.watch(answering);

    // Act
    for (let round = 0; round < 10; round += 1) {
      vi.advanceTimersByTime(INTERVAL_MILLIS);
      answering.pong();
    }

    // Assert
    expect(answering.pings).toBe(10);
    expect(answering.terminated).toBe(false);
    expect(unresponsive).toEqual([]);
  });

  it('terminates a client that answered for a while and then stopped', () => {
    const { subject, unresponsive } = keepalive();
    const sleeper = new FakePingSocket();
    subject.watch(sleeper);

    vi.advanceTimersByTime(INTERVAL_MILLIS);
    sleeper.pong();
    vi.advanceTimersByTime(INTERVAL_MILLIS); // pinged again; the laptop sleeps
    vi.advanceTimersByTime(INTERVAL_MILLIS);

    expect(sleeper.pings).toBe(2);
    expect(sleeper.terminated).toBe(true);
    expect(unresponsive).toEqual([sleeper]);
  });

  it('gives a client watched just before a ping a full interval to answer it', () => {
    // Arrange
    const { subject } = keepalive();
    vi.advanceTimersByTime(INTERVAL_MILLIS - 1);
    const late = new FakePingSocket();
    subject.watch(late);

    // Act
    vi.advanceTimersByTime(1); // first ping, right after it connected
    vi.advanceTimersByTime(INTERVAL_MILLIS - 1);
    const beforeDeadline = late.terminated;
    vi.advanceTimersByTime(1);

    // Assert
    expect(late.pings).toBe(1);
    expect(beforeDeadline).toBe(false);
    expect(late.terminated).toBe(true);
  });

  it('neither pings nor terminates a client that is closing (its close handshake owns it)', () => {
    const { subject, unresponsive } = keepalive();
    const closing = new FakePingSocket();
    subject.watch(closing);
    closing.readyState = 2;

    vi.advanceTimersByTime(3 * INTERVAL_MILLIS);

    expect(closing.pings).toBe(0);
    expect(closing.terminated).toBe(false);
    expect(unresponsive).toEqual([]);
  });

  it('stops watching a client once told it closed, and removes its pong listener', () => {
    // Arrange
    const { subject, unresponsive } = keepalive();
    const leaving = new FakePingSocket();
    const unwatch = subject.watch(leaving);
    vi.advanceTimersByTime(INTERVAL_MILLIS);

    // Act
    unwatch();
    unwatch();
    vi.advanceTimersByTime(3 * INTERVAL_MILLIS);

    // Assert
    expect(leaving.pings).toBe(1);
    expect(leaving.terminated).toBe(false);
    expect(unresponsive).toEqual([]);
    expect(leaving.listenerCount('pong')).toBe(0);
    expect(subject.size).toBe(0);
  });

  it('watches a socket watched twice once', () => {
    const { subject } = keepalive();
    const socket = new FakePingSocket();

    subject.watch(socket);
    subject.watch(socket);
    vi.advanceTimersByTime(INTERVAL_MILLIS);

    expect(socket.pings).toBe(1);
    expect(socket.listenerCount('pong')).toBe(1);
  });

  it('pings no more after stop()', () => {
    const { subject } = keepalive();
    const socket = new FakePingSocket();
    subject.watch(socket);

    subject.stop();
    vi.advanceTimersByTime(5 * INTERVAL_MILLIS);

    expect(socket.pings).toBe(0);
    expect(socket.terminated).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 31])(
    'refuses a ping interval of %s milliseconds with a RangeError naming the option',
    (pingIntervalMillis) => {
      expect(() => new PingKeepalive({ pingIntervalMillis })).toThrow(
        new RangeError(
          `PingKeepalive: options.pingIntervalMillis must be an integer number of milliseconds in [1, 2147483647], got ${String(pingIntervalMillis)}`,
        ),
      );
    },
  );
});
