/**
 * TEST DOUBLE: {@link Timers} driven by a manual clock, so renewal schedules, watchdogs and
 * backoffs can be stepped through without real waiting. Time moves only when the test calls
 * {@link ManualTimers.advance}; sleepers whose due time is reached then resolve in due order.
 */
import type { ManualClock } from 'lease-fence';
import type { Timers } from '../timers.js';

/** Manual {@link Timers}: see {@link createManualTimers}. */
export interface ManualTimers extends Timers {
  /** Advances the clock by `millis` and resolves every sleeper now due, earliest first. */
  advance(millis: number): Promise<void>;
  /** Durations (ms) of the sleeps currently waiting, in the order they were requested. */
  readonly pendingMillis: readonly number[];
  /** Resolves once at least `count` sleeps are waiting (an event, not a poll). */
  waitForSleepers(count: number): Promise<void>;
}

interface Sleeper {
  readonly dueMillis: number;
  readonly millis: number;
  readonly resolve: () => void;
}

/**
 * Makes manual timers on `clock` (the same clock the client under test reads). A sleep of 0 ms
 * or less resolves on the next microtask without advancing.
 */
export const createManualTimers = (clock: ManualClock): ManualTimers => {
  let sleepers: Sleeper[] = [];
  let watchers: { count: number; resolve: () => void }[] = [];
  const settleWatchers = (): void => {
    const ready = watchers.filter((watcher) => sleepers.length >= watcher.count);
    watchers = watchers.filter((watcher) => sleepers.length < watcher.count);
    for (const watcher of ready) watcher.resolve();
  };
  return {
    sleep(millis, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (millis <= 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const sleeper: Sleeper = {
          dueMillis: clock.peek().millis + millis,
          millis,
          resolve: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          sleepers = sleepers.filter((other) => other !== sleeper);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.push(sleeper);
        settleWatchers();
      });
    },
    async advance(millis) {
      clock.advance(millis);
      const nowMillis = clock.peek().millis;
      const due = sleepers
        .filter((sleeper) => sleeper.dueMillis <= nowMillis)
        .sort((a, b) => a.dueMillis - b.dueMillis);
      sleepers = sleepers.filter((sleeper) => sleeper.dueMillis > nowMillis);
      for (const sleeper of due) sleeper.resolve();
      // let the woken code run up to its next await
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    get pendingMillis() {
      return sleepers.map((sleeper) => sleeper.millis);
    },
    waitForSleepers(count) {
      if (sleepers.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => watchers.push({ count, resolve }));
    },
  };
};
