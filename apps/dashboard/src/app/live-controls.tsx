/**
 * Live / pause, "N new since", the as-of position with a scrubber over the whole log, stepping,
 * jumps to rejections and restarts, and replay at a chosen speed.
 */
import type { ReactElement } from 'react';
import { formatWallDateTime } from '@lease-fence/dashboard-model';
import { keyOf, type KeyCommand } from './keyboard.js';
import { REPLAY_SPEEDS } from './url-state.js';

/** Props of {@link LiveControls}. */
export interface LiveControlsProps {
  readonly live: boolean;
  /** False while the stream is not connected: a live view then says it is stale, not live. */
  readonly connected: boolean;
  /** Position the view is as of. */
  readonly asOfPosition: number;
  readonly asOfWallMillis: number | undefined;
  readonly firstPosition: number;
  /** Head of the log as last heard. */
  readonly headPosition: number;
  readonly playing: boolean;
  readonly speed: number;
  /** A requested position that is beyond the log, to say so. */
  readonly beyondLog: number | undefined;
  /** What a jump to a rejection or restart is doing when none was loaded, to say so. */
  readonly markerNote?: string | undefined;
  readonly onPause: () => void;
  readonly onResume: () => void;
  readonly onSeek: (position: number) => void;
  readonly onStep: (direction: 1 | -1) => void;
  readonly onMarker: (direction: 1 | -1) => void;
  readonly onPlay: (playing: boolean) => void;
  readonly onSpeed: (speed: number) => void;
}

/** The toolbar that moves the view through the log. */
export function LiveControls(props: LiveControlsProps): ReactElement {
  const newSince = Math.max(0, props.headPosition - props.asOfPosition);
  return (
    <div className="live-controls" data-testid="live-controls" data-live={props.live}>
      {props.live ? (
        <CommandButton glyph="❚❚ Pause" label="Pause" command="toggle-live" onClick={props.onPause} testId="pause" />
      ) : (
        <CommandButton
          glyph="▶ Live"
          label="Back to live"
          command="toggle-live"
          onClick={props.onResume}
          testId="resume"
        />
      )}
      {!props.live && (
        <span className="new-since" data-testid="new-since" data-count={newSince}>
          {newSince.toLocaleString('en-US')} new since position {props.asOfPosition.toLocaleString('en-US')}
        </span>
      )}
      <CommandButton
        glyph="« p"
        label="Previous rejection or restart"
        command="previous-marker"
        onClick={() => props.onMarker(-1)}
      />
      <CommandButton glyph="‹ [" label="One event back" command="step-back" onClick={() => props.onStep(-1)} />
      <label className="scrubber">
        <span className="sr-only">As-of position</span>
        <input
          type="range"
          data-testid="scrubber"
          min={Math.max(0, props.firstPosition - 1)}
          max={Math.max(props.headPosition, props.asOfPosition)}
          value={props.asOfPosition}
          onChange={(e) => props.onSeek(Number(e.target.value))}
        />
      </label>
      <CommandButton glyph="] ›" label="One event forward" command="step-forward" onClick={() => props.onStep(1)} />
      <CommandButton
        glyph="n »"
        label="Next rejection or restart"
        command="next-marker"
        onClick={() => props.onMarker(1)}
      />
      <span className="as-of" data-testid="as-of" data-position={props.asOfPosition}>
        {!props.live ? 'as of position' : props.connected ? 'live position' : 'disconnected · last position'}{' '}
        {props.asOfPosition.toLocaleString('en-US')}
        {props.asOfWallMillis !== undefined && ` · ${formatWallDateTime(props.asOfWallMillis)}`}
      </span>
      {!props.live && (
        <>
          <button
            type="button"
            onClick={() => props.onPlay(!props.playing)}
            data-testid="replay"
            aria-label={props.playing ? 'Stop replay' : 'Replay'}
          >
            <span aria-hidden="true">{props.playing ? '❚❚ Stop replay' : '▶ Replay'}</span>
          </button>
          <label>
            speed{' '}
            <select value={props.speed} onChange={(e) => props.onSpeed(Number(e.target.value))}>
              {REPLAY_SPEEDS.map((s) => (
                <option key={s} value={s}>
                  {s}×
                </option>
              ))}
            </select>
          </label>
        </>
      )}
      {props.markerNote !== undefined && (
        <span className="marker-note" role="status" data-testid="marker-note">
          {props.markerNote}
        </span>
      )}
      {props.beyondLog !== undefined && (
        <span className="error" role="alert" data-testid="not-in-log">
          Position {props.beyondLog} is not in the log (it ends at {props.headPosition}); showing the end.
        </span>
      )}
    </div>
  );
}

/** Props of {@link CommandButton}. */
interface CommandButtonProps {
  /** What the button shows: a symbol and the key, or a symbol and a word. */
  readonly glyph: string;
  /** What the button does, in words: its accessible name (a screen reader announces this, not the glyph). */
  readonly label: string;
  /** The keyboard command the button also runs: its key goes to `aria-keyshortcuts` and the title. */
  readonly command: KeyCommand;
  readonly onClick: () => void;
  readonly testId?: string | undefined;
}

/** A toolbar button named by what it does and the key that does the same, showing its glyph. */
function CommandButton(props: CommandButtonProps): ReactElement {
  const key = keyOf(props.command);
  return (
    <button
      type="button"
      onClick={props.onClick}
      data-testid={props.testId}
      aria-label={props.label}
      aria-keyshortcuts={key}
      title={`${props.label} (${key})`}
    >
      <span aria-hidden="true">{props.glyph}</span>
    </button>
  );
}
