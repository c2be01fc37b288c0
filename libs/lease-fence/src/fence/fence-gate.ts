import { DoubleGrantError, ProtocolMisuseError, StaleFenceError } from '../errors.js';
import type { FenceToken } from '../lease/outcomes.js';
import { describeValue, requireCount, requireFence, requireFunction, requireId, requireObject } from '../validate.js';
import { UNKNOWN_FLOOR_HOLDER, type GateFloor, type RejectionKind, type RejectionRecord } from './rejection.js';

/** Options of {@link FenceGate}. @see docs/design.md § "The library's rules" (FenceGate; a resource restores its floor) */
export interface FenceGateOptions {
  /**
   * The floor to start from: restore it from the resource's durable store after the resource
   * restarts, or stale holders get in again. Absent = no floor (the first valid token is admitted).
   *
   * Either a {@link GateFloor} `{ fence, holderId }`, or a bare fence number (a positive safe
   * integer) when only the fence was kept, the same way `LeaseCoordinator`'s `startFence` takes
   * a number. With a bare number the floor's holder is unknown, so a later token with an
   * **equal** fence is refused as a possible double grant ({@link DoubleGrantError}) whoever
   * presents it, since the gate cannot tell it is the same generation writing again; a higher
   * fence is admitted as usual. A `GateFloor` whose `holderId` is {@link UNKNOWN_FLOOR_HOLDER}
   * (what {@link FenceGate.floor} reports for such a floor) means the same.
   */
  readonly initialFloor?: GateFloor | number;
  /** Sequence number of the first rejection; restore it with the floor. Non-negative safe integer. @defaultValue 1 */
  readonly initialSeq?: number;
  /**
   * Called with every rejection, after it is recorded and before the error is thrown: forward it
   * to the coordinator or a log. If it throws, the refusal is still thrown (the callback's error is
   * on the thrown error's `onRejectionError`).
   */
  readonly onRejection?: (rejection: RejectionRecord) => void;
  /** How many rejections `rejections` keeps (oldest dropped first). Positive safe integer. @defaultValue 10_000 */
  readonly maxRejectionsKept?: number;
}

/**
 * Guards one resource with fencing: it remembers the highest fence it has admitted (the floor)
 * and refuses any token below it, so a holder whose lease was reassigned cannot write after the
 * new holder has. The check and the floor raise are one synchronous step, done before the write.
 *
 * Rules, for a token on this gate's resource:
 * - fence above the floor → admitted; the floor becomes (fence, holderId);
 * - fence equal to the floor, same holder → admitted (the same generation writing again);
 * - fence equal to the floor, another holder → refused as a double grant ({@link DoubleGrantError});
 * - fence below the floor → refused as stale ({@link StaleFenceError}).
 * Each refusal is recorded in {@link FenceGate.rejections} with both holders and fences and a
 * sequence number, passed to `onRejection`, then thrown.
 *
 * Fencing catches a stale write only after a newer holder has reached the gate; {@link FenceGate.admit}
 * lets the coordinator push the new fence at handover to close most of that window.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 * @see https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html (fencing tokens)
 * @example
 * ```ts
 * const gate = new FenceGate('deploy-slot');
 * gate.commit(lease.token, () => deploy()); // throws StaleFenceError if a newer fence has written
 * ```
 */
export class FenceGate {
  /** The resource this gate protects; tokens for other resources are misuse. */
  readonly resource: string;
  private floorFence = 0;
  /** The floor's holder; `undefined` when unknown (no floor yet, or a bare-number initialFloor). */
  private floorHolder: string | undefined;
  /** The last `token.holderId` that passed the id rule: a holder writing again skips the rule's regex on the hot path. */
  private checkedHolderId: string | undefined;
  private seq: number;
  private readonly log: RejectionRecord[] = [];
  private readonly onRejection: ((rejection: RejectionRecord) => void) | undefined;
  private readonly maxRejectionsKept: number;

  /**
   * @param resource - The resource this gate protects. Non-empty.
   * @param options - `initialFloor` (a {@link GateFloor} or a bare fence number), `initialSeq`
   *   (default 1), `onRejection`, `maxRejectionsKept` (default 10 000).
   * @throws TypeError / RangeError on bad arguments, naming the field (`initialFloor`,
   *   `initialFloor.fence`, `initialFloor.holderId`, …).
   */
  constructor(resource: string, options: FenceGateOptions = {}) {
    const api = 'FenceGate';
    requireId(api, 'resource', resource);
    requireObject(api, 'options', options);
    const { initialFloor, onRejection } = options;
    if (typeof initialFloor === 'number') {
      requireFence(api, 'initialFloor', initialFloor);
    } else if (initialFloor !== undefined) {
      if (typeof initialFloor !== 'object' || initialFloor === null) {
        throw new TypeError(
          `${api}: initialFloor must be a fence number or an object { fence, holderId }, got ${describeValue(initialFloor)}`,
        );
      }
      requireFence(api, 'initialFloor.fence', initialFloor.fence);
      requireId(api, 'initialFloor.holderId', initialFloor.holderId);
    }
    const initialSeq = options.initialSeq ?? 1;
    requireCount(api, 'initialSeq', initialSeq);
    const maxRejectionsKept = options.maxRejectionsKept ?? 10_000;
    requireCount(api, 'maxRejectionsKept', maxRejectionsKept);
    if (maxRejectionsKept < 1)
      throw new RangeError(`${api}: maxRejectionsKept must be a positive safe integer, got ${maxRejectionsKept}`);
    if (onRejection !== undefined) requireFunction(api, 'onRejection', onRejection);
    this.resource = resource;
    if (typeof initialFloor === 'number') {
      this.floorFence = initialFloor;
    } else if (initialFloor !== undefined) {
      this.floorFence = initialFloor.fence;
      this.floorHolder = initialFloor.holderId === UNKNOWN_FLOOR_HOLDER ? undefined : initialFloor.holderId;
    }
    this.seq = initialSeq;
    this.onRejection = onRejection;
    this.maxRejectionsKept = maxRejectionsKept;
  }

