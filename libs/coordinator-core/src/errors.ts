/**
 * Typed errors of the durable coordinator shell.
 *
 * @see docs/design.md § "The event-sourced coordinator" (persist before ack, single writer)
 */

/**
 * Why a coordinator refuses commands. A supervisor that has no coordinator serving yet
 * (recovering, standby) says so with its own error, `CoordinatorNotServingError` in
 * `supervisor/coordinator-supervisor.ts`.
 */
export type CoordinatorUnavailableReason = 'superseded' | 'unhealthy' | 'closed' | 'awaiting-floors';

/**
 * The coordinator cannot take commands: another writer appended to its log (`'superseded'`),
 * an append failed with an unknown outcome (`'unhealthy'`), it was closed (`'closed'`), or it started on a log that has issued no fence
 * and waits for gates to report their floors before its first grant (`'awaiting-floors'`, see
 * `floorWaitMillis` in `durable-coordinator-options.ts`). Nothing was acknowledged for the command; retry against a
 * healthy coordinator (a re-opened one recovers from the log). `retryable` is true.
 */
export class CoordinatorUnavailableError extends Error {
  readonly code = 'coordinator-unavailable';
  readonly retryable = true;

  constructor(
    readonly reason: CoordinatorUnavailableReason,
    options: { readonly cause?: unknown } = {},
  ) {
    super(
      `coordinator unavailable (${reason}): ${MESSAGES[reason]}` +
        (options.cause instanceof Error ? `; cause: ${options.cause.message}` : ''),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'CoordinatorUnavailableError';
  }
}

const MESSAGES: Record<CoordinatorUnavailableReason, string> = {
  superseded: 'another writer appended to the log; this coordinator stopped granting',
  unhealthy: 'an append to the log failed and its outcome is unknown; this coordinator stopped granting',
  closed: 'the coordinator was closed',
  'awaiting-floors':
    'the coordinator started on a log that has issued no fence, and waits for gates to report their floors before its first grant',
};
