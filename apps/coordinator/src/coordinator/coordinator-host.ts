/**
 * Owns the process's {@link DurableCoordinator}: opens it (recovery) in the background once the
 * application has bootstrapped, so `/healthz` answers and `/readyz` says `recovering` meanwhile;
 * hands it to the routes; closes it at shutdown before the event log is closed.
 *
 * @see DESIGN.md § "The event-sourced coordinator" (recovery, single writer)
 */
import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { CoordinatorUnavailableError, DurableCoordinator, type EventLog } from '@lease-fence/coordinator-core';
import type { ReadinessReply } from '@lease-fence/protocol';
import { createMonotonicClock } from 'lease-fence';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { EVENT_LOG } from '../event-log/event-log.tokens.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { LOGGER } from '../logging/logger.js';
import { OutcomeCounters } from './outcome-counters.js';

/** How recovery ended: the coordinator, or why there is none. */
export type RecoveryResult = { readonly ok: true; readonly coordinator: DurableCoordinator } | { readonly ok: false; readonly error: unknown };

/** Holds the coordinator of this boot. */
@Injectable()
export class CoordinatorHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** This boot's id: the clock domain of every instant the coordinator reads. */
  readonly bootId = randomUUID();
  private coordinator: DurableCoordinator | undefined;
  private failure: unknown;
  private recovery: Promise<RecoveryResult> | undefined;

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: CoordinatorMetrics,
    private readonly counters: OutcomeCounters,
  ) {
    metrics.readPositionFrom(() => this.coordinator?.position);
  }

  /** Starts recovery without waiting for it; see {@link recovered}. */
  onApplicationBootstrap(): void {
    this.recovered();
  }

  /**
   * Resolves once recovery has finished, with the coordinator or the error that stopped it.
   * Starts recovery on the first call. Never rejects.
   */
  recovered(): Promise<RecoveryResult> {
    this.recovery ??= this.open();
    return this.recovery;
  }

  private async open(): Promise<RecoveryResult> {
    try {
      const coordinator = await DurableCoordinator.open({
        log: this.log,
        namespace: this.config.namespace,
        clock: createMonotonicClock(this.bootId),
        defaultTtlMillis: this.config.defaultTtlMillis,
        minTtlMillis: this.config.minTtlMillis,
        maxTtlMillis: this.config.maxTtlMillis,
        snapshotEvery: this.config.snapshotEvery,
        onAppend: (info) => this.metrics.recordAppend(info),
        onOutcome: (command, outcome) => {
          this.counters.record(command, outcome);
          this.metrics.recordOutcome(command, outcome);
        },
        onStatusChange: (status, cause) => {
          if (status === 'closed') this.logger.info({ status }, 'coordinator closed');
          else this.logger.error({ status, err: cause }, `coordinator ${status}: it no longer grants; /readyz answers 503`);
        },
        onSnapshot: (result) => {
          if (result.error !== undefined) this.logger.warn({ err: result.error, position: result.position }, 'snapshot failed (the log is complete; recovery replays more)');
          else this.logger.debug({ position: result.position }, 'snapshot saved');
        },
      });
      this.coordinator = coordinator;
      this.metrics.recordRecovery(coordinator.recovery);
      return { ok: true, coordinator };
    } catch (error) {
      this.failure = error;
      return { ok: false, error };
    }
  }

  /**
   * The coordinator, for a command or a read.
   * @throws {@link CoordinatorUnavailableError} (`recovering`, or `unhealthy` when recovery failed) while there is none;
   *   a superseded or unhealthy coordinator is returned and refuses commands itself.
   */
  current(): DurableCoordinator {
    if (this.coordinator !== undefined) return this.coordinator;
    throw new CoordinatorUnavailableError(this.failure === undefined ? 'recovering' : 'unhealthy');
  }

  /** The log position the coordinator has applied, or `undefined` before recovery finished. */
  position(): number | undefined {
    return this.coordinator?.position;
  }

  /** `/readyz`: ready only once recovery has finished and while the coordinator may grant. */
  readiness(): ReadinessReply {
    const coordinator = this.coordinator;
    if (coordinator === undefined) {
      return this.failure === undefined
        ? { ready: false, status: 'recovering', reason: 'recovery has not finished', bootId: this.bootId }
        : { ready: false, status: 'failed', reason: `recovery failed: ${describe(this.failure)}`, bootId: this.bootId };
    }
    const status = coordinator.status;
    const reason = status === 'superseded'
      ? 'another coordinator appended to the log: this one no longer grants'
      : status === 'unhealthy'
        ? 'an append to the event log failed: this coordinator no longer grants'
        : status === 'closed' ? 'shutting down' : undefined;
    return { ready: status === 'ready', status, ...(reason === undefined ? {} : { reason }), bootId: this.bootId, position: coordinator.position };
  }

  /** Stops the coordinator (timers stop, in-flight appends finish) before the event log is closed. */
  async beforeApplicationShutdown(): Promise<void> {
    const result = await this.recovery;
    if (result?.ok === true) await result.coordinator.close();
  }
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
