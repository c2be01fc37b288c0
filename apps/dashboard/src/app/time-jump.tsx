/**
 * The time input next to the live controls: type a local time (`13:24:40`), a date and time, an
 * ISO time with its offset, or a log position (`#1234`), press Enter, and the view is as of that
 * point. The field says which zone a time without offset is read in. Invalid input, or a point
 * outside the log, gets a message under the field and changes nothing. The language is
 * `parseJumpTarget` in `@lease-fence/dashboard-model`.
 */
import { memo, useState, type ReactElement } from 'react';
import {
  describeLocalZone,
  formatWallDateTime,
  jumpOutsideLog,
  parseJumpTarget,
  type LogBounds,
} from '@lease-fence/dashboard-model';
import type { AsOf } from './url-state.js';

/** Props of {@link TimeJump}. */
export interface TimeJumpProps {
  /** The browser's clock, epoch milliseconds (which day "today" is). */
  readonly now: () => number;
  /** IANA zone local times are read in: the browser's ({@link browserTimeZone}). */
  readonly timeZone: string;
  /** The log's ends, read when Enter is pressed, to refuse a point outside it. */
  readonly bounds: () => LogBounds;
  /** Moves the view (the caller pauses the live view there). */
  readonly onJump: (at: AsOf) => void;
}

/** The browser's IANA time zone (`UTC` when the platform does not say). */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/** The "jump to" field (memoised: its props change only when the view moves). */
export const TimeJump = memo(function TimeJump({ now, timeZone, bounds, onJump }: TimeJumpProps): ReactElement {
  const [text, setText] = useState('');
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly message: string } | undefined>();
  const hint = `local time, ${timeZone}`;
  let zoneHint = hint;
  try {
    zoneHint = describeLocalZone(timeZone, now());
  } catch {
    // An unknown zone: parseJumpTarget says so when a local time is typed.
  }
  const submit = (): void => {
    const parsed = parseJumpTarget(text, { nowMillis: now(), timeZone });
    if (!parsed.ok) {
      setOutcome({ ok: false, message: parsed.message });
      return;
    }
    const outside = jumpOutsideLog(parsed.target, bounds(), formatWallDateTime);
    if (outside !== undefined) {
      setOutcome({ ok: false, message: outside });
      return;
    }
    const { target } = parsed;
    if (target.kind === 'position') {
      onJump({ kind: 'position', position: target.position });
      setOutcome({ ok: true, message: `as of position ${target.position}` });
    } else {
      onJump({ kind: 'wall', wallMillis: target.wallMillis });
      setOutcome({ ok: true, message: `as of ${formatWallDateTime(target.wallMillis)}, read as ${target.zoneLabel}` });
    }
  };
  return (
    <form
      className="time-jump"
      data-testid="time-jump"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label>
        Jump to{' '}
        <input
          type="text"
          data-testid="time-jump-input"
          value={text}
          placeholder="13:24:40 or #1234"
          aria-describedby="time-jump-note"
          aria-invalid={outcome !== undefined && !outcome.ok}
          onChange={(e) => setText(e.target.value)}
        />
      </label>{' '}
      <span
        id="time-jump-note"
        className={outcome?.ok === false ? 'error' : 'muted'}
        role={outcome?.ok === false ? 'alert' : undefined}
        data-testid={outcome?.ok === false ? 'time-jump-error' : 'time-jump-note'}
      >
        {outcome?.message ?? `${zoneHint}; or ISO with Z / +01:00; or #position`}
      </span>
    </form>
  );
});
