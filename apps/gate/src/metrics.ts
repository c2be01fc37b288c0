/**
 * The sidecar's Prometheus metrics (prom-client), served at `/.well-known/lease-fence-gate/metrics`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RejectionOutbox } from '@lease-fence/client';

/** How often the event loop's delay is sampled for `nodejs_eventloop_lag_*` (milliseconds). */
const EVENT_LOOP_SAMPLE_MILLIS = 100;

/** The sidecar's metrics and the registry serving them. */
export interface GateMetrics {
  readonly registry: Registry;
  /** `lease_fence_gate_admitted_total`: writes admitted (floor durable) and forwarded. */
  readonly admitted: Counter<never>;
  /** `lease_fence_gate_refused_total{reason}`: requests the gate answered itself, by the `reason` of its body. */
  readonly refused: Counter<'reason'>;
  /** `lease_fence_gate_forwarded_seconds`: from forwarding a request to the end of the upstream's reply (seconds). */
  readonly forwardedSeconds: Histogram<never>;
}

/**
 * Creates the metrics; `lease_fence_gate_outbox_backlog` (refusals not yet acknowledged by the
 * coordinator) is read from `outbox` at each scrape.
 */
export function createGateMetrics(resource: string, outbox: RejectionOutbox): GateMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ resource });
  // prom-client samples the event loop's delay with a timer every `eventLoopMonitoringPrecision`
  // ms (10 by default): 100 wake-ups a second, about 7 ms of CPU each second on the benchmark's
  // machine even with no request, which bench:gate charged to every request. Every 100 ms keeps
  // the lag metrics (min, max, percentiles of the delay, scraped every few seconds) at a tenth of that.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MILLIS });
  const admitted = new Counter({
    name: 'lease_fence_gate_admitted_total',
    help: 'Writes admitted (floor durable) and forwarded upstream.',
    registers: [registry],
  });
  const refused = new Counter({
    name: 'lease_fence_gate_refused_total',
    help: 'Requests answered by the gate itself, by reason (stale-fence, double-grant, invalid-token, keys-unavailable, coordinator-floor-unavailable, floor-store-unavailable, upstream-unreachable, upstream-timeout, bad-request, closing).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const forwardedSeconds = new Histogram({
    name: 'lease_fence_gate_forwarded_seconds',
    help: 'Time from forwarding a request to the end of the upstream reply, seconds.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'lease_fence_gate_outbox_backlog',
    help: 'Refusals durable in the outbox and not yet acknowledged by the coordinator.',
    registers: [registry],
    collect() {
      this.set(outbox.pendingRejections().length);
    },
  });
  return { registry, admitted, refused, forwardedSeconds };
}
