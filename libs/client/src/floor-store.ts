/**
 * What a resource must remember across its own restarts so its {@link FenceGate} neither forgets
 * its floor nor loses a refusal: the floor itself, the next rejection `seq`, how far refusals
 * were acknowledged by the coordinator, and the refusals not yet acknowledged (the outbox).
 * Restored through `new FenceGate(resource, gateOptionsFrom(state))`.
 *
 * A floor must be durable BEFORE the write it admits is, and a refusal BEFORE the writer is told
 * of it: {@link commitDurably} does both, or keep them in the same transaction as the write
 * (`@lease-fence/gate-sql` does, in PostgreSQL or SQLite).
 *
 * @see docs/design.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import {
  DoubleGrantError,
  StaleFenceError,
  UNKNOWN_FLOOR_HOLDER,
  type FenceGate,
  type FenceToken,
  type GateFloor,
  type RejectionRecord,
} from 'lease-fence';

/**
 * A refusal in a gate's outbox: the gate's full record (seq, kind, both holders, both fences)
 * and when it was refused. Kept durably until the coordinator acknowledged it.
 */
export interface PendingRejection extends RejectionRecord {
  /** When the gate refused the write: wall-clock epoch milliseconds (display only). */
  readonly wallMillis: number;
}

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
  /**
   * The outbox: refusals with `seq` above `reportedThroughSeq`, seq ascending, each below
   * `nextSeq`. A store always loads it (empty when none); a state saved without it keeps the
   * outbox already saved, and entries are only ever removed by a higher `reportedThroughSeq`.
   */
  readonly outbox?: readonly PendingRejection[];
}

/** Somewhere a {@link GateState} survives a crash. */
export interface FloorStore {
  /** The last saved state (with its `outbox`), or `undefined` when none was ever saved. @throws {@link FloorStoreCorruptError} */
  load(): Promise<GateState | undefined>;
  /**
   * Makes `state` durable in one atomic write; resolves once it is. Never goes backwards: a
   * floor below the one already saved, or a lower `nextSeq` / `reportedThroughSeq`, is merged
   * up, not written down; outbox entries are merged in by seq.
   */
  save(state: GateState): Promise<void>;
}

/**
 * Where a gate's refusals wait, durably, until the coordinator has acknowledged them: what a
 * rejection reporter drains ({@link reportRejections}). Implemented by {@link FileFloorStore}
 * and by a resource's own database (`@lease-fence/gate-sql`'s outbox table).
 */
export interface RejectionOutbox {
  /** The gate's resource. */
  readonly resource: string;
  /** Every refusal with `seq` at or below this was acknowledged by the coordinator. Integer ≥ 0. */
  readonly reportedThroughSeq: number;
  /**
   * The refusals not yet acknowledged, seq ascending. Only durable ones: a refusal is listed once
   * the write that saved it has completed, so the coordinator never records a seq the gate could
   * forget (and reuse) after a crash.
   */
  pendingRejections(): readonly PendingRejection[];
  /**
   * Records durably that the coordinator acknowledged every refusal through `throughSeq`, and
   * drops them from the outbox. Resolves once durable. A lower `throughSeq` than already
   * recorded changes nothing.
   * @throws RangeError when `throughSeq` is not an integer ≥ 0; what the storage throws.
   */
  acknowledgeRejections(throughSeq: number): Promise<void>;
  /**
   * Calls `listener` each time new refusals have become durable (so a reporter can send them at
   * once instead of at its next poll). Returns a function that stops the calls.
   */
  onPending(listener: () => void): () => void;
}

/**
 * The state to persist for `gate` now (no outbox entries: those are added by the refusal that
 * creates them, see {@link commitDurably}).
 * @param reportedThroughSeq - Acknowledged refusals; 0 keeps what the store has (states merge upwards).
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
  state === undefined
    ? {}
    : { ...(state.floor === undefined ? {} : { initialFloor: state.floor }), initialSeq: state.nextSeq };

/**
 * What the coordinator knows of a gate's resource, read at the gate's start
 * (`FenceGateClient.gateRecovery`, `GET /v1/resources/:resource/gate-recovery`).
 */
export interface CoordinatorGateView {
  /**
   * The latest fence the coordinator granted on the resource, current or ended; `holderId` is
   * `undefined` when the coordinator no longer knows it (that lease ended). `undefined` when the
   * resource was never granted.
   */
  readonly latestGrant: { readonly fence: number; readonly holderId: string | undefined } | undefined;
  /** The highest refusal seq of this gate on the resource the coordinator recorded; 0 when none. */
  readonly lastRejectionSeq: number;
}

/**
 * The state a gate starts from once it has heard the coordinator: its saved state (`undefined`
 * when its data directory was empty) raised to what the coordinator knows, never lowered.
 * - Floor: the higher fence of the two. Every fence below the latest one granted is stale by
 *   definition, so this never refuses that grant's holder. On equal fences the saved floor's holder
 *   stays, unless it is unknown and the coordinator's is known. A coordinator floor without holder
 *   is an unknown-holder floor ({@link UNKNOWN_FLOOR_HOLDER}): an equal fence is refused as a
 *   possible double grant, as for any floor of unknown holder.
 * - `nextSeq`: above both the saved one and the coordinator's `lastRejectionSeq`, so no refusal
 *   reuses a seq the coordinator already recorded (it would refuse the report as `seq-conflict`).
 * - `reportedThroughSeq` and the outbox: the saved ones (a refusal in the outbox the coordinator
 *   already has is answered `duplicate` when sent again).
 * Pure.
 * @param resource - The gate's resource.
 */
