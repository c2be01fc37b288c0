/**
 * Coordinator restarts as of the view: boot, recovered fence counter, events replayed, replay
 * time, carried leases and their grace window.
 */
import type { ReactElement } from 'react';
import {
  formatDuration,
  formatWallDateTime,
  formatWallTime,
  shortBootId,
  type RestartView,
} from '@lease-fence/dashboard-model';

/** Props of {@link RestartList}. */
export interface RestartListProps {
  readonly restarts: readonly RestartView[];
  readonly onJump: (position: number) => void;
}

/** One row per `CoordinatorStarted`, newest first. */
export function RestartList({ restarts, onJump }: RestartListProps): ReactElement {
  return (
    <section className="panel restarts" aria-label="Coordinator restarts">
      <h3>Coordinator restarts ({restarts.length})</h3>
      <ol data-testid="restart-markers" reversed>
        {[...restarts].reverse().map((r) => (
          <li
            key={r.stamp.position}
            data-testid="restart-marker"
            data-position={r.stamp.position}
            data-boot={r.stamp.bootId}
          >
            <button type="button" className="link" onClick={() => onJump(r.stamp.position)}>
              position {r.stamp.position}
            </button>{' '}
            {formatWallDateTime(r.stamp.wallMillis)} · boot {shortBootId(r.stamp.bootId)}
            {r.previousBootId === undefined ? ' (fresh log)' : ` after ${shortBootId(r.previousBootId)}`} · recovered
            fence {r.recoveredFence} · {r.eventsReplayed.toLocaleString('en-US')} events replayed
            {r.fromSnapshot ? ' from a snapshot' : ''} in {formatDuration(r.replayMillis)}
            {r.carriedLeases.length > 0 &&
              ` · ${r.carriedLeases.length} ${r.carriedLeases.length === 1 ? 'lease' : 'leases'} carried, grace until ${formatWallTime(r.graceEndWallMillis)}`}
            {r.droppedLeases.length > 0 && ` · ${r.droppedLeases.length} not carried`}
          </li>
        ))}
      </ol>
    </section>
  );
}
