/**
 * A bound on how long one call to the server may take. The Kurrent client does not bound every
 * step itself: against a server that accepts the connection but stops answering, its first
 * append waits forever on the server-features request that precedes it, and reads wait on the
 * Rust bridge. Without this bound a stalled server would hang the coordinator's group commit
 * instead of making it answer 503.
 */
import { EventLogUnavailableError } from '@lease-fence/coordinator-core';
import { LOG_NAME } from './to-eventstoredb.js';

/**
 * Settles like `work`, or rejects with {@link EventLogUnavailableError} after `timeoutMillis`
 * (milliseconds, the process's timer clock). On timeout the call's outcome is unknown: an append
 * may still land later, which is why the port treats the error as "outcome unknown".
 */
export function withOperationTimeout<T>(work: Promise<T>, timeoutMillis: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(
        new EventLogUnavailableError(LOG_NAME, {
          message: `${operation}: no answer from the server within ${timeoutMillis} ms; the outcome is unknown`,
        }),
      );
    }, timeoutMillis);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
