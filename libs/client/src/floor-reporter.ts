/**
 * Keeps the coordinator told of a resource's gate floors, so it survives the loss of its whole
 * log: a coordinator restarted on an empty log would start again at fence 1, below every floor,
 * and could issue a fence already issued before the loss. Each floor report above what the log
 * holds raises the coordinator's fence counter above it (`FenceFloorReported`); a report of a
 * floor the log knows of appends nothing, so reporting again and again is cheap and safe.
 *
 * @see docs/sdk.md § "Surviving the loss of the whole log"
 */
import type { FenceGate } from 'lease-fence';
import type { FenceGateClient } from './fence-gate-client.js';
import { systemTimers, type Timers } from './timers.js';

/** Where floors go: {@link FenceGateClient.reportFloor}. */
export type FloorSink = Pick<FenceGateClient, 'reportFloor'>;

/** The gates whose floors are reported: `resource` and `floor` are all that is read. */
export type FloorSource = Pick<FenceGate, 'resource' | 'floor'>;

/** Options of {@link reportFloors}. */
export interface FloorReporterOptions {
  /**
   * Milliseconds between two rounds of reports (the first round starts at once). After a total
   * loss of the coordinator's log, grants made before the next round may repeat fences issued
   * before the loss (this gate refuses those at or below its floor). Positive integer.
   * @defaultValue 5000
   */
  readonly everyMillis?: number;
  /** Called with each failed report (it is tried again next round). @defaultValue ignore */
  readonly onError?: (error: unknown, resource: string) => void;
  /** Called with each report the coordinator raised its fence counter for. */
  readonly onRaised?: (resource: string, fenceCounter: number) => void;
  /** @defaultValue systemTimers */
  readonly timers?: Timers;
}

/** A running {@link reportFloors} loop. */
export interface FloorReporter {
  /** Rounds completed so far (each reports every gate that has a floor once). */
  readonly rounds: number;
  /** Stops the loop; resolves once the round in flight, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Reports each gate's floor (`gate.floor`, skipped while it has none) to the coordinator now and
 * then every `everyMillis`, until stopped. Failures are passed to `onError` and retried in the
 * next round; they never stop the loop.
 *
 * @param gates - The resource's gates, read afresh every round (their floors rise as they admit).
 * @param sink - Usually a {@link FenceGateClient} with a gate token covering every gate's resource.
 * @throws RangeError if `everyMillis` is not a positive integer.
 * @example
 * ```ts
 * const floors = reportFloors([gate], new FenceGateClient({ baseUrl, token: gateToken }));
 * // … on shutdown
 * await floors.stop();
 * ```
 */
export function reportFloors(
  gates: readonly FloorSource[],
  sink: FloorSink,
  options: FloorReporterOptions = {},
): FloorReporter {
  const everyMillis = options.everyMillis ?? 5000;
  if (!Number.isSafeInteger(everyMillis) || everyMillis < 1) {
    throw new RangeError(
      `reportFloors: everyMillis must be a positive integer (milliseconds), got ${String(everyMillis)}`,
    );
  }
  const timers = options.timers ?? systemTimers;
  const stopping = new AbortController();
  let rounds = 0;
  const loop = (async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      for (const gate of gates) {
        const floor = gate.floor;
        if (floor === undefined || stopping.signal.aborted) continue;
        try {
          const { raised, fenceCounter } = await sink.reportFloor(gate.resource, floor, { signal: stopping.signal });
          if (raised) options.onRaised?.(gate.resource, fenceCounter);
        } catch (error) {
          if (!stopping.signal.aborted) options.onError?.(error, gate.resource);
        }
      }
      rounds += 1;
      await timers.sleep(everyMillis, stopping.signal).catch(() => undefined);
    }
  })();
  return {
    get rounds() {
      return rounds;
    },
    stop: async () => {
      stopping.abort(new Error('reportFloors: stopped'));
      await loop;
    },
  };
}
