/**
 * The rejection log's shapes: what a {@link FenceGate} records when it refuses a token.
 * Types, and the one constant for an unknown floor holder.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */

/**
 * The highest fence a gate has admitted, and the holder it was admitted for.
 * A token is admitted when its fence is above `fence`, or equal to it from the same `holderId`.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
export interface GateFloor {
  /** The highest fence admitted so far: a positive safe integer. */
  readonly fence: number;
  /** The holder the floor's fence was admitted for; {@link UNKNOWN_FLOOR_HOLDER} when not known. */
  readonly holderId: string;
}

/**
 * The `holderId` a {@link GateFloor} (and a rejection's `current`) shows when the floor's holder
 * is unknown: the gate was started from a bare-number `initialFloor`. Reserved: a floor saved
 * with this holder is restored as unknown, so no holder should use it as its id.
 */
export const UNKNOWN_FLOOR_HOLDER = '(unknown)';

/**
 * Why a gate refused a token.
 * - `'stale'`: the fence is below the floor; a newer generation of ownership has written.
 * - `'double-grant'`: the fence equals the floor but the holder differs; two holders were
 *   given the same fence, which a correct coordinator never does.
 */
export type RejectionKind = 'stale' | 'double-grant';

/**
 * One refused write, as recorded in {@link FenceGate.rejections} and passed to `onRejection`.
 * This log is the evidence that two holders overlapped: it names both holders and both fences.
 * Frozen; `seq` increases by one per rejection of the same gate, so `(gate, resource, seq)`
 * identifies a rejection when it is reported more than once.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
export interface RejectionRecord {
  /** The gate's sequence number for this rejection (starts at the gate's `initialSeq`). */
  readonly seq: number;
  /** The resource the gate protects. */
  readonly resource: string;
  /** Why the token was refused. */
  readonly kind: RejectionKind;
  /** The refused token's holder and fence. */
  readonly rejected: { readonly holderId: string; readonly fence: number };
  /** The gate's floor at the moment of the refusal. */
  readonly current: { readonly holderId: string; readonly fence: number };
}
