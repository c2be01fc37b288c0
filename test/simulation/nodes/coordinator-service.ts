/**
 * What a coordinator node serves, as the simulation calls it: DurableCoordinator's command
 * methods (which it satisfies as is) and {@link DeciderShell}'s.
 *
 * @see libs/coordinator-core/README.md (DurableCoordinator)
 */
import type {
  CoordinatorAcquireOutcome,
  RecordFenceRejection,
  RecordRejectionOutcome,
} from '@lease-fence/coordinator-core';
import type { FenceToken, ReleaseOutcome, RenewOutcome } from 'lease-fence';

/** A gate's rejection report, as `DurableCoordinator.recordRejection` takes it: the command without its `type`. */
export type RejectionReport = Omit<RecordFenceRejection, 'type'>;

/** The commands a coordinator node serves. Every promise resolves once its events are durable. */
export interface CoordinatorService {
  /** A grant or a denial; `fence-unavailable` only in fence-first mode (no gate admitted the fence in time). */
  acquire(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<CoordinatorAcquireOutcome>;
  renew(request: {
    readonly resource: string;
    readonly holderId: string;
    readonly fence: number;
    readonly requestId: string;
    readonly ttlMillis?: number | undefined;
  }): Promise<RenewOutcome>;
  release(token: FenceToken): Promise<ReleaseOutcome>;
  /** Records a gate's report: `ok` (recorded, or a duplicate), or a denial (`implausible`, `seq-conflict`) with no event. */
  recordRejection(report: RejectionReport): Promise<RecordRejectionOutcome>;
  /** Sweeps leases past their expiry; resolves how many expired. */
  expireDue(): Promise<number>;
  /** Records an uptime checkpoint if any lease is live. */
  checkpoint(): Promise<boolean>;
}
