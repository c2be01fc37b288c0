/**
 * Counters of command outcomes since this boot, fed by the coordinator's `onOutcome` hook.
 * Denials change no state and are not in the log (DESIGN.md § "The event-sourced coordinator"),
 * so these counters are where they show: the stream's `stats` frames read them.
 */

/** What one command decided, as the coordinator's `onOutcome` hook reports it. */
export interface OutcomeReport {
  readonly ok: boolean;
  readonly reason?: string;
}

/** A copy of the counters at one moment. */
export interface OutcomeTotals {
  /** Denied commands by outcome reason (`held`, `already-held`, `expired`, `not-holder`). */
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
   * @param command - The command type (`AcquireLease`, `RenewLease`, `ReleaseLease`, `RecordRejection`, `AdmitFence`, …).
   * @param outcome - Whether it succeeded, and the denial reason when not.
   */
  record(command: string, outcome: OutcomeReport): void {
    if (!outcome.ok) {
      const reason = outcome.reason ?? 'unknown';
      this.denials[reason] = (this.denials[reason] ?? 0) + 1;
      return;
    }
    switch (command) {
      case 'AcquireLease': this.grants += 1; break;
      case 'RenewLease': this.renewals += 1; break;
      case 'ReleaseLease': this.releases += 1; break;
      case 'RecordRejection': this.rejections += 1; break;
      case 'AdmitFence': this.admits += 1; break;
      default: break;
    }
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
