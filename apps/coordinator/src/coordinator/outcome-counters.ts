/**
 * Counters of command outcomes since this boot, fed by the coordinator's `onOutcome` hook.
 * Denials change no state and are not in the log (docs/design.md § "The event-sourced coordinator"),
 * so these counters are where they show: the stream's `stats` frames read them.
 */
import type { CoordinatorCommand } from '@lease-fence/coordinator-core';

/** The totals of successful commands (see {@link SUCCESS_TOTAL_OF}). */
export type SuccessTotal = 'grants' | 'renewals' | 'releases' | 'rejections' | 'admits';

/**
 * Which total a successful command counts towards, for every command type of coordinator-core
 * (`undefined`: not counted). Keyed by core's command type union, so a renamed or added command
 * type fails the typecheck here instead of leaving a counter at 0. Shared by the stream's `stats`
 * frames ({@link OutcomeCounters}) and `/metrics` (`CoordinatorMetrics`).
 */
export const SUCCESS_TOTAL_OF: Readonly<Record<CoordinatorCommand['type'], SuccessTotal | undefined>> = {
  AcquireLease: 'grants',
  RenewLease: 'renewals',
  ReleaseLease: 'releases',
  RecordFenceRejection: 'rejections',
  // The coordinator hears a batch as one RecordFenceRejection outcome per item (durable-coordinator's outcomeReports).
  RecordFenceRejections: 'rejections',
  AdmitFence: 'admits',
  // Fence-first: the grant is counted when the lease becomes active, not when its fence is reserved or burned.
  ReserveFence: undefined,
  ActivateReservedLease: 'grants',
  BurnReservedFence: undefined,
  ExpireDueLeases: undefined,
  Checkpoint: undefined,
  TakeSnapshot: undefined,
  StartCoordinator: undefined,
  ReportFloor: undefined,
};

/** What one command decided, as the coordinator's `onOutcome` hook reports it. */
export interface OutcomeReport {
  readonly ok: boolean;
  readonly reason?: string;
}

/** A copy of the counters at one moment. */
export interface OutcomeTotals {
  /** Denied commands by outcome reason (`held`, `already-held`, `lock-delay`, `expired`, `not-holder`). */
  readonly denials: Readonly<Record<string, number>>;
  readonly grants: number;
  readonly renewals: number;
  readonly releases: number;
  readonly rejections: number;
  readonly admits: number;
}

/** Mutable counters; one instance per process. */
export class OutcomeCounters {
  private readonly denials: Record<string, number> = {};
  private grants = 0;
  private renewals = 0;
  private releases = 0;
  private rejections = 0;
  private admits = 0;

  /**
   * Counts one outcome.
   * @param command - The command type (`AcquireLease`, `RenewLease`, `ReleaseLease`, `RecordFenceRejection`, `AdmitFence`, …).
   * @param outcome - Whether it succeeded, and the denial reason when not.
   */
  record(command: CoordinatorCommand['type'], outcome: OutcomeReport): void {
    if (!outcome.ok) {
      const reason = outcome.reason ?? 'unknown';
      this.denials[reason] = (this.denials[reason] ?? 0) + 1;
      return;
    }
    const total = SUCCESS_TOTAL_OF[command];
    if (total !== undefined) this[total] += 1;
  }

  /** A copy of the counters. */
  totals(): OutcomeTotals {
    return {
      denials: { ...this.denials },
      grants: this.grants,
      renewals: this.renewals,
      releases: this.releases,
      rejections: this.rejections,
      admits: this.admits,
    };
  }
}
