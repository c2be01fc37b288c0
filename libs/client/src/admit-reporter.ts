/**
 * Tells the coordinator when a gate's floor first reaches a new fence, so the log shows when a
 * handover's exposure ended: between a grant and the moment the resource's gate admits the new
 * fence, a write of the previous holder would still be admitted (docs/dashboard.md § Exposure at
 * handovers). Without this report the log only learns of it when the gate refuses the old holder,
 * so most windows stay unknown.
 *
 * The report is observation, not part of the safety argument: the floor is already durable at
 * the gate before the write is forwarded, and the coordinator appends `FenceAdmitted` for a fence
 * it issued. A report lost to an outage leaves that window unknown, never wrong; the time the log
 * records is when the coordinator received it, so a measured window is an upper bound.
 */
import type { FenceToken } from 'lease-fence';
import type { FenceGateClient } from './fence-gate-client.js';

/** Where admits go: {@link FenceGateClient.reportAdmitted}. */
export type AdmitSink = Pick<FenceGateClient, 'reportAdmitted'>;

/** Options of {@link reportAdmits}. */
export interface AdmitReporterOptions {
  /** The highest fence already admitted per resource (a restarted gate's restored floors): not reported again. */
  readonly admittedFences?: ReadonlyMap<string, number>;
  /** Called with each report that failed after the client's own retries (it is not retried: observation only). */
  readonly onError?: (error: unknown, token: FenceToken) => void;
  /** Called with each report the coordinator acknowledged. */
  readonly onReported?: (token: FenceToken) => void;
}

/** A running {@link reportAdmits} reporter. */
export interface AdmitReporter {
  /**
   * Notes that the gate admitted `token` (its floor is durable at `token.fence`). Constant time;
   * never waits for the coordinator. A fence at or below the highest one noted for its resource is
   * ignored, so calling it for every admitted write is cheap.
   */
  admitted(token: FenceToken): void;
  /** Stops reporting; resolves once the reports in flight have ended. Later `admitted` calls are ignored. */
  stop(): Promise<void>;
}

/** One resource's reports: the highest fence noted, the one waiting to be sent, the send in flight. */
interface ResourceReports {
  highestFence: number;
  waiting: FenceToken | undefined;
  inFlight: Promise<void> | undefined;
}

/**
 * Reports each new fence a gate admits to the coordinator (`POST /v1/resources/:resource/admit`),
 * at most one report in flight per resource; fences admitted meanwhile are coalesced into one
 * report of the highest.
 *
 * @param sink - Usually a {@link FenceGateClient} with a gate token covering the gate's resources.
 * @example
 * ```ts
 * const admits = reportAdmits(new FenceGateClient({ baseUrl, token: gateToken }));
 * // after each admitted write: admits.admitted(token);
 * await admits.stop();
 * ```
 */
export function reportAdmits(sink: AdmitSink, options: AdmitReporterOptions = {}): AdmitReporter {
  const stopping = new AbortController();
  const byResource = new Map<string, ResourceReports>();
  for (const [resource, fence] of options.admittedFences ?? [])
    byResource.set(resource, { highestFence: fence, waiting: undefined, inFlight: undefined });

  const drain = async (reports: ResourceReports): Promise<void> => {
    while (reports.waiting !== undefined && !stopping.signal.aborted) {
      const token = reports.waiting;
      reports.waiting = undefined;
      try {
        await sink.reportAdmitted(token, { signal: stopping.signal });
        options.onReported?.(token);
      } catch (error) {
        if (!stopping.signal.aborted) options.onError?.(error, token);
      }
    }
    reports.inFlight = undefined;
  };

  return {
    admitted(token) {
      if (stopping.signal.aborted) return;
      let reports = byResource.get(token.resource);
      if (reports === undefined) {
        reports = { highestFence: 0, waiting: undefined, inFlight: undefined };
        byResource.set(token.resource, reports);
      }
      if (token.fence <= reports.highestFence) return;
      reports.highestFence = token.fence;
      reports.waiting = token;
      reports.inFlight ??= drain(reports);
    },
    stop: async () => {
      stopping.abort(new Error('reportAdmits: stopped'));
      await Promise.all([...byResource.values()].map((reports) => reports.inFlight));
    },
  };
}
