/**
 * The Nest provider of this process's coordinator: a thin wrapper around coordinator-core's
 * `CoordinatorSupervisor` (which holds the policy: re-open with backoff, fence burning after a
 * failed append, standby takeover; see `libs/coordinator-core/src/supervisor/coordinator-supervisor.ts`).
 * It wires the supervisor to the configuration, the gate links (fence-first), pino (one log line
 * per supervisor event) and prom-client (appends, outcomes, recoveries), and closes it at
 * shutdown before the event log is closed.
 */
import { type BeforeApplicationShutdown, Inject, Injectable, Optional } from '@nestjs/common';
import {
  CoordinatorSupervisor,
  type DurableCoordinator,
  type EventLog,
  type RecoveryResult,
  type SupervisedCoordinatorOptions,
  type SupervisorEvent,
  type SupervisorState,
} from '@lease-fence/coordinator-core';
import { type CoordinatorEvent, type ReadinessReply, resourceMatches } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { EVENT_LOG } from '../event-log/event-log.tokens.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { LOGGER } from '../logging/logger.js';
import { GateLinks } from '../gate-link/gate-links.js';
import { GrantSigner, grantsOf } from '../signing/grant-signer.js';
import { OutcomeCounters } from './outcome-counters.js';

/** Holds the coordinator of this process (through a `CoordinatorSupervisor`) for the routes, the stream and `/readyz`. */
@Injectable()
export class CoordinatorHost implements BeforeApplicationShutdown {
  private readonly supervisor: CoordinatorSupervisor;

  constructor(
    @Inject(EVENT_LOG) log: EventLog,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: CoordinatorMetrics,
    counters: OutcomeCounters,
    @Optional() private readonly gateLinks?: GateLinks,
    @Optional() private readonly signer?: GrantSigner,
  ) {
    this.supervisor = new CoordinatorSupervisor({
      log,
      role: config.role,
      ...(config.role === 'standby' ? { takeoverAfterMillis: config.takeoverAfterMillis } : {}),
      reopenInitialDelayMillis: config.reopenInitialDelayMillis,
      reopenMaxDelayMillis: config.reopenMaxDelayMillis,
      coordinator: this.coordinatorOptions(counters),
      observer: (event) => this.report(event),
    });
    metrics.readPositionFrom(() => this.supervisor.position());
  }

  /**
   * Starts the supervisor on the first call (`main.ts` calls it once the port is bound, so a
   * process that cannot listen exits without having appended to the log), and resolves once the
   * coordinator is ready for the first time or recovery failed for good. Never rejects.
   */
  recovered(): Promise<RecoveryResult> {
    return this.supervisor.recovered();
  }

  /** Where the supervisor is now. */
  get state(): SupervisorState {
    return this.supervisor.state;
  }

  /** Calls `listener` after every transition; returns a function that removes it. */
  onStateChange(listener: (state: SupervisorState) => void): () => void {
    return this.supervisor.onStateChange(listener);
  }

  /** The boot id (clock domain) of the coordinator serving, being opened, or that served last. */
  get bootId(): string {
    return this.supervisor.bootId;
  }

  /**
   * The coordinator, for a command or a read.
   * @throws what `CoordinatorSupervisor.current` throws (`CoordinatorNotServingError`,
   *   `CoordinatorUnavailableError`, `EventLogUnavailableError`): the filter answers each with 503.
   */
  current(): DurableCoordinator {
    return this.supervisor.current();
  }

  /** The log position the last coordinator acknowledged (a standby's: the position it has seen), or `undefined` before any. */
  position(): number | undefined {
    return this.supervisor.position();
  }

  /** `/readyz`: ready only while a coordinator serves; otherwise the status (`recovering`, `standby`, …) and `<reason>: <detail>`. */
  readiness(): ReadinessReply {
    return this.supervisor.readiness();
  }

  /** Stops retrying and following, and closes the coordinator (in-flight appends finish) before the event log is closed. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.supervisor.close();
  }

  /** The options of every coordinator the supervisor opens, with the metrics and logging hooks. */
  private coordinatorOptions(counters: OutcomeCounters): SupervisedCoordinatorOptions {
    const { config } = this;
    return {
      namespace: config.namespace,
      defaultTtlMillis: config.defaultTtlMillis,
      minTtlMillis: config.minTtlMillis,
      maxTtlMillis: config.maxTtlMillis,
      snapshotEvery: config.snapshotEvery,
      checkpointIntervalMillis: config.checkpointIntervalMillis,
      heartbeat: config.heartbeat,
      floorWaitMillis: config.floorWaitMillis,
      lostFenceMarginFences: config.lostFenceMarginFences,
      ...this.fenceFirstOptions(),
      lockDelays: config.lockDelays,
      // The grants are signed (on the signer's worker) while their append is committed; a reply
      // takes its token only once its outcome resolved (`leases/lease-operations.ts`).
      ...(this.signer === undefined
        ? {}
        : { onAppendPosted: (events: readonly CoordinatorEvent[]) => this.signer!.presign(grantsOf(events)) }),
      onAppend: (info) => {
        this.metrics.recordAppend(info);
        for (const event of info.appended) {
          if (event.type !== 'RejectionsMissing') continue;
          const { gateId, resource, fromSeq, throughSeq, reportedSeq } = event.data;
          this.logger.warn(
            { gateId, resource, fromSeq, throughSeq, reportedSeq },
            `refusals missing: gate ${gateId} on ${resource} reported #${reportedSeq}, but #${fromSeq}..#${throughSeq} never reached the log (RejectionsMissing)`,
          );
        }
      },
      onOutcome: (command, outcome) => {
        counters.record(command, outcome);
        this.metrics.recordOutcome(command, outcome);
      },
      onSnapshot: (result) => {
        if (result.error !== undefined)
          this.logger.warn(
            { err: result.error, position: result.position },
            'snapshot failed (the log is complete; recovery replays more)',
          );
        else this.logger.debug({ position: result.position }, 'snapshot saved');
      },
    };
  }

