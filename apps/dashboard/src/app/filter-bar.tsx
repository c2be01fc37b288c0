/**
 * Lane filters (resource pattern, holder, has-rejections, fence range) and "k of N lanes".
 */
import { useEffect, useState, type ReactElement } from 'react';
import { parseFenceRange, type LaneFilter } from '../model/lane-filter.js';

/** Props of {@link FilterBar}. */
export interface FilterBarProps {
  readonly filter: LaneFilter;
  readonly shown: number;
  readonly total: number;
  readonly onChange: (filter: LaneFilter) => void;
}

/** Filters remove lanes; the count says how many are left. */
export function FilterBar({ filter, shown, total, onChange }: FilterBarProps): ReactElement {
  const rangeText = filter.fenceMin === undefined && filter.fenceMax === undefined ? '' : filter.fenceMin === filter.fenceMax ? String(filter.fenceMin) : `${filter.fenceMin ?? ''}-${filter.fenceMax ?? ''}`;
  const [fenceText, setFenceText] = useState(rangeText);
  useEffect(() => setFenceText(rangeText), [rangeText]);
  const without = (key: keyof LaneFilter): LaneFilter => Object.fromEntries(Object.entries(filter).filter(([k]) => k !== key)) as LaneFilter;
  return (
    <div className="filter-bar" data-testid="filter-bar">
      <label>resource <input placeholder="deploy-* or text" value={filter.resource ?? ''} onChange={(e) => onChange(e.target.value === '' ? without('resource') : { ...filter, resource: e.target.value })} data-testid="filter-resource" /></label>
      <label>holder <input placeholder="agent id" value={filter.holder ?? ''} onChange={(e) => onChange(e.target.value === '' ? without('holder') : { ...filter, holder: e.target.value })} data-testid="filter-holder" /></label>
      <label>fences <input placeholder="10-200" size={9} value={fenceText} onChange={(e) => {
        setFenceText(e.target.value);
        const range = parseFenceRange(e.target.value);
        const rest = Object.fromEntries(Object.entries(filter).filter(([k]) => k !== 'fenceMin' && k !== 'fenceMax')) as LaneFilter;
        if (e.target.value.trim() === '') onChange(rest);
        else if (range !== undefined) onChange({ ...rest, ...range });
      }} data-testid="filter-fence" /></label>
      <label><input type="checkbox" checked={filter.hasRejections === true} onChange={(e) => onChange(e.target.checked ? { ...filter, hasRejections: true } : without('hasRejections'))} data-testid="filter-rejections" /> with rejections</label>
      <span className="lane-count" data-testid="lane-count" data-shown={shown} data-total={total}>{shown.toLocaleString('en-US')} of {total.toLocaleString('en-US')} lanes</span>
    </div>
  );
}
