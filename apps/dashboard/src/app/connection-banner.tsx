/**
 * The connection state, always visible, saying what to do when something is wrong.
 */
import type { ReactElement } from 'react';
import { formatDuration } from '@lease-fence/dashboard-model';
import type { ConnectionState, LogDamage } from '../stream/stream-client.js';

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
      if (c.damage !== undefined)
        return { tone: 'bad', text: `${damageSentence(c.damage, c.after)} Checking again (attempt ${c.attempt})…` };
      return {
        tone: 'busy',
        text:
          c.attempt <= 1
            ? 'Connecting to the coordinator…'
            : `Connecting (attempt ${c.attempt}), resuming after position ${c.after}…`,
      };
    case 'catching-up':
      if (c.damage !== undefined) return { tone: 'bad', text: `${damageSentence(c.damage, c.after)} Checking again…` };
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
        // A closing frame means the coordinator answered: asking whether it runs would mislead.
        text: `Disconnected (${c.reason}). Retrying in ${formatDuration(c.retryInMillis)}, resuming after position ${c.after}${caughtUp || c.reason.startsWith(SERVER_CLOSING) ? '' : '. Is the coordinator running? Start it with `npm start`'}.`,
      };
    case 'log-damaged':
      return {
        tone: 'bad',
        text: `${damageSentence(c.damage, c.after)} Checking again in ${formatDuration(c.retryInMillis)}.`,
      };
    case 'unauthorized':
      return {
        tone: 'bad',
        text: `The coordinator refused the viewer token (${c.reason}). Enter a viewer token from the coordinator's token file.`,
      };
    case 'diverged':
      return {
        tone: 'bad',
        text:
          c.differsAt === undefined
            ? `The coordinator's log ends at position ${c.headPosition}, before the ${c.position} events this page loaded: it was reset or replaced. Reload the page to start over.`
            : `The coordinator's log is not the one this page loaded: its event at position ${c.differsAt} differs. It was reset or replaced. Reload the page to start over.`,
      };
    case 'closed':
      return { tone: 'bad', text: 'Stream closed.' };
  }
}

/** The prefix of a `reconnecting` reason given by the coordinator's `closing` frame (stream-client.ts). */
const SERVER_CLOSING = 'server closing:';

/**
 * What the page shows while the coordinator refuses to serve past a damaged record: where the
 * damage is, why, and that the view is as of the last good position, not live.
 */
export function damageSentence(damage: LogDamage, lastGoodPosition: number): string {
  const where = damage.position === undefined ? 'after position' : 'at position';
  const at = damage.position ?? lastGoodPosition;
  const field = damage.field === undefined ? '' : `, field ${damage.field}`;
  return (
    `The coordinator's event log is damaged ${where} ${at.toLocaleString('en-US')}${field} (${damage.message}); ` +
    `it refuses to serve events past it. Showing the log as of position ${lastGoodPosition.toLocaleString('en-US')}, the last good one — not live. ` +
    'Repair or restore the log (see the operations guide).'
  );
}
