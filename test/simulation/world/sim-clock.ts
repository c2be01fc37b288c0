/**
 * Node clocks of the simulated world. Each machine has an {@link Oscillator}: a rate schedule
 * over true time (1 = perfect; 1.01 = runs 1 % fast), fixed when the world is built, so the
 * reading of any clock at any true time — past or future — is known exactly. Each process on
 * the machine (each coordinator boot, each agent) gets a {@link SimClock}: a `lease-fence`
 * Clock in its own domain with its own arbitrary origin, driven by the machine's oscillator.
 *
 * The simulation uses the exact mapping (reading ⇄ true time) only in its invariant checks;
 * the code under test sees nothing but `clock.now()` Instants in their own domains.
 *
 * @see docs/design.md § "The library's rules" (Instant = milliseconds + clock domain)
 */
import { Instant, type Clock } from 'lease-fence';
import type { VirtualScheduler } from './scheduler.js';

/** A change of a machine's clock rate at a true time. */
export interface RateChange {
  /** True time of the change, in milliseconds. */
  readonly atMillis: number;
  /** Clock milliseconds per true millisecond from then on; positive. */
  readonly rate: number;
}

interface Segment {
  readonly startMillis: number;
  readonly rate: number;
  /** Oscillator reading at `startMillis` (cumulative from true time 0). */
  readonly cumulative: number;
}

/**
 * A machine's clock rate over true time: piecewise constant, starting at true time 0.
 * @throws RangeError if a rate is not positive and finite.
 */
export class Oscillator {
  private readonly segments: Segment[];

  constructor(initialRate: number, changes: readonly RateChange[] = []) {
    const check = (rate: number): number => {
      if (!Number.isFinite(rate) || rate <= 0)
        throw new RangeError(`Oscillator: rate must be a positive finite number, got ${rate}`);
      return rate;
    };
    this.segments = [{ startMillis: 0, rate: check(initialRate), cumulative: 0 }];
    for (const change of [...changes].sort((a, b) => a.atMillis - b.atMillis)) {
      const last = this.segments[this.segments.length - 1]!;
      const startMillis = Math.max(change.atMillis, last.startMillis);
      this.segments.push({
        startMillis,
        rate: check(change.rate),
        cumulative: last.cumulative + (startMillis - last.startMillis) * last.rate,
      });
    }
  }

  /** The rate in force at true time `atMillis`. */
  rateAt(atMillis: number): number {
    return this.segmentAtTime(atMillis).rate;
  }

  /** Oscillator reading (cumulative clock milliseconds since true time 0) at true time `atMillis`. */
  cumulativeAt(atMillis: number): number {
    const segment = this.segmentAtTime(atMillis);
    return segment.cumulative + (atMillis - segment.startMillis) * segment.rate;
  }

  /** The true time at which the cumulative reading equals `cumulative` (inverse of {@link cumulativeAt}). */
  timeAtCumulative(cumulative: number): number {
    let segment = this.segments[0]!;
    for (const candidate of this.segments) {
      if (candidate.cumulative > cumulative) break;
      segment = candidate;
    }
    return segment.startMillis + (cumulative - segment.cumulative) / segment.rate;
  }

  private segmentAtTime(atMillis: number): Segment {
    let segment = this.segments[0]!;
    for (const candidate of this.segments) {
      if (candidate.startMillis > atMillis) break;
      segment = candidate;
    }
    return segment;
  }
}

/**
 * A process's clock: `reading(t) = originMillis + (osc(t) - osc(startMillis))`, in its own
 * domain. Monotonic (rates are positive). Implements `lease-fence`'s {@link Clock}.
 */
export class SimClock implements Clock {
  /**
   * @param domain - The clock domain (a coordinator boot id, `agent-1`, …).
   * @param oscillator - The machine's rate schedule.
   * @param scheduler - Source of the current true time.
   * @param startMillis - True time the process started; its reading then is `originMillis`.
   * @param originMillis - The reading at `startMillis`; arbitrary, non-negative.
   */
  constructor(
    readonly domain: string,
    private readonly oscillator: Oscillator,
    private readonly scheduler: VirtualScheduler,
    private readonly startMillis: number,
    private readonly originMillis: number,
  ) {}

  /** The reading now, as an Instant in this clock's domain. */
  now(): Instant {
    return Instant.of(this.readingAt(this.scheduler.nowMillis), this.domain);
  }

  /** This clock's reading at true time `atMillis` (exact, past or future). */
  readingAt(atMillis: number): number {
    return this.originMillis + this.oscillator.cumulativeAt(atMillis) - this.oscillator.cumulativeAt(this.startMillis);
  }

  /** The true time at which this clock reads `readingMillis` (exact, past or future). */
  trueTimeOf(readingMillis: number): number {
    return this.oscillator.timeAtCumulative(
      readingMillis - this.originMillis + this.oscillator.cumulativeAt(this.startMillis),
    );
  }
}
