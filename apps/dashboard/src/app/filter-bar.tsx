/**
 * The filters (resource pattern, holder, fence range, has-rejections, hide lanes with no match),
 * what they match ("12 leases of agent-2 · 3 rejections · 40 events") and "k of N lanes".
 */
import { useState, type ReactElement } from 'react';
import { parseFenceFilterInput, type LaneFilter, type MatchCounts } from '@lease-fence/dashboard-model';
import { countOf } from './count-words.js';

/** What the filter matches as of the view's position (see `compileLeaseMatch`). */
export interface FilterMatchCounts extends MatchCounts {
  /** Logged events up to `asOfPosition` that the filter matches. */
  readonly events: number;
  /** The position the counts are as of. */
  readonly asOfPosition: number;
}

/** Props of {@link FilterBar}. */
export interface FilterBarProps {
  readonly filter: LaneFilter;
  /** Lanes kept (by the resource pattern, "with rejections" and "hide lanes with no match"). */
  readonly shown: number;
  readonly total: number;
  /** What the filter matches; undefined when no filter is set. @defaultValue undefined */
  readonly counts?: FilterMatchCounts | undefined;
  readonly onChange: (filter: LaneFilter) => void;
}

/**
 * The holder and fence filters match bar by bar (the rest are dimmed, or their lanes hidden), the
 * resource pattern and "with rejections" keep lanes; the counts say what matched.
 */
export function FilterBar({ filter, shown, total, counts, onChange }: FilterBarProps): ReactElement {
  const rangeText =
    filter.fenceMin === undefined && filter.fenceMax === undefined
      ? ''
      : filter.fenceMin === filter.fenceMax
        ? String(filter.fenceMin)
        : `${filter.fenceMin ?? ''}-${filter.fenceMax ?? ''}`;
  const [fenceText, setFenceText] = useState(rangeText);
  // Follow the URL (back/forward, clear filters) unless the box already says the same thing or
  // holds text that is not a range (the filter was dropped for it: keep the text and its error).
  // Adjusted while rendering when the URL's range changes (React's pattern for state derived
  // from a changed prop), so the box never shows a stale range for a frame.
  const [followedRange, setFollowedRange] = useState(rangeText);
  let shownText = fenceText;
  if (followedRange !== rangeText) {
    const input = parseFenceFilterInput(fenceText);
    shownText =
      !input.ok && rangeText === '' ? fenceText : input.ok && sameRange(input.range, filter) ? fenceText : rangeText;
    setFollowedRange(rangeText);
    setFenceText(shownText);
  }
  const fenceInput = parseFenceFilterInput(shownText);
  const without = (key: keyof LaneFilter): LaneFilter =>
    Object.fromEntries(Object.entries(filter).filter(([k]) => k !== key)) as LaneFilter;
  return (
    <div className="filter-bar" data-testid="filter-bar">
      <label>
        resource{' '}
        <input
          placeholder="deploy-* or text"
          value={filter.resource ?? ''}
          onChange={(e) =>
            onChange(e.target.value === '' ? without('resource') : { ...filter, resource: e.target.value })
          }
          data-testid="filter-resource"
        />
      </label>
      <label>
        holder{' '}
        <input
          placeholder="agent id"
          value={filter.holder ?? ''}
          onChange={(e) => onChange(e.target.value === '' ? without('holder') : { ...filter, holder: e.target.value })}
          data-testid="filter-holder"
        />
      </label>
      <label>
        fences{' '}
        <input
          placeholder="10-200"
          size={9}
          value={shownText}
          aria-invalid={!fenceInput.ok}
          aria-describedby={fenceInput.ok ? undefined : 'filter-fence-error'}
          onChange={(e) => {
            setFenceText(e.target.value);
            const input = parseFenceFilterInput(e.target.value);
            const rest = Object.fromEntries(
              Object.entries(filter).filter(([k]) => k !== 'fenceMin' && k !== 'fenceMax'),
            ) as LaneFilter;
            // Text that is not a range drops the fence filter: never filter by what the box no longer shows.
            onChange(input.ok && input.range !== undefined ? { ...rest, ...input.range } : rest);
          }}
          data-testid="filter-fence"
        />
      </label>
      {!fenceInput.ok && (
        <span className="error" role="alert" id="filter-fence-error" data-testid="filter-fence-error">
          {fenceInput.message}
        </span>
      )}
      <label>
        <input
          type="checkbox"
          checked={filter.hasRejections === true}
          onChange={(e) => onChange(e.target.checked ? { ...filter, hasRejections: true } : without('hasRejections'))}
          data-testid="filter-rejections"
        />{' '}
        with rejections
      </label>
      <label title="Without it, lanes where the holder and fence filters match nothing stay, dimmed">
        <input
          type="checkbox"
          checked={filter.hideUnmatchedLanes === true}
          onChange={(e) =>
            onChange(e.target.checked ? { ...filter, hideUnmatchedLanes: true } : without('hideUnmatchedLanes'))
          }
          data-testid="filter-hide-unmatched"
        />{' '}
        hide lanes with no match
      </label>
      {counts !== undefined && (
        <span
          className="match-count"
          data-testid="match-count"
          data-leases={counts.leases}
          data-rejections={counts.rejections}
          data-events={counts.events}
          data-position={counts.asOfPosition}
          title="A rejection matches when its refused holder · fence or the gate's floor holder · fence matches. Counts are as of the view's position."
        >
          {describeMatches(filter, counts, shown)}
        </span>
      )}
      <span className="lane-count" data-testid="lane-count" data-shown={shown} data-total={total}>
        {shown < total ? `${shown.toLocaleString('en-US')} of ${countOf(total, 'lane')}` : countOf(total, 'lane')}
      </span>
    </div>
  );
}

/**
 * What a filter matched, in words: `12 leases of agent-2 with fences 60–70 · 3 rejections (refused
 * or floor) · 40 events · in 2 of 3 lanes, as of position 1234`. Pure.
 *
 * @param shown - The lanes kept (the "of" of "in k of N lanes").
 */
export function describeMatches(filter: LaneFilter, counts: FilterMatchCounts, shown: number): string {
  const holder = filter.holder?.trim();
  const byFence = filter.fenceMin !== undefined || filter.fenceMax !== undefined;
  const fences =
    filter.fenceMin === filter.fenceMax
      ? `fence ${filter.fenceMin}`
      : filter.fenceMin === undefined
        ? `fences ≤ ${filter.fenceMax}`
        : filter.fenceMax === undefined
          ? `fences ≥ ${filter.fenceMin}`
          : `fences ${filter.fenceMin}–${filter.fenceMax}`;
  const byLease = (holder !== undefined && holder !== '') || byFence;
  return [
    `${countOf(counts.leases, 'lease')}${holder ? ` of ${holder}` : ''}${byFence ? ` with ${fences}` : ''}`,
    `${countOf(counts.rejections, 'rejection')}${byLease ? ' (refused or floor)' : ''}`,
    countOf(counts.events, 'event'),
    ...(byLease && filter.hideUnmatchedLanes !== true
      ? [`in ${counts.lanesWithMatch.toLocaleString('en-US')} of ${countOf(shown, 'lane')}`]
      : []),
  ]
    .join(' · ')
    .concat(`, as of position ${counts.asOfPosition}`);
}

function sameRange(
  range: { readonly fenceMin?: number; readonly fenceMax?: number } | undefined,
  filter: LaneFilter,
): boolean {
  return (range?.fenceMin ?? undefined) === filter.fenceMin && (range?.fenceMax ?? undefined) === filter.fenceMax;
}
