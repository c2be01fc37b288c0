/**
 * The sidecar's status reports: now and then it tells the coordinator what it observes about
 * itself — its floor (holder, fence), outbox backlog, the refusals it ever made (durable: its
 * last refusal seq, so a restart does not reset it) and the invalid tokens it answered since it
 * started — over its gate link as a `status` frame, or with
 * `POST /v1/gates/status` while the link is not open. The coordinator keeps the latest in memory
 * and lists it at `GET /v1/gates` (the dashboard's gates panel); nothing is appended to its log.
 *
 * The invalid-token count is read from the metrics the gate server already keeps
 * (`lease_fence_gate_refused_total{reason="invalid-token"}`), so there is one count of it.
 */
import type { FenceGateClient, GateLink, RejectionOutbox } from '@lease-fence/client';
import type { GateStatusBody } from '@lease-fence/protocol';
import type { FenceGate } from 'lease-fence';
import type { GateMetrics } from './metrics.js';

/** What a status report is read from. */
export interface GateStatusSource {
  readonly gate: FenceGate;
  readonly outbox: RejectionOutbox;
  readonly metrics: GateMetrics;
}

/** The `refused_total` reason of an invalid token (401). */
const INVALID_TOKEN = 'invalid-token';

/**
 * Reads the gate's status now.
 * @param nowMillis - The gate's wall clock (epoch milliseconds), sent as `reportedAtMillis`.
 */
export async function collectGateStatus(source: GateStatusSource, nowMillis: number): Promise<GateStatusBody> {
  const { values } = await source.metrics.refused.get();
  const invalidTokens = values
    .filter(({ labels }) => labels.reason === INVALID_TOKEN)
    .reduce((sum, { value }) => sum + value, 0);
  const floor = source.gate.floor;
  return {
    resources: [
      {
        resource: source.gate.resource,
        floor: floor === undefined ? null : { holderId: floor.holderId, fence: floor.fence },
        outboxBacklog: source.outbox.pendingRejections().length,
        // Refusals are numbered 1, 2, … without gaps and the seq is durable before each 409.
        refusals: source.gate.nextSeq - 1,
        invalidTokens,
      },
    ],
    reportedAtMillis: nowMillis,
  };
}

/** Options of {@link startStatusReports}. */
export interface StatusReportsOptions {
  /** Reads the status to send (e.g. {@link collectGateStatus}). */
  readonly collect: () => Promise<GateStatusBody>;
  /** Sends over the gate link when it is open. */
  readonly link: Pick<GateLink, 'sendStatus'>;
  /** Sends with `POST /v1/gates/status` when the link is not open. */
  readonly client: Pick<FenceGateClient, 'reportStatus'>;
  /** Milliseconds between two reports (the first is sent at once). */
  readonly everyMillis: number;
  /** A report that could not be sent (the next one is tried on schedule). */
  readonly onError?: (error: unknown) => void;
}

/** Running status reports. */
export interface StatusReports {
  /** Sends a report now (outside the schedule); resolves once sent or failed. */
  reportNow(): Promise<void>;
  /** Stops the schedule; resolves once a report in flight is done. Idempotent. */
  stop(): Promise<void>;
}

/** Starts reporting the gate's status every `everyMillis`, the first report at once. */
export function startStatusReports(options: StatusReportsOptions): StatusReports {
  let inFlight: Promise<void> = Promise.resolve();
  let stopped = false;
  const report = async (): Promise<void> => {
    try {
      const status = await options.collect();
      if (!options.link.sendStatus(status)) await options.client.reportStatus(status);
    } catch (error) {
      options.onError?.(error);
    }
  };
  const tick = (): Promise<void> => {
    // One report at a time: a slow POST is not overtaken by the next one.
    inFlight = inFlight.then(() => (stopped ? undefined : report()));
    return inFlight;
  };
  const timer = setInterval(() => void tick(), options.everyMillis);
  timer.unref();
  void tick();
  return {
    reportNow: tick,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
