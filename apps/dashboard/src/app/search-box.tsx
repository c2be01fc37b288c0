/**
 * Search by fence, holder, requestId or log position; each result moves the view.
 */
import { memo, useState, type ReactElement } from 'react';
import { formatWallTime, type SearchHit } from '@lease-fence/dashboard-model';

/** Props of {@link SearchBox}. */
export interface SearchBoxProps {
  readonly query: string;
  readonly hits: readonly SearchHit[];
  readonly onQuery: (query: string) => void;
  readonly onPick: (hit: SearchHit) => void;
}

/** A search field and its results (memoised: it renders when its props change, not with every loaded batch). */
export const SearchBox = memo(function SearchBox({ query, hits, onQuery, onPick }: SearchBoxProps): ReactElement {
  // The results close once a hit is picked (or on Escape); typing or focusing the box opens them again.
  const [open, setOpen] = useState(true);
  return (
    <div className="search-box">
      <input
        type="search"
        placeholder="fence, holder, requestId, #position"
        value={query}
        onChange={(e) => {
          setOpen(true);
          onQuery(e.target.value);
        }}
        onFocus={() => setOpen(true)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') setOpen(false);
        }}
        data-testid="search"
        aria-label="Search"
        aria-expanded={open && query.trim() !== ''}
      />
      {open && query.trim() !== '' && (
        <ul className="search-results" data-testid="search-results">
          {hits.length === 0 && <li className="muted">Nothing matches “{query}” as of this position.</li>}
          {hits.map((hit, i) => (
            <li key={i}>
              <button
                type="button"
                onClick={() => {
                  setOpen(false);
                  onPick(hit);
                }}
                data-testid="search-hit"
                data-kind={hit.kind}
              >
                {describeHit(hit)}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
});

function describeHit(hit: SearchHit): string {
  switch (hit.kind) {
    case 'position':
      return `position ${hit.position}: ${hit.type}${hit.resource === undefined ? '' : ` on ${hit.resource}`}`;
    case 'fence':
      return `fence ${hit.fence}: ${hit.holderId} on ${hit.resource} from ${formatWallTime(hit.startWallMillis)}`;
    case 'request':
      return `request ${hit.requestId}: ${hit.type} on ${hit.resource} (position ${hit.position})`;
    case 'holder':
      return `holder ${hit.holderId}: ${hit.generations} generations on ${hit.resources.length} resources`;
    case 'resource':
      return `resource ${hit.resource}: ${hit.generations} generations`;
  }
}