export const reconcileGateState = (
  resource: string,
  saved: GateState | undefined,
  coordinator: CoordinatorGateView,
): GateState => {
  const grant = coordinator.latestGrant;
  const granted: GateFloor | undefined =
    grant === undefined ? undefined : { fence: grant.fence, holderId: grant.holderId ?? UNKNOWN_FLOOR_HOLDER };
  const local = saved?.floor;
  const floor =
    local === undefined
      ? granted
      : granted === undefined || granted.fence < local.fence
        ? local
        : granted.fence > local.fence || local.holderId === UNKNOWN_FLOOR_HOLDER
          ? granted
          : local;
  return {
    resource,
    ...(floor === undefined ? {} : { floor }),
    nextSeq: Math.max(saved?.nextSeq ?? 1, coordinator.lastRejectionSeq + 1),
    reportedThroughSeq: saved?.reportedThroughSeq ?? 0,
    ...(saved?.outbox === undefined ? {} : { outbox: saved.outbox }),
  };
};

/** Options of {@link commitDurably}. */
export interface CommitDurablyOptions {
  /** Wall clock stamped on a refusal (epoch milliseconds, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
}

/**
 * Admits `token` at `gate` and runs `write` only after the raised floor is durable in `store`:
 * check and raise (one synchronous step, by `commit`), save, then write. A crash after the save
 * and before the write leaves a floor that no stale holder can get under after the restart; the
 * reverse order could not promise that.
 *
 * A refused token is made durable too, before the caller hears of it: the refusal's full record
 * goes into the store's outbox in the same atomic save as the raised `nextSeq`, and only then
 * does the returned promise reject with the gate's `StaleFenceError` / `DoubleGrantError`. A
 * crash at any point therefore either loses the refusal together with its seq (the writer was
 * never told, and the seq is reused) or keeps both; a reporter sends it from the outbox.
 *
 * `token` is the token the gate compares, as is: a layer that verifies signed tokens goes in
 * front of this call and passes the verified token.
 *
 * @returns What `write` returns.
 * @throws (rejects) `StaleFenceError` / `DoubleGrantError` from the gate once the refusal is
 *   durable (nothing written); what `store.save` throws (nothing written; for a refusal, the
 *   refusal stays in the store's memory and is saved by its next successful save); what `write`
 *   throws; `TypeError` / `RangeError` / `ProtocolMisuseError` for a malformed token (nothing saved).
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
export const commitDurably = async <T>(
  gate: FenceGate,
  store: FloorStore,
  token: FenceToken,
  write: () => Promise<T>,
  options: CommitDurablyOptions = {},
): Promise<T> => {
  let admitted: Promise<T>;
  try {
    admitted = gate.commit(token, async () => {
      await store.save(gateStateOf(gate));
      return write();
    });
  } catch (error) {
    if (error instanceof StaleFenceError || error instanceof DoubleGrantError) {
      const refusal: PendingRejection = { ...error.rejection, wallMillis: (options.wallClock ?? Date.now)() };
      await store.save({ ...gateStateOf(gate), outbox: [refusal] });
    }
    throw error;
  }
  return admitted;
};

/**
 * Merges two states of one gate, keeping the higher of each part and the union of the outboxes
 * (less what the merged `reportedThroughSeq` acknowledges), so saves that finish out of order
 * never lower a floor and never drop a refusal.
 * @internal
 */
export const mergeGateStates = (older: GateState | undefined, newer: GateState): GateState => {
  if (older === undefined) return { ...newer, outbox: mergeOutboxes([], newer.outbox ?? [], newer.reportedThroughSeq) };
  const floor =
    older.floor === undefined
      ? newer.floor
      : newer.floor === undefined || newer.floor.fence < older.floor.fence
        ? older.floor
        : newer.floor;
  const reportedThroughSeq = Math.max(older.reportedThroughSeq, newer.reportedThroughSeq);
  return {
    resource: newer.resource,
    ...(floor === undefined ? {} : { floor }),
    nextSeq: Math.max(older.nextSeq, newer.nextSeq),
    reportedThroughSeq,
    outbox: mergeOutboxes(older.outbox ?? [], newer.outbox ?? [], reportedThroughSeq),
  };
};

/** The union of two outboxes by seq (a seq's record never changes: the first one stays), above `reportedThroughSeq`, seq ascending. */
const mergeOutboxes = (
  older: readonly PendingRejection[],
  newer: readonly PendingRejection[],
  reportedThroughSeq: number,
): PendingRejection[] => {
  const bySeq = new Map<number, PendingRejection>();
  for (const entry of [...older, ...newer])
    if (entry.seq > reportedThroughSeq && !bySeq.has(entry.seq)) bySeq.set(entry.seq, entry);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
};