  /** Fence-first handover for `LEASE_FENCE_FENCE_FIRST`'s resources, through the gate links; `{}` when none is configured. */
  private fenceFirstOptions(): Pick<SupervisedCoordinatorOptions, 'fenceFirst'> {
    const { fenceFirstPatterns: patterns, fenceFirstTimeoutMillis: timeoutMillis } = this.config;
    const links = this.gateLinks;
    if (patterns.length === 0 || links === undefined) return {};
    return {
      fenceFirst: {
        appliesTo: (resource) => patterns.some((pattern) => resourceMatches(pattern, resource)),
        timeoutMillis,
        admit: (request) => links.admit(request),
      },
    };
  }

  /** One log line (and, for a new coordinator, the recovery metrics) per supervisor event. */
  private report(event: SupervisorEvent): void {
    const { logger } = this;
    switch (event.type) {
      case 'serving': {
        this.metrics.recordRecovery(event.recovery);
        const { coordinator } = event;
        const message = event.tookOver
          ? 'standby: took over the log'
          : event.attempt > 1
            ? 'coordinator re-opened'
            : undefined;
        if (message !== undefined)
          logger.info(
            {
              bootId: coordinator.bootId,
              position: coordinator.position,
              issuedFence: coordinator.issuedFence,
              recovery: event.recovery,
            },
            message,
          );
        return;
      }
      case 'stopped':
        this.signer?.dropPresigned(); // its appends in flight are never acknowledged
        if (event.status === 'superseded') {
          logger.error(
            { err: event.cause, bootId: event.bootId },
            'coordinator superseded: another coordinator appended to the log; it no longer grants and is not retried',
          );
        } else {
          logger.error(
            { err: event.cause, bootId: event.bootId, burnFencesThrough: event.burnFencesThrough },
            'coordinator unhealthy: it no longer grants; it is re-opened once the event log answers',
          );
        }
        return;
      case 'superseded-while-opening':
        logger.error(
          { err: event.error },
          'coordinator superseded while opening: another coordinator appended to the log; not retrying',
        );
        return;
      case 'open-failed':
        if (event.attempt > 1)
          logger.error(
            { err: event.error, attempt: event.attempt },
            `re-opening the coordinator failed for good: ${describe(event.error)}; not retrying`,
          );
        return;
      case 'waiting-for-log':
        logger.warn(
          { err: event.cause, failures: event.failures, delayMillis: event.delayMillis },
          `event log unavailable: next attempt in ${event.delayMillis} ms`,
        );
        return;
      case 'log-answers':
        logger.info({ failures: event.failures }, 'event log answers again: re-opening the coordinator');
        return;
      case 'coordinator-closed':
        logger.info({ status: 'closed', bootId: event.bootId }, 'coordinator closed');
        return;
      case 'standby-following':
        logger.info(
          { takeoverAfterMillis: event.takeoverAfterMillis, heartbeat: this.config.heartbeat },
          'standby: following the log; commands are refused until it takes over',
        );
        return;
      case 'standby-follow-error':
        if (event.retrying) logger.warn({ err: event.error }, 'standby: lost the log; following again shortly');
        else logger.error({ err: event.error }, `standby: following the log failed for good: ${describe(event.error)}`);
        return;
      case 'takeover-started':
        logger.info({ position: event.position, bootId: event.bootId }, 'standby: the log is silent; taking over');
        return;
      case 'takeover-lost-race':
        logger.info({ position: event.position }, 'standby: the active coordinator appended first; following on');
        return;
      case 'takeover-failed':
        if (event.retryInMillis === undefined)
          logger.error({ err: event.error }, `standby: taking over failed for good: ${describe(event.error)}`);
        else
          logger.warn(
            { err: event.error, delayMillis: event.retryInMillis },
            `standby: taking over failed (the log is unavailable: ${describe(event.error)}); still following, next check in at least ${event.retryInMillis} ms`,
          );
        return;
      case 'step-failed':
        logger.error({ err: event.error }, `bug: coordinator supervisor step failed: ${describe(event.error)}`);
        return;
    }
  }
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
