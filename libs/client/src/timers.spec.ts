import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MILLIS, sleepInChunks, systemTimers } from './timers.js';

describe('sleepInChunks', () => {
  /** A fake timer queue: records every delay asked for and fires timers when told to. */
  const fakeTimers = () => {
    let nowMillis = 0;
    const delays: number[] = [];
    let pending: { callback: () => void; dueMillis: number } | undefined;
    return {
      delays,
      now: () => nowMillis,
      schedule: (callback: () => void, delayMillis: number) => {
        delays.push(delayMillis);
        pending = { callback, dueMillis: nowMillis + delayMillis };
        return pending as unknown as ReturnType<typeof setTimeout>;
      },
      cancel: () => {
        pending = undefined;
      },
      fireNext: () => {
        const next = pending;
        if (next === undefined) throw new Error('no timer pending');
        pending = undefined;
        nowMillis = next.dueMillis;
        next.callback();
      },
    };
  };

  it('splits a wait longer than 2^31 - 1 ms into chunks that each stay below that limit', async () => {
    // Arrange
    const timers = fakeTimers();
    let resolved = false;
    const totalMillis = 3 * MAX_TIMER_MILLIS + 10;

    // Act
    const sleeping = sleepInChunks(totalMillis, undefined, timers.schedule, timers.cancel, timers.now).then(
      () => (resolved = true),
    );
    for (let chunk = 0; chunk < 3; chunk += 1) timers.fireNext();
    await Promise.resolve();
    const resolvedBeforeLastChunk = resolved;
    timers.fireNext();
    await sleeping;

    // Assert
    expect(resolvedBeforeLastChunk).toBe(false);
    expect(timers.delays).toEqual([MAX_TIMER_MILLIS, MAX_TIMER_MILLIS, MAX_TIMER_MILLIS, 10]);
    expect(timers.now()).toBe(totalMillis);
  });

  it('rejects with the abort reason and cancels its timer', async () => {
    // Arrange
    const timers = fakeTimers();
    const controller = new AbortController();
    const reason = new Error('released');
    const sleeping = sleepInChunks(5 * MAX_TIMER_MILLIS, controller.signal, timers.schedule, timers.cancel, timers.now);

    // Act
    controller.abort(reason);

    // Assert
    await expect(sleeping).rejects.toBe(reason);
    expect(() => timers.fireNext()).toThrow('no timer pending');
  });
});

describe('systemTimers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never passes setTimeout a delay above 2^31 - 1 ms, even for a 50-day wait', async () => {
    // Arrange
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const fiftyDaysMillis = 50 * 24 * 3600 * 1000;
    let resolved = false;

    // Act
    const sleeping = systemTimers.sleep(fiftyDaysMillis).then(() => (resolved = true));
    await vi.advanceTimersByTimeAsync(fiftyDaysMillis - 1);
    const resolvedEarly = resolved;
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;

    // Assert
    expect(resolvedEarly).toBe(false);
    expect(setTimeoutSpy.mock.calls.length).toBeGreaterThanOrEqual(3);
    expect(setTimeoutSpy.mock.calls.every(([, delay]) => (delay ?? 0) <= MAX_TIMER_MILLIS)).toBe(true);
  });
});
