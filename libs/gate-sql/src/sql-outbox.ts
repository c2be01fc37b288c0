/**
 * Reports a transactional gate's refusals, floor and admits to the coordinator with the SDK's own loops:
 * {@link SqlGateOutbox} is a `RejectionOutbox` (what `reportRejections` drains) and a
 * `FloorSource` (what `reportFloors` reads) over the gate's two tables. The tables may be written
 * by many processes, so the outbox re-reads them every `pollIntervalMillis`, and at once after a
 * refusal committed through the same gate object. Each floor a fenced transaction of the gate
 * object raised is reported by `reportAdmits` once it has committed.
 *
 * @see docs/sdk.md § "On the resource's side"
 */
import {
  reportAdmits,
  reportFloors,
  reportRejections,
  systemTimers,
  type AdmitReporter,
  type AdmitSink,
  type FloorReporter,
  type FloorSink,
  type FloorSource,
  type PendingRejection,
  type RejectionOutbox,
  type RejectionReporter,
  type RejectionReporterOptions,
  type RejectionSink,
  type Timers,
} from '@lease-fence/client';
import { isIntegerInRange, requireCount, type GateFloor } from 'lease-fence';
import type { SqlFenceGate } from './sql-fence-gate.js';
import type { GateRowState } from './sql-gate-driver.js';

/**
 * A gate's outbox and floor as last read from its tables. `pendingRejections()` and `floor`
 * answer from that reading (the reporters read synchronously); {@link SqlGateOutbox.refresh}
 * re-reads it. Only committed refusals are ever listed, so no seq a rollback could reuse is sent.
 */
export class SqlGateOutbox implements RejectionOutbox, FloorSource {
  /** The gate's resource. */
  readonly resource: string;
  readonly #gate: SqlFenceGate<unknown>;
  #state: GateRowState | undefined;
  readonly #listeners = new Set<() => void>();

  /** @param gate - The gate whose tables are read. Call {@link SqlGateOutbox.refresh} before use. */
  constructor(gate: SqlFenceGate<unknown>) {
    this.resource = gate.resource;
    this.#gate = gate;
  }

