/**
 * Sleeping for a number of milliseconds, safely for any duration, and replaceably in tests.
 *
 * Node's `setTimeout` fires after 1 ms (with a `TimeoutOverflowWarning`) when asked for more than
 * 2^31 - 1 ms, which would turn a renewal scheduled in 25 days into a renewal storm. The system
 * timers here split long waits into chunks below that limit.
 *
 * @see docs/design.md § "The library's rules" (every timer stays below 2^31 ms)
 */

/** Longest delay Node's `setTimeout` honours, in milliseconds (2^31 - 1). Longer waits are chunked. */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1;

/**
 * How the SDK waits: backoff between retries, the renewal schedule, the deadline watchdog.
 * The default is {@link systemTimers}; tests pass `createManualTimers` (from
 * `@lease-fence/client/testing`) to move time by hand.
 */
export interface Timers {
  /**
   * Resolves after `millis` milliseconds (0 or less: on a later turn of the event loop).
   * Rejects with `signal.reason` as soon as `signal` aborts (immediately if already aborted).
   */
  sleep(millis: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The real timers: `setTimeout` in chunks of at most {@link MAX_TIMER_MILLIS}, measured against
 * `performance.now()` so an early or late chunk does not shift the end.
 */
export const systemTimers: Timers = {
  sleep: (millis, signal) => sleepInChunks(millis, signal, setTimeout, clearTimeout, () => performance.now()),
};

/**
 * The real timers, unref'd: a pending sleep does not keep the process alive. For background work
 * that must not hold a finished program open, such as the pings of an idle link.
 */
export const unrefTimers: Timers = {
  sleep: (millis, signal) =>
    sleepInChunks(
      millis,
      signal,
      (callback, delayMillis) => setTimeout(callback, delayMillis).unref(),
      clearTimeout,
      () => performance.now(),
    ),
};

/**
 * The chunking loop behind {@link systemTimers}, with the timer functions passed in.
 * @internal exported for tests.
 */
export const sleepInChunks = (
  millis: number,
  signal: AbortSignal | undefined,
  schedule: (callback: () => void, delayMillis: number) => ReturnType<typeof setTimeout>,
  cancel: (handle: ReturnType<typeof setTimeout>) => void,
  nowMillis: () => number,
): Promise<void> => {
  if (Number.isNaN(millis)) {
    return Promise.reject(
      new RangeError(`Timers.sleep: millis must be a number of milliseconds, got ${String(millis)}`),
    );
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const endMillis = nowMillis() + Math.max(0, millis);
    let handle: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      if (handle !== undefined) cancel(handle);
      reject(signal?.reason);
    };
    const arm = (): void => {
      const remainingMillis = endMillis - nowMillis();
      if (remainingMillis <= 0 && handle !== undefined) {
        signal?.removeEventListener('abort', onAbort);
        resolve();
        return;
      }
      handle = schedule(arm, Math.min(Math.max(0, Math.ceil(remainingMillis)), MAX_TIMER_MILLIS));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
};
