/**
 * Denials and other counters that are not in the log: the stream's `stats` frames (about one a
 * second) carry totals since the coordinator's boot; rates are differences between consecutive
 * frames of the same boot. A bounded ring: memory does not grow with time.
 *
 * @see docs/design.md § "The event-sourced coordinator" (denials are counted, not logged)
 */
import type { StatsFrame } from '@lease-fence/protocol';

/** One rate sample between two consecutive stats frames of one boot. */
export interface StatsSample {
  /** End of the interval, coordinator wall epoch milliseconds. */
  readonly wallMillis: number;
  readonly bootId: string;
  /** Denied commands per second, all reasons. */
  readonly denialsPerSecond: number;
  /** Denied commands per second, by outcome reason (`held`, `already-held`, `expired`, `not-holder`). */
  readonly denialsByReason: Readonly<Record<string, number>>;
  readonly grantsPerSecond: number;
  readonly renewalsPerSecond: number;
  readonly rejectionsPerSecond: number;
}

/** Default number of samples kept (an hour at one frame a second). */
export const DEFAULT_STATS_CAPACITY = 3_600;

/** Rates from `stats` frames, newest last, at most `capacity` of them. */
export class StatsHistory {
  readonly #capacity: number;
  readonly #samples: StatsSample[] = [];
  #last: StatsFrame | undefined;

  /** @throws RangeError if `capacity` is not a positive integer. */
  constructor(capacity: number = DEFAULT_STATS_CAPACITY) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`StatsHistory: capacity must be a positive integer (samples), got ${String(capacity)}`);
    this.#capacity = capacity;
  }

  /** The latest frame received. */
  get latest(): StatsFrame | undefined {
    return this.#last;
  }

  /**
   * Adds a frame. A frame of a new boot (counters restarted) or one that does not move forward in
   * wall time starts a new series: no sample is made from it.
   */
  push(frame: StatsFrame): void {
    const previous = this.#last;
    this.#last = frame;
    if (previous === undefined || previous.bootId !== frame.bootId || frame.wallMillis <= previous.wallMillis) return;
    const seconds = (frame.wallMillis - previous.wallMillis) / 1_000;
    const rate = (now: number, before: number): number => Math.max(0, now - before) / seconds;
    const denialsByReason: Record<string, number> = {};
    let denials = 0;
    for (const [reason, count] of Object.entries(frame.denials)) {
      const r = rate(count, previous.denials[reason] ?? 0);
      denialsByReason[reason] = r;
      denials += r;
    }
    this.#samples.push({
      wallMillis: frame.wallMillis,
      bootId: frame.bootId,
      denialsPerSecond: denials,
      denialsByReason,
      grantsPerSecond: rate(frame.grants, previous.grants),
      renewalsPerSecond: rate(frame.renewals, previous.renewals),
      rejectionsPerSecond: rate(frame.rejections, previous.rejections),
    });
    if (this.#samples.length > this.#capacity) this.#samples.splice(0, this.#samples.length - this.#capacity);
  }

  /** Samples with `fromWallMillis <= wallMillis < toWallMillis`, oldest first. */
  between(fromWallMillis: number, toWallMillis: number): StatsSample[] {
    return this.#samples.filter((s) => s.wallMillis >= fromWallMillis && s.wallMillis < toWallMillis);
  }

  /** Number of samples kept. */
  get size(): number {
    return this.#samples.length;
  }
}