  /**
   * Re-reads the floor row and the outbox; tells `onPending` listeners when a refusal with a
   * higher seq than before was found.
   * @throws What the database throws (the last reading stays).
   */
  async refresh(): Promise<void> {
    const before = this.#state?.outbox.at(-1)?.seq ?? 0;
    const state = await this.#gate.driver.readState(this.resource);
    // Never step back: an acknowledgement that raced this read already dropped what it acknowledged.
    const reportedThroughSeq = Math.max(state?.reportedThroughSeq ?? 0, this.reportedThroughSeq);
    this.#state =
      state === undefined
        ? undefined
        : { ...state, reportedThroughSeq, outbox: state.outbox.filter((refusal) => refusal.seq > reportedThroughSeq) };
    if ((this.#state?.outbox.at(-1)?.seq ?? 0) > before) for (const listener of this.#listeners) safely(listener);
  }

  /** The floor as last read; `undefined` before the first admission (or the first {@link SqlGateOutbox.refresh}). */
  get floor(): GateFloor | undefined {
    return this.#state?.floor;
  }

  /** The seq of the last refusal committed (its row's `next_seq` − 1), as last read; 0 before any. */
  get committedThroughSeq(): number {
    return (this.#state?.nextSeq ?? 1) - 1;
  }

  /** Refusals with seq at or below this are acknowledged, durably. */
  get reportedThroughSeq(): number {
    return this.#state?.reportedThroughSeq ?? 0;
  }

  /** Committed refusals not yet acknowledged, seq ascending, as last read (the outbox's first page: the rest once these are acknowledged). */
  pendingRejections(): readonly PendingRejection[] {
    return this.#state?.outbox ?? [];
  }

  /**
   * Records that the coordinator acknowledged every refusal through `throughSeq` (raises
   * `reported_through_seq`, deletes those outbox rows) in one transaction.
   * @throws TypeError / RangeError (lease-fence's `requireCount`) when `throughSeq` is not a non-negative safe integer; what the database throws.
   */
  async acknowledgeRejections(throughSeq: number): Promise<void> {
    requireCount('SqlGateOutbox.acknowledgeRejections', 'throughSeq', throughSeq);
    if (throughSeq <= this.reportedThroughSeq) return;
    await this.#gate.driver.acknowledge(this.resource, throughSeq);
    const state = this.#state;
    if (state !== undefined)
      this.#state = {
        ...state,
        reportedThroughSeq: throughSeq,
        outbox: state.outbox.filter((refusal) => refusal.seq > throughSeq),
      };
  }

  /** Calls `listener` when a refresh found new refusals. @returns A function that stops the calls. */
  onPending(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** Options of {@link drainSqlGate}. */
export interface SqlGateDrainerOptions extends Omit<RejectionReporterOptions, 'pollIntervalMillis' | 'onError'> {
  /**
   * How often the gate's tables are re-read for refusals other processes committed, in
   * milliseconds. Integer ≥ 1.
   * @defaultValue 1000
   */
  readonly pollIntervalMillis?: number;
  /** Milliseconds between two floor reports (see `reportFloors`). Integer ≥ 1. @defaultValue 5000 */
  readonly floorEveryMillis?: number;
  /** Called with a failed read of the tables, a failed report, or a failed floor report (each is retried), or a failed admit report (not retried). */
  readonly onError?: (error: unknown) => void;
}

/** A running {@link drainSqlGate}. */
export interface SqlGateDrainer {
  /** The outbox being drained. */
  readonly outbox: SqlGateOutbox;
  /** The SDK's rejection reporter draining it (`flush()`, `dropped`, `reportedThroughSeq`). */
  readonly rejections: RejectionReporter;
  /** The SDK's floor reporter (total-loss recovery). */
  readonly floors: FloorReporter;
  /**
   * The SDK's admit reporter: each fence a fenced transaction of this gate object raised the
   * floor to, reported once it committed; `undefined` when the client has no `reportAdmitted`.
   */
  readonly admits: AdmitReporter | undefined;
  /** Re-reads the tables now and resolves once every refusal committed before the call is acknowledged. */
  flush(): Promise<void>;
  /** Stops every loop; resolves once they ended. Unreported refusals stay in the outbox table; unreported admits are dropped (observation only). */
  close(): Promise<void>;
}

/**
 * Drains `gate`'s outbox table to the coordinator in seq order with the SDK's
 * `reportRejections` (retried through outages, each refusal acknowledged in the table once the
 * coordinator acknowledged it; the coordinator deduplicates resends by (gate, resource, seq), so
 * several processes may drain one database), and reports the gate's floor with `reportFloors`
 * so a coordinator that lost its whole log counts above it.
 *
 * It also reports each new fence the gate admits with the SDK's `reportAdmits` (when `client`
 * has `reportAdmitted`, as a `FenceGateClient` does), so the coordinator's log shows when each
 * handover's exposure ended: after a fenced transaction that raised the floor has committed, the
 * fence is noted (constant time, never on the transaction's path) and sent in the background, one
 * report in flight at a time, fences admitted meanwhile coalesced into the highest. Only
 * transactions through this gate object are seen; another process reports its own with its own
 * drainer. A report that fails is not retried: that window stays unknown on the dashboard, never
 * wrong (the floor was durable before the report).
 *
 * @param client - A `FenceGateClient` with a gate token covering the gate's resource.
 * @throws RangeError on a bad interval (see the options).
 * @example
 * ```ts
 * const drainer = drainSqlGate(gate, new FenceGateClient({ baseUrl, token: gateToken }));
 * // … on shutdown
 * await drainer.close();
 * ```
 */
export const drainSqlGate = (
  gate: SqlFenceGate<unknown>,
  client: RejectionSink & FloorSink & Partial<AdmitSink>,
  options: SqlGateDrainerOptions = {},
): SqlGateDrainer => {
  const pollIntervalMillis = options.pollIntervalMillis ?? 1000;
  if (!isIntegerInRange(pollIntervalMillis, 1)) {
    throw new RangeError(
      `drainSqlGate: pollIntervalMillis must be a positive integer (milliseconds), got ${String(pollIntervalMillis)}`,
    );
  }
  const { pollIntervalMillis: _poll, floorEveryMillis, onError: _onError, ...reporterOptions } = options;
  if (floorEveryMillis !== undefined && !isIntegerInRange(floorEveryMillis, 1)) {
    throw new RangeError(
      `drainSqlGate: floorEveryMillis must be a positive integer (milliseconds), got ${String(floorEveryMillis)}`,
    );
  }
  const timers: Timers = options.timers ?? systemTimers;
  const onError = options.onError ?? (() => undefined);
  const outbox = new SqlGateOutbox(gate);
  const stopping = new AbortController();
  // One read at a time: a burst of committed refusals asks for many, which would each take a
  // connection from the writers' pool; those asked for during a read make one more read after it.
  let reading: Promise<void> | undefined;
  let readAgain = false;
  const refresh = (): Promise<void> => {
    if (reading !== undefined) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        await outbox.refresh().catch((error: unknown) => safely(() => onError(error)));
      } while (readAgain);
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const rejections = reportRejections(outbox, client, {
    ...reporterOptions,
    pollIntervalMillis,
    onError: (error) => onError(error),
  });
  const stopListening = gate.onRefusalCommitted(() => void refresh());
  const admits =
    typeof client.reportAdmitted === 'function'
      ? reportAdmits(client as AdmitSink, { onError: (error) => safely(() => onError(error)) })
      : undefined;
  const stopAdmits = admits === undefined ? () => undefined : gate.onFloorRaised(admits.admitted);
  // Floors are reported from the outbox's reading of the table, so the floor reporter starts
  // after the first read (its first round would otherwise find no floor and wait a whole interval).
  let floorReporter: FloorReporter | undefined;
  const floors: FloorReporter = {
    get rounds() {
      return floorReporter?.rounds ?? 0;
    },
    stop: async () => {
      await floorReporter?.stop();
    },
  };
  const polling = (async () => {
    while (!stopping.signal.aborted) {
      await refresh();
      if (floorReporter === undefined && !stopping.signal.aborted) {
        floorReporter = reportFloors([outbox], client, {
          timers,
          onError: (error) => onError(error),
          ...(floorEveryMillis === undefined ? {} : { everyMillis: floorEveryMillis }),
        });
      }
      await timers.sleep(pollIntervalMillis, stopping.signal).catch(() => undefined);
    }
  })();
  return {
    outbox,
    rejections,
    floors,
    admits,
    flush: async () => {
      // A read holds the outbox's first page: read again until no refusal committed before the call is pending.
      await outbox.refresh();
      const throughSeq = outbox.committedThroughSeq;
      while ((outbox.pendingRejections()[0]?.seq ?? Infinity) <= throughSeq) {
        await rejections.flush();
        await outbox.refresh();
      }
    },
    close: async () => {
      stopListening();
      stopAdmits();
      stopping.abort(new Error('drainSqlGate: closed'));
      await Promise.all([polling, rejections.close(), admits?.stop()]);
      await floors.stop();
    },
  };
};

const safely = (fn: () => void): void => {
  try {
    fn();
  } catch {
    // observers never change what is reported
  }
};
