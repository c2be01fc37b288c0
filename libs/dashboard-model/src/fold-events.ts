/**
 * Replay: a whole sequence of events folded at once, `events.reduce(evolveView, initial)`.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Recovery is a reduce over the same evolve)
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { evolveView } from './evolve-view.js';
import { createViewState, type ViewState } from './view-state.js';

/**
 * Folds `events` in order into `initial` (updated in place, see {@link evolveView}) or into a
 * fresh empty state.
 *
 * @param events - Recorded events in increasing position order.
 * @param initial - The state to continue from. @defaultValue a new {@link createViewState}
 * @returns The state after the last event.
 * @throws RangeError from {@link evolveView} when a position does not increase.
 */
export function foldEvents(events: Iterable<RecordedEvent>, initial: ViewState = createViewState()): ViewState {
  let state = initial;
  for (const recorded of events) state = evolveView(state, recorded);
  return state;
}
