/**
 * The `closing` frame a stream client is sent when its events stop on a failure: for a damaged
 * record, the same code and sentence as `GET /v1/events` answers (`corruptLogReply`), plus where
 * the damage is, so a viewer can say what is wrong instead of "error".
 */
import { EventLogCorruptError } from '@lease-fence/coordinator-core';
import type { ClosingFrame } from '@lease-fence/protocol';
import { corruptLogReply } from '../http/api-exception.filter.js';

/**
 * The `closing` frame for a stream that failed with `error`.
 * @param error - Why the client's subscription (or the shared live fan-out) failed.
 * @param position - The client's resume point: the last event it was sent.
 * @returns `event-log-corrupt` with `corruptPosition`, `field` and `message` for an
 *   {@link EventLogCorruptError}; `error` (and no detail, which would be a bug's internals) otherwise.
 */
export function closingFrameOfFailure(error: unknown, position: number): ClosingFrame {
  if (!(error instanceof EventLogCorruptError)) return { type: 'closing', reason: 'error', position };
  const reply = corruptLogReply(error);
  const field = error.issues.find((issue) => issue.path !== '')?.path;
  return {
    type: 'closing',
    reason: reply.error,
    position,
    ...(error.position === undefined ? {} : { corruptPosition: error.position }),
    ...(field === undefined ? {} : { field }),
    message: reply.message,
  };
}
