/**
 * Lane filters (resource pattern, holder, has-rejections, fence range) and "k of N lanes".
 */
import { useState, type ReactElement } from 'react';
import { parseFenceFilterInput, type LaneFilter } from '@lease-fence/dashboard-model';

/** Props of {@link FilterBar}. */
export interface FilterBarProps {
  readonly filter: LaneFilter;
  readonly shown: number;
  readonly total: number;
  readonly onChange: (filter: LaneFilter) => void;
}

/** Filters remove lanes; the count says how many are left. */
export function FilterBar({ filter, shown, total, onChange }: FilterBarProps): ReactElement {
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
      <span className="lane-count" data-testid="lane-count" data-shown={shown} data-total={total}>
        {shown.toLocaleString('en-US')} of {total.toLocaleString('en-US')} lanes
      </span>
    </div>
  );
}

function sameRange(
  range: { readonly fenceMin?: number; readonly fenceMax?: number } | undefined,
  filter: LaneFilter,
): boolean {
  return (range?.fenceMin ?? undefined) === filter.fenceMin && (range?.fenceMax ?? undefined) === filter.fenceMax;
}
