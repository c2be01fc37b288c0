/**
 * Keeps a failure that every reconnect meets again (a damaged record: each stream client that
 * reaches it is closed, reconnects and reaches it again) from flooding the log: the first
 * occurrence of a key is reported, then at most one per `intervalMillis`, with how many were held back.
 */

/** Options of {@link RepeatLimiter}. */
export interface RepeatLimiterOptions {
  /** Least time between two reports of the same key (milliseconds, > 0). */
  readonly intervalMillis: number;
  /** Monotonic milliseconds. */
  readonly now: () => number;
}

/** Decides which occurrences of a repeated failure are reported. */
export class RepeatLimiter<Key> {
  readonly #last = new Map<Key, { atMillis: number; suppressed: number }>();

  /** @throws RangeError if `intervalMillis` is not a positive number. */
  constructor(private readonly options: RepeatLimiterOptions) {
    if (!(options.intervalMillis > 0))
      throw new RangeError(
        `RepeatLimiter: intervalMillis must be a positive number (milliseconds), got ${String(options.intervalMillis)}`,
      );
  }

  /**
   * Records one occurrence of `key`.
   * @returns `undefined` when it is to be held back, else how many occurrences were held back since
   *   the last report (0 the first time).
   */
  occurred(key: Key): number | undefined {
    const now = this.options.now();
    const last = this.#last.get(key);
    if (last !== undefined && now - last.atMillis < this.options.intervalMillis) {
      last.suppressed += 1;
      return undefined;
    }
    this.#last.set(key, { atMillis: now, suppressed: 0 });
    return last?.suppressed ?? 0;
  }
}
