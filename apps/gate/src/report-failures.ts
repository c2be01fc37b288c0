/**
 * What the sidecar logs when reporting a refusal from its outbox fails. The reporter
 * (`reportRejections` of `@lease-fence/client`, `libs/client/src/rejection-reporter.ts`) retries
 * a transient failure and keeps the refusal in the outbox, but drops a refusal the coordinator
 * refused for good (`isFinalRefusal`: 400, 409 `seq-conflict`). A dropped refusal was
 * answered 409 to its writer and never reaches the coordinator's log, so the line says so, at
 * error, with what to check, instead of the "not reported yet" of a retried one.
 */
import { CoordinatorHttpError, isFinalRefusal, type PendingRejection } from '@lease-fence/client';

/** A log line: its pino level and message. */
export interface ReportFailureLine {
  /** `warn`: retried, nothing to do; `error`: dropped for good, or retried until an operator acts. */
  readonly level: 'warn' | 'error';
  /** Whether the reporter retries the report (the refusal stays in the outbox). */
  readonly retried: boolean;
  readonly message: string;
}

/**
 * Whether the coordinator answered 403 to a request of the gate: its gate token does not cover the
 * resource. Retried (the tokens file may yet), but only an operator can end it.
 */
export const isGateTokenNotCovering = (error: unknown): boolean =>
  error instanceof CoordinatorHttpError && error.status === 403;

/**
 * What is wrong, and what the operator does, when {@link isGateTokenNotCovering}: the coordinator
 * reads its tokens file at start, so the fix takes a restart of the coordinator, not of the gate.
 */
export const gateTokenNotCovering = (resource: string): string =>
  `LEASE_FENCE_GATE_TOKEN does not cover resource ${JSON.stringify(resource)} in the coordinator's tokens file: ` +
  "add it to that gate token's resources and restart the coordinator (it reads the file at start)";

/** The message of a report that failed and is retried (the refusal stays in the outbox). */
const RETRIED_REPORT_MESSAGE = 'refusal not reported yet (retried; it stays in the outbox)';

/**
 * Describes a failed report of `rejection` for the sidecar's log.
 * @param error - What the reporter's `onError` received.
 * @param rejection - The refusal whose report failed.
 * @returns `warn` for a failure the reporter retries; `error`, naming what to check, for one it
 *   drops, or one it retries that only an operator can end (a 403: the gate token does not cover the resource).
 */
export function describeReportFailure(error: unknown, rejection: PendingRejection): ReportFailureLine {
  const status = error instanceof CoordinatorHttpError ? error.status : undefined;
  if (isGateTokenNotCovering(error)) {
    return {
      level: 'error',
      retried: true,
      message: `refusal not reported yet: ${gateTokenNotCovering(rejection.resource)} (retried; it stays in the outbox until the token covers it)`,
    };
  }
  if (!isFinalRefusal(error)) return { level: 'warn', retried: true, message: RETRIED_REPORT_MESSAGE };
  const dropped = `refusal #${rejection.seq} dropped: the coordinator refused its report for good, so it will not reach the log`;
  if (status === 409) {
    return {
      level: 'error',
      retried: false,
      message:
        `${dropped}; the coordinator already recorded seq ${rejection.seq} of this gate with other content: ` +
        "a second gate guards this resource with the same gate token, or this gate's LEASE_FENCE_DATA_DIR is shared with " +
        "or was swapped for another gate's while it ran (at start a gate numbers its refusals after the last one the " +
        'coordinator recorded from it). Run one gate per resource, each with its own data directory',
    };
  }
  return {
    level: 'error',
    retried: false,
    message: `${dropped}; the coordinator found the report malformed (see err)`,
  };
}
