/**
 * Typed errors of `lease-fence`. Each has a stable `code` for programs and a message for people.
 * Business denials (a lease held by someone else, an expired renewal) are never thrown: they are
 * outcomes (`{ ok: false, reason }`). These errors mean misuse or a broken assumption.
 *
 * @see docs/design.md § "The library's rules"
 */
import type { RejectionRecord } from './fence/rejection.js';

/**
 * Base class of every error this library throws on purpose (argument errors are plain
 * `TypeError` / `RangeError`). Switch on `code`, which never changes between versions.
 */
export abstract class LeaseFenceError extends Error {
  /** Stable, kebab-case identifier of the error kind. */
  abstract readonly code: string;

  protected constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Thrown when two {@link Instant}s of different clock domains are subtracted or compared.
 * Readings of different clocks have unrelated origins; the difference would look like a
 * duration and be off by an unknown offset, so no number is returned.
 *
 * @see docs/design.md § "The library's rules" (Instant)
 */
export class ClockDomainError extends LeaseFenceError {
  readonly code = 'clock-domain';

  /**
   * @param left - Domain of the instant the operation was called on.
   * @param right - Domain of the other instant.
   * @param operation - The operation attempted, for the message (`'minus'`, `'isBefore'`, …).
   */
  constructor(
    readonly left: string,
    readonly right: string,
    operation = 'compare',
  ) {
    super(
      `Instant.${operation}: cannot combine clock domains ${JSON.stringify(left)} and ${JSON.stringify(right)}; ` +
        'readings of different clocks have unrelated origins',
    );
    this.name = 'ClockDomainError';
  }
}

/**
 * Thrown by a guarded clock when its source returns NaN, ±Infinity, or a reading below the
 * previous one (a backwards step would silently lengthen every lease measured on it).
 * The bad reading is not kept: the clock's last good reading is unchanged.
 *
 * @see docs/design.md § "The library's rules" (clock sources are guarded)
 */
export class ClockReadingError extends LeaseFenceError {
  readonly code = 'clock-reading';

  /**
   * @param domain - The clock's domain.
   * @param reading - The rejected reading, in milliseconds.
   * @param problem - `'not-finite'` (NaN or ±Infinity) or `'backwards'` (below `previousMillis`).
   * @param previousMillis - The last accepted reading, when there was one.
   */
  constructor(
    readonly domain: string,
    readonly reading: number,
    readonly problem: 'not-finite' | 'backwards',
    readonly previousMillis?: number,
  ) {
    super(
      problem === 'not-finite'
        ? `clock ${JSON.stringify(domain)}: reading must be a finite number of milliseconds, got ${String(reading)}`
        : `clock ${JSON.stringify(domain)}: reading ${String(reading)} ms is below the previous reading ${String(previousMillis)} ms; the clock went backwards`,
    );
    this.name = 'ClockReadingError';
  }
}

/**
 * Thrown when the lease protocol is used out of order: a request completed twice, a grant
 * paired with another request, resource, holder or fence, a token shown to another resource's
 * gate, or a change applied to a table it does not fit. Nothing was changed.
 *
 * @see docs/design.md § "The library's rules" (Client anchoring)
 */
export class ProtocolMisuseError extends LeaseFenceError {
  readonly code = 'protocol-misuse';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProtocolMisuseError';
  }
}

/** Names the refused token in messages. */
const describeRejection = (rejection: RejectionRecord): string =>
  `fence ${rejection.rejected.fence} (holder ${JSON.stringify(rejection.rejected.holderId)})`;

/**
 * Thrown by {@link FenceGate.commit} and {@link FenceGate.admit} when the token's fence is below
 * the gate's floor. The write did not run; the rejection was recorded in `gate.rejections` (and
 * passed to `onRejection`) before this was thrown.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
export class StaleFenceError extends LeaseFenceError {
  readonly code = 'stale-fence';

  /**
   * @param rejection - The recorded rejection (`kind: 'stale'`): both holders and both fences.
   * @param onRejectionError - What the gate's `onRejection` callback threw, if it threw; it never
   *   replaces this refusal.
   */
  constructor(
    readonly rejection: RejectionRecord,
    readonly onRejectionError?: unknown,
  ) {
    super(
      `${rejection.resource}: ${describeRejection(rejection)} is below the floor ${rejection.current.fence} ` +
        `(holder ${JSON.stringify(rejection.current.holderId)}); the write did not run`,
    );
    this.name = 'StaleFenceError';
  }
}

/**
 * Thrown by {@link FenceGate.commit} and {@link FenceGate.admit} when the token's fence equals
 * the gate's floor but names another holder: two holders were given the same fence, which is
 * evidence of a double grant (a coordinator that lost its fence counter, for example). Refused
 * and recorded like a stale fence, never admitted.
 *
 * @see docs/design.md § "The library's rules" (FenceGate: an equal fence from a different holder)
 */
export class DoubleGrantError extends LeaseFenceError {
  readonly code = 'double-grant';

  /**
   * @param rejection - The recorded rejection (`kind: 'double-grant'`).
   * @param onRejectionError - What the gate's `onRejection` callback threw, if it threw.
   */
  constructor(
    readonly rejection: RejectionRecord,
    readonly onRejectionError?: unknown,
  ) {
    super(
      `${rejection.resource}: ${describeRejection(rejection)} equals the floor but the floor was admitted for holder ` +
        `${JSON.stringify(rejection.current.holderId)}: two holders share one fence (double grant); the write did not run`,
    );
    this.name = 'DoubleGrantError';
  }
}
