/**
 * Prometheus instruments of the coordinator (prom-client), on a registry of their own.
 * Durations are exported in seconds, Prometheus's base unit (converted once, here, from the
 * coordinator's milliseconds).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CoordinatorCommand } from '@lease-fence/coordinator-core';
import type { CoordinatorEvent } from '@lease-fence/protocol';
import { type OutcomeReport, SUCCESS_TOTAL_OF } from '../coordinator/outcome-counters.js';

/** The coordinator's metrics; one instance per process, exposed at `GET /metrics`. */
export class CoordinatorMetrics {
  /** The registry `/metrics` renders (default Node process metrics included). */
  readonly registry = new Registry();
  private readonly grants: Counter;
  private readonly renewals: Counter;
  private readonly releases: Counter;
  private readonly rejections: Counter;
  private readonly rejectionsRecorded: Counter;
  private readonly admits: Counter;
  private readonly rejectionGaps: Counter;
  private readonly rejectionsMissing: Counter;
  private readonly denials: Counter<'command' | 'reason'>;
  private readonly appendSeconds: Histogram;
  private readonly batchCommands: Histogram;
  private readonly batchEvents: Histogram;
  private readonly recoverySeconds: Gauge;
  private readonly recoveryEvents: Gauge;
  private readonly streamClients: Gauge;
  private readonly slowConsumers: Counter;
  private readonly unresponsiveClients: Counter;
  private readPosition: () => number | undefined = () => undefined;

  constructor() {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the gauge's collect() has its own `this`
    const metrics = this;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.grants = new Counter({
      name: 'lease_fence_grants_total',
      help: 'Acquire commands answered with a grant (idempotent replays included).',
      registers,
    });
    this.renewals = new Counter({
      name: 'lease_fence_renewals_total',
      help: 'Renew commands that extended a lease.',
      registers,
    });
    this.releases = new Counter({
      name: 'lease_fence_releases_total',
      help: 'Release commands that released a lease.',
      registers,
    });
    this.rejections = new Counter({
      name: 'lease_fence_rejections_total',
      help: 'Fence rejection reports answered ok, a repeated report included (lease_fence_rejections_recorded_total counts each refusal once).',
      registers,
    });
    this.rejectionsRecorded = new Counter({
      name: 'lease_fence_rejections_recorded_total',
      help: 'Gate refusals appended to the log (FenceRejected events): each refusal once, as the log, the CLI and the dashboard count them.',
      registers,
    });
    this.admits = new Counter({ name: 'lease_fence_admits_total', help: 'Fence admits reported by gates.', registers });
    this.rejectionGaps = new Counter({
      name: 'lease_fence_rejection_gaps_total',
      help: 'RejectionsMissing events appended: gate reports whose seq skipped refusals that never reached the log.',
      registers,
    });
    this.rejectionsMissing = new Counter({
      name: 'lease_fence_rejections_missing_total',
      help: 'Gate refusals (seqs) recorded as missing by RejectionsMissing events: refused by a gate, never reported.',
      registers,
    });
    this.denials = new Counter({
      name: 'lease_fence_denials_total',
      help: 'Denied commands by command and outcome reason (denials are not in the log).',
      labelNames: ['command', 'reason'],
      registers,
    });
    this.appendSeconds = new Histogram({
      name: 'lease_fence_append_duration_seconds',
      help: 'Latency of one group-commit append to the event log, until durable.',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.batchCommands = new Histogram({
      name: 'lease_fence_append_batch_commands',
      help: 'Commands acknowledged by one group-commit append.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    });
    this.batchEvents = new Histogram({
      name: 'lease_fence_append_batch_events',
      help: 'Events written by one group-commit append.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    });
    this.recoverySeconds = new Gauge({
      name: 'lease_fence_recovery_duration_seconds',
      help: 'How long recovery (snapshot + replay) took at this boot.',
      registers,
    });
    this.recoveryEvents = new Gauge({
      name: 'lease_fence_recovery_events_replayed',
      help: 'Events replayed by recovery at this boot.',
      registers,
    });
    new Gauge({
      name: 'lease_fence_log_position',
      help: 'Log version the coordinator has applied.',
      registers,
      collect() {
        const position = metrics.readPosition();
        if (position !== undefined) this.set(position);
      },
    });
    this.streamClients = new Gauge({
      name: 'lease_fence_stream_clients',
      help: 'Open WebSocket stream connections.',
      registers,
    });
    this.slowConsumers = new Counter({
      name: 'lease_fence_stream_slow_consumer_disconnects_total',
      help: 'Stream clients disconnected because their unsent bytes exceeded the bound.',
      registers,
    });
    this.unresponsiveClients = new Counter({
      name: 'lease_fence_stream_unresponsive_terminations_total',
      help: 'Stream clients terminated because they did not answer a WebSocket ping (no pong) by the next one.',
      registers,
    });
  }

  /** Sets where the `lease_fence_log_position` gauge reads the coordinator's applied log position. */
  readPositionFrom(read: () => number | undefined): void {
    this.readPosition = read;
  }

  /** The coordinator's `onOutcome` hook: counts successes by command ({@link SUCCESS_TOTAL_OF}) and denials by reason. */
  recordOutcome(command: CoordinatorCommand['type'], outcome: OutcomeReport): void {
    if (!outcome.ok) {
      this.denials.inc({ command, reason: outcome.reason ?? 'unknown' });
      return;
    }
    const counter = SUCCESS_TOTAL_OF[command];
    if (counter !== undefined) this[counter].inc();
  }

  /**
   * The coordinator's `onAppend` hook: one group commit of `commands` commands and `events`
   * events that took `millis`; counts the `FenceRejected` and `RejectionsMissing` among the
   * `appended` events (a repeated report appends nothing, so each refusal counts once).
   */
  recordAppend(info: {
    readonly events: number;
    readonly commands: number;
    readonly millis: number;
    readonly appended: readonly CoordinatorEvent[];
  }): void {
    this.appendSeconds.observe(info.millis / 1000);
    this.batchCommands.observe(info.commands);
    this.batchEvents.observe(info.events);
    for (const event of info.appended) {
      if (event.type === 'FenceRejected') this.rejectionsRecorded.inc();
      if (event.type !== 'RejectionsMissing') continue;
      this.rejectionGaps.inc();
      this.rejectionsMissing.inc(event.data.throughSeq - event.data.fromSeq + 1);
    }
  }

  /** Records how recovery went at this boot (`replayMillis` in milliseconds). */
  recordRecovery(recovery: { readonly replayMillis: number; readonly eventsReplayed: number }): void {
    this.recoverySeconds.set(recovery.replayMillis / 1000);
    this.recoveryEvents.set(recovery.eventsReplayed);
  }

  /** A stream connection opened (+1) or closed (-1). */
  streamClientDelta(delta: 1 | -1): void {
    this.streamClients.inc(delta);
  }

  /** A stream client was disconnected as a slow consumer. */
  slowConsumerDisconnected(): void {
    this.slowConsumers.inc();
  }

  /** A stream client was terminated for not answering a WebSocket ping by the next one. */
  unresponsiveClientTerminated(): void {
    this.unresponsiveClients.inc();
  }
}
