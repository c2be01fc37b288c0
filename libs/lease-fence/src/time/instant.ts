import { ClockDomainError } from '../errors.js';
import { describeValue, requireClockDomain } from '../validate.js';

/**
 * A clock reading: milliseconds on one clock, plus the name of that clock (its domain).
 * Immutable. Arithmetic within a domain is plain; subtracting or comparing instants of
 * different domains throws {@link ClockDomainError}, because two clocks' origins are unrelated
 * and the difference would be a number shaped like a duration but off by an unknown offset.
 *
 * @see docs/design.md § "The library's rules" (Instant = milliseconds + clock domain)
 * @example
 * ```ts
 * const sentAt = Instant.of(1_000, 'agent-a');
 * sentAt.plus(250).minus(sentAt); // 250
 * sentAt.minus(Instant.of(1_000, 'coordinator')); // throws ClockDomainError
 * ```
 */
export class Instant {
  private constructor(
    /** Milliseconds on this instant's clock: finite; the origin is the clock's own. */
    readonly millis: number,
    /** The clock this reading belongs to (a boot id, an agent name, …). Non-empty. */
    readonly domain: string,
  ) {
    Object.freeze(this);
  }

  /**
   * Makes an instant from a reading.
   * @param millis - Milliseconds on the clock named by `domain`. Finite.
   * @param domain - The clock's domain. Non-empty string.
   * @throws RangeError if `millis` is NaN or ±Infinity; TypeError if `millis` is not a number
   *   or `domain` is not a non-empty string.
   */
  static of(millis: number, domain: string): Instant {
    requireClockDomain('Instant.of', 'domain', domain);
    if (typeof millis !== 'number') {
      throw new TypeError(`Instant.of: millis must be a finite number of milliseconds, got ${describeValue(millis)}`);
    }
    if (!Number.isFinite(millis)) {
      throw new RangeError(`Instant.of: millis must be a finite number of milliseconds, got ${describeValue(millis)}`);
    }
    return new Instant(millis, domain);
  }

  /**
   * The instant `ms` milliseconds later (earlier when negative), in the same domain.
   * @param ms - A finite number of milliseconds.
   * @throws RangeError if `ms` is not finite or the result is not finite.
   */
  plus(ms: number): Instant {
    const millis = this.millis + ms;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || !Number.isFinite(millis)) {
      throw new RangeError(`Instant.plus: ms must be a finite number of milliseconds, got ${describeValue(ms)}`);
    }
    return new Instant(millis, this.domain);
  }

  /**
   * Milliseconds from `other` to this instant (`this - other`); negative when `other` is later.
   * @throws {@link ClockDomainError} if `other` is in another clock domain.
   */
  minus(other: Instant): number {
    this.sameDomain(other, 'minus');
    return this.millis - other.millis;
  }

  /** `true` when this instant is strictly earlier than `other`. @throws {@link ClockDomainError} across domains. */
  isBefore(other: Instant): boolean {
    this.sameDomain(other, 'isBefore');
    return this.millis < other.millis;
  }

  /** `true` when this instant is strictly later than `other`. @throws {@link ClockDomainError} across domains. */
  isAfter(other: Instant): boolean {
    this.sameDomain(other, 'isAfter');
    return this.millis > other.millis;
  }

  /** `true` when this instant is equal to or later than `other`. @throws {@link ClockDomainError} across domains. */
  isAtOrAfter(other: Instant): boolean {
    this.sameDomain(other, 'isAtOrAfter');
    return this.millis >= other.millis;
  }

  /**
   * `true` when both instants are the same reading of the same clock.
   * @throws {@link ClockDomainError} across domains: "equal" has no meaning between unrelated clocks.
   */
  equals(other: Instant): boolean {
    this.sameDomain(other, 'equals');
    return this.millis === other.millis;
  }

  /** Plain JSON form, `{ millis, domain }`; {@link Instant.of} reads it back. */
  toJSON(): { millis: number; domain: string } {
    return { millis: this.millis, domain: this.domain };
  }

  /** For logs: `1234.5ms@agent-a`. */
  toString(): string {
    return `${this.millis}ms@${this.domain}`;
  }

  private sameDomain(other: Instant, operation: string): void {
    if (!(other instanceof Instant)) {
      throw new TypeError(`Instant.${operation}: other must be an Instant, got ${describeValue(other)}`);
    }
    if (other.domain !== this.domain) throw new ClockDomainError(this.domain, other.domain, operation);
  }
}
