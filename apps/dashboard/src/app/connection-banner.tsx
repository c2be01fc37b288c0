/**
 * The connection state, always visible, saying what to do when something is wrong.
 */
import type { ReactElement } from 'react';
import { formatDuration } from '@lease-fence/dashboard-model';
import type { ConnectionState } from '../stream/stream-client.js';

/** Props of {@link ConnectionBanner}. */
export interface ConnectionBannerProps {
  readonly connection: ConnectionState;
  readonly caughtUp: boolean;
  /** Last loaded position. */
  readonly position: number;
  /** Head of the log as last heard. */
  readonly headPosition: number;
  /** True while ingestion is held (paused): events are counted, not loaded. */
  readonly held: boolean;
}

/** One line: connected and live, catching up with progress, reconnecting and why, or refused. */
export function ConnectionBanner({
  connection,
  caughtUp,
  position,
  headPosition,
  held,
}: ConnectionBannerProps): ReactElement {
  const { tone, text } = describe(connection, caughtUp, position, headPosition, held);
  return (
    <div
      className={`connection connection-${tone}`}
      data-testid="connection-state"
      data-status={connection.status}
      role="status"
      aria-live="polite"
    >
      <span className="connection-dot" aria-hidden="true" /> {text}
    </div>
  );
}

function describe(
  c: ConnectionState,
  caughtUp: boolean,
  position: number,
  head: number,
  held: boolean,
): { tone: 'ok' | 'busy' | 'bad'; text: string } {
  switch (c.status) {
    case 'connecting':
      return {
        tone: 'busy',
        text:
          c.attempt <= 1
            ? 'Connecting to the coordinator…'
            : `Connecting (attempt ${c.attempt}), resuming after position ${c.after}…`,
      };
    case 'catching-up':
      return {
        tone: 'busy',
        text: `Catching up: ${position.toLocaleString('en-US')} of ${Math.max(head, position).toLocaleString('en-US')} events loaded`,
      };
    case 'live':
      return {
        tone: 'ok',
        text: held
          ? `Connected · loading paused at position ${position}`
          : `Live · position ${position.toLocaleString('en-US')}`,
      };
    case 'reconnecting':
      return {
        tone: 'bad',
        text: `Disconnected (${c.reason}). Retrying in ${formatDuration(c.retryInMillis)}, resuming after position ${c.after}${caughtUp ? '' : '. Is the coordinator running? Start it with `npm start`'}.`,
      };
    case 'unauthorized':
      return {
        tone: 'bad',
        text: `The coordinator refused the viewer token (${c.reason}). Enter a viewer token from the coordinator's token file.`,
      };
    case 'diverged':
      return {
        tone: 'bad',
        text: `The coordinator's log ends at position ${c.headPosition}, before the ${c.position} events this page loaded: it was reset or replaced. Reload the page to start over.`,
      };
    case 'closed':
      return { tone: 'bad', text: 'Stream closed.' };
  }
}
