/**
 * What a resource must remember across its own restarts so its {@link FenceGate} does not
 * forget its floor: the floor itself, the next rejection `seq`, and how far rejections were
 * reported. Restored through `new FenceGate(resource, gateOptionsFrom(state))`.
 *
 * A floor must be durable BEFORE the write it admits is: persist it inside `commit`'s callback,
 * ahead of the write ({@link commitDurably}), or in the same transaction as the write.
 *
 * @see DESIGN.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import type { FenceGate, FenceToken, GateFloor } from 'lease-fence';

/** The durable part of a gate. */
export interface GateState {
  /** The gate's resource; a store refuses to load another resource's state. */
  readonly resource: string;
  /** The highest fence admitted, and its holder; absent before the first admission. */
  readonly floor?: GateFloor;
  /** The `seq` the gate's next rejection gets. Integer ≥ 1. */
  readonly nextSeq: number;
  /** Rejections with `seq` at or below this were acknowledged by the coordinator. Integer ≥ 0. */
  readonly reportedThroughSeq: number;
}

/** Somewhere a {@link GateState} survives a crash. */
export interface FloorStore {
  /** The last saved state, or `undefined` when none was ever saved. @throws {@link FloorStoreCorruptError} */
  load(): Promise<GateState | undefined>;
  /**
   * Makes `state` durable; resolves once it is. Never goes backwards: a floor below the one
   * already saved, or a lower `nextSeq` / `reportedThroughSeq`, is merged up, not written down.
   */
  save(state: GateState): Promise<void>;
}

/**
 * The state to persist for `gate` now.
 * @param reportedThroughSeq - From the rejection reporter; absent keeps what the store has.
 */
export const gateStateOf = (gate: FenceGate, reportedThroughSeq = 0): GateState => ({
  resource: gate.resource,
  ...(gate.floor === undefined ? {} : { floor: gate.floor }),
  nextSeq: gate.nextSeq,
  reportedThroughSeq,
});

/**
 * `FenceGate` options that restore a saved state (`initialFloor`, `initialSeq`); `{}` for none.
 */
export const gateOptionsFrom = (state: GateState | undefined): { initialFloor?: GateFloor; initialSeq?: number } =>
  state === undefined ? {} : { ...(state.floor === undefined ? {} : { initialFloor: state.floor }), initialSeq: state.nextSeq };

/**
 * Admits `token` at `gate` and runs `write` only after the raised floor is durable in `store`:
 * check and raise (one synchronous step, by `commit`), save, then write. A crash after the save
 * and before the write leaves a floor that no stale holder can get under after the restart; the
 * reverse order could not promise that.
 *
 * @throws `StaleFenceError` / `DoubleGrantError` from the gate (nothing saved, nothing written);
 *   what `store.save` throws (nothing written); what `write` throws.
 * @see DESIGN.md § "The library's rules" (FenceGate)
 */
export const commitDurably = <T>(gate: FenceGate, store: FloorStore, token: FenceToken, write: () => Promise<T>): Promise<T> =>
  gate.commit(token, async () => {
    await store.save(gateStateOf(gate));
    return write();
  });

/**
 * Merges two states of one gate, keeping the higher of each part, so saves that finish out of
 * order never lower a floor.
 * @internal
 */
export const mergeGateStates = (older: GateState | undefined, newer: GateState): GateState => {
  if (older === undefined) return newer;
  const floor =
    older.floor === undefined ? newer.floor : newer.floor === undefined || newer.floor.fence < older.floor.fence ? older.floor : newer.floor;
  return {
    resource: newer.resource,
    ...(floor === undefined ? {} : { floor }),
    nextSeq: Math.max(older.nextSeq, newer.nextSeq),
    reportedThroughSeq: Math.max(older.reportedThroughSeq, newer.reportedThroughSeq),
  };
};
