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
  /**
   * The view's point now (undefined: live). The field shows what it jumped to only while the view
   * is still there: after Live, a step or a replay it is cleared, not left saying a stale point.
   */
  readonly at: AsOf | undefined;
}

/** Whether two as-of points are the same point. */
const samePoint = (a: AsOf | undefined, b: AsOf | undefined): boolean =>
  a === undefined || b === undefined
    ? a === b
    : a.kind === 'position'
      ? b.kind === 'position' && a.position === b.position
      : b.kind === 'wall' && a.wallMillis === b.wallMillis;

/** The browser's IANA time zone (`UTC` when the platform does not say). */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/** The "jump to" field (memoised: its props change only when the view moves). */
export const TimeJump = memo(function TimeJump({ now, timeZone, bounds, onJump, at }: TimeJumpProps): ReactElement {
  const [typed, setText] = useState('');
  const [result, setOutcome] = useState<
    { readonly ok: boolean; readonly message: string; readonly jumpedTo?: AsOf } | undefined
  >();
  // A jump the view has since moved away from is forgotten: its text and its note would misstate the view.
  const moved = result?.ok === true && !samePoint(result.jumpedTo, at);
  const text = moved ? '' : typed;
  const outcome = moved ? undefined : result;
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
      const jumpedTo: AsOf = { kind: 'position', position: target.position };
      onJump(jumpedTo);
      setOutcome({ ok: true, message: `as of position ${target.position}`, jumpedTo });
    } else {
      const jumpedTo: AsOf = { kind: 'wall', wallMillis: target.wallMillis };
      onJump(jumpedTo);
      setOutcome({
        ok: true,
        message: `as of ${formatWallDateTime(target.wallMillis)}, read as ${target.zoneLabel}`,
        jumpedTo,
      });
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
          onChange={(e) => {
            setText(e.target.value);
            if (moved) setOutcome(undefined);
          }}
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
