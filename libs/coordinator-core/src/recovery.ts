/**
 * Recovery: load the latest snapshot, replay the events after it with the same `evolve` that
 * live operation uses, and stop on anything that does not decode or fold (naming its position).
 * The new boot's `CoordinatorStarted` (grace deadlines, burned fences) is then decided by
 * `decide(StartCoordinator)` and appended by the shell.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Recovery)
 */
import { evolve } from './decider/evolve.js';
import { createInitialState, fromSnapshot, type CoordinatorState } from './decider/state.js';
import { EventLogCorruptError } from './ports/event-log-errors.js';
import type { EventLog } from './ports/event-log.js';
import { readPagesOf } from './ports/paged-read.js';

/** What {@link replayLog} restored. */
export interface ReplayResult {
  /** The fold of the whole log. */
  readonly state: CoordinatorState;
  /** Events folded after the snapshot (all of them without one). */
  readonly eventsReplayed: number;
  /** Whether replay started from a snapshot. */
  readonly fromSnapshot: boolean;
}

/** Options of {@link replayLog}. */
export interface ReplayOptions {
  /** Grants remembered for idempotent retries (acquisitions, and as many renewals), for a replay that starts without a snapshot. @defaultValue 1024 */
  readonly replayCacheSize?: number;
  /** Ignore snapshots and fold the whole log (to measure, or to cross-check a snapshot). @defaultValue false */
  readonly ignoreSnapshot?: boolean;
}

/**
 * Folds `log` into a state: from its latest snapshot (when it has one this reader understands),
 * then every later event. The events are read a page at a time ({@link EventLog.readPages}, or
 * `read` grouped into pages for a log without it) and each page is folded synchronously, so a
 * long replay costs one promise per page, not one per event.
 *
 * @throws {@link EventLogCorruptError} naming the position of an event that does not decode or
 *   contradicts the state, of a gap, or of a snapshot that is malformed or covers more events
 *   than the log holds (the log lost acknowledged events).
 * @throws {@link EventLogUnavailableError} if the log cannot be read.
 */
export async function replayLog(log: EventLog, options: ReplayOptions = {}): Promise<ReplayResult> {
  const snapshot = options.ignoreSnapshot === true ? undefined : await log.latestSnapshot();
  const restored = snapshot === undefined ? undefined : fromSnapshot(snapshot);
  const state =
    restored ??
    createInitialState(options.replayCacheSize === undefined ? {} : { replayCacheSize: options.replayCacheSize });
  const version = await log.version();
  if (restored !== undefined && restored.position > version) {
    throw new EventLogCorruptError({
      position: version + 1,
      issues: [
        {
          path: '',
          message: `the snapshot covers ${restored.position} events but the log holds only ${version}: acknowledged events are missing`,
        },
      ],
    });
  }
  const fromPosition = state.position + 1;
  const range = { from: fromPosition };
  for await (const page of readPagesOf(log, range)) {
    for (const recorded of page) {
      if (recorded.position !== state.position + 1) {
        throw new EventLogCorruptError({
          position: state.position + 1,
          issues: [
            {
              path: '',
              message: `replay expected position ${state.position + 1}, the log returned ${recorded.position}`,
            },
          ],
        });
      }
      try {
        evolve(state, recorded.event);
      } catch (error) {
        if (error instanceof EventLogCorruptError) throw error;
        throw new EventLogCorruptError({
          position: recorded.position,
          issues: [{ path: '', message: error instanceof Error ? error.message : String(error) }],
          cause: error,
        });
      }
    }
  }
  return { state, eventsReplayed: state.position - fromPosition + 1, fromSnapshot: restored !== undefined };
}