  /**
   * The highest fence admitted and its holder; `undefined` before the first admission. The
   * holder is {@link UNKNOWN_FLOOR_HOLDER} while the floor is a bare-number `initialFloor` that
   * no token has raised yet.
   */
  get floor(): GateFloor | undefined {
    return this.floorFence === 0
      ? undefined
      : Object.freeze({ fence: this.floorFence, holderId: this.floorHolder ?? UNKNOWN_FLOOR_HOLDER });
  }

  /** The sequence number the next rejection will get (persist it with the floor). */
  get nextSeq(): number {
    return this.seq;
  }

  /** Recorded rejections, oldest first (at most `maxRejectionsKept`). A read-only view. */
  get rejections(): readonly RejectionRecord[] {
    return this.log;
  }

  /**
   * Runs the write `fn` under `token`: checks the fence and raises the floor, as one synchronous
   * step, *before* `fn` runs. So a reentrant or concurrent write with an older fence is refused,
   * and a throwing (or rejecting) `fn` leaves the floor raised: the resource may already carry
   * part of the newer write, which an older fence must never overwrite.
   *
   * @param token - `{ resource, holderId, fence }`, usually `lease.token`.
   * @param fn - The write. May be async: its promise is returned as is (the floor is already raised).
   * @returns What `fn` returns.
   * @throws {@link StaleFenceError} if the fence is below the floor (`fn` did not run; recorded).
   * @throws {@link DoubleGrantError} if the fence equals the floor but the holder differs (`fn` did not run; recorded).
   * @throws {@link ProtocolMisuseError} if the token names another resource.
   * @throws TypeError / RangeError on a malformed token or a non-function `fn` (nothing recorded, floor unchanged).
   * @see docs/design.md § "The library's rules" (FenceGate)
   */
  commit<T>(token: FenceToken, fn: () => T): T {
    if (typeof fn !== 'function')
      throw new TypeError(`FenceGate.commit: fn must be a function, got ${describeValue(fn)}`);
    this.pass('FenceGate.commit', token);
    return fn();
  }

  /**
   * Raises the floor to `token` without a write: lets the coordinator push a new generation's
   * fence at handover, so a stalled previous holder is refused even before the new holder writes.
   * @throws the same as {@link FenceGate.commit}, for the same tokens.
   * @see docs/design.md § "The library's rules" (FenceGate: admit)
   */
  admit(token: FenceToken): void {
    this.pass('FenceGate.admit', token);
  }

  /**
   * Advisory: whether `token` would be admitted right now. Unsafe to branch a write on: another
   * token may raise the floor between this check and the write. Use {@link FenceGate.commit}.
   * Records nothing, changes nothing.
   * @throws {@link ProtocolMisuseError} / TypeError / RangeError like {@link FenceGate.commit}.
   */
  wouldAdmit(token: FenceToken): boolean {
    this.validate('FenceGate.wouldAdmit', token);
    return (
      token.fence > this.floorFence ||
      (token.fence === this.floorFence && this.floorHolder !== undefined && token.holderId === this.floorHolder)
    );
  }

  /** The check and floor raise shared by commit and admit: a few comparisons on the hot path. */
  private pass(api: string, token: FenceToken): void {
    this.validate(api, token);
    const fence = token.fence;
    if (fence > this.floorFence) {
      this.floorFence = fence;
      this.floorHolder = token.holderId;
      return;
    }
    if (fence === this.floorFence) {
      // An unknown floor holder (undefined) matches nobody: an equal fence may be a double grant.
      if (this.floorHolder !== undefined && token.holderId === this.floorHolder) return;
      this.refuse('double-grant', token);
    }
    this.refuse('stale', token);
  }

  private validate(api: string, token: FenceToken): void {
    if (typeof token !== 'object' || token === null) {
      throw new TypeError(
        `${api}: token must be a FenceToken { resource, holderId, fence }, got ${describeValue(token)}`,
      );
    }
    const fence = token.fence;
    if (!Number.isSafeInteger(fence) || fence < 1) requireFence(api, 'token.fence', fence);
    const holderId = token.holderId;
    if (holderId !== this.checkedHolderId) {
      requireId(api, 'token.holderId', holderId);
      this.checkedHolderId = holderId;
    }
    if (token.resource !== this.resource) {
      throw new ProtocolMisuseError(
        `${api}: token is for resource ${describeValue(token.resource)} but this gate guards ${JSON.stringify(this.resource)}`,
      );
    }
  }

  private refuse(kind: RejectionKind, token: FenceToken): never {
    const rejection: RejectionRecord = Object.freeze({
      seq: this.seq,
      resource: this.resource,
      kind,
      rejected: Object.freeze({ holderId: token.holderId, fence: token.fence }),
      current: Object.freeze({ holderId: this.floorHolder ?? UNKNOWN_FLOOR_HOLDER, fence: this.floorFence }),
    });
    this.seq += 1;
    this.log.push(rejection);
    if (this.log.length > this.maxRejectionsKept) this.log.shift();
    let onRejectionError: unknown;
    if (this.onRejection !== undefined) {
      try {
        this.onRejection(rejection);
      } catch (error) {
        onRejectionError = error;
      }
    }
    throw kind === 'stale'
      ? new StaleFenceError(rejection, onRejectionError)
      : new DoubleGrantError(rejection, onRejectionError);
  }
}
