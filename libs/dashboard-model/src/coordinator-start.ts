/**
 * Start or restart: the one rule that tells a log's first `CoordinatorStarted` (a fresh log's
 * start: nothing was recovered, nothing can have been lost) from a restart that recovered an
 * earlier boot's log. The fold, the marker index (`n` / `p`) and the rate charts all ask it here.
 */
import type { EventOf } from '@lease-fence/protocol';

/**
 * Whether a `CoordinatorStarted` is a restart: it names the boot that wrote the log before it.
 * A fresh log's first start has no `previousBootId`, and the coordinator's own fold refuses a
 * later `CoordinatorStarted` without one (libs/coordinator-core/src/decider/evolve.ts), so an
 * absent `previousBootId` means there were no earlier events: a start, not a restart.
 *
 * @param data - The event's data (schema-valid).
 * @returns True for a restart, false for a fresh log's first start.
 */
export function isRestart(data: EventOf<'CoordinatorStarted'>['data']): boolean {
  return data.previousBootId !== undefined;
}
