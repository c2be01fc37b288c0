/**
 * The current-holders table: "who holds what right now, or at 13:24:40?". One row per resource
 * whose lease is current as of the view (live: now; time-travelling: the as-of position and
 * time): resource, holder (in its colour), fence, held for, expires in (or when the projected
 * expiry passed without the log recording it yet), renewals. Sortable by every column; filtered
 * by the filter bar (a lease matches as its bar does, see `compileLeaseMatch`) and further by its
 * own resource or holder substring box; virtualised: 500 resources cost only the rows in view.
 * The rows come from `currentHolders` in `@lease-fence/dashboard-model`.
 */
import { memo, useContext, useMemo, useState, type ReactElement } from 'react';
import {
  DEFAULT_HOLDER_SORT,
  filterHolderRows,
  matchingHolderRows,
  formatDuration,
  formatWallTime,
  sortHolderRows,
  type HolderRow,
  type HolderSort,
  type HolderSortKey,
  type LeaseMatch,
} from '@lease-fence/dashboard-model';
import { HolderColorContext } from '../app/holder-colors.js';
import { VirtualTable, type TableColumn } from '../app/virtual-table.js';

/** Props of {@link HoldersTable}. */
export interface HoldersTableProps {
  /** `currentHolders` of the viewed state, in any order. */
  readonly rows: readonly HolderRow[];
  /** What the durations are measured from, for the heading: `now` or `as of position 1234 · 13:24:40.000Z`. */
  readonly asOfLabel: string;
  /**
   * Set while the log is not loaded up to the as-of position: shown instead of the rows, which
   * would be the holders of an earlier position. @defaultValue undefined (loaded)
   */
  readonly loadingNote?: string;
  /** Height of the scrolling body, CSS pixels. @defaultValue 240 */
  readonly heightPx?: number;
  /** The first sort (the header changes it). @defaultValue by resource, A → Z */
  readonly initialSort?: HolderSort;
  /** The first filter text (the box changes it). @defaultValue '' */
  readonly initialFilter?: string;
  /**
   * The filter bar's match (`compileLeaseMatch` of the view's filter): when a holder, fence or
   * resource filter is set, only the holders whose lease matches as its bar does are listed, and
   * the text box narrows those further. @defaultValue no filter
   */
  readonly match?: LeaseMatch;
}

const ROW_HEIGHT_PX = 26;

function holderRowAttributes(row: HolderRow): Readonly<Record<string, string | number | undefined>> {
  return {
    'data-testid': 'holder-row',
    'data-resource': row.resource,
    'data-holder': row.holderId,
    'data-fence': row.fence,
    'data-renewals': row.renewals,
    'data-held-for-millis': row.heldForMillis,
    'data-expires-in-millis': row.expiresInMillis,
    'data-expiry-kind': row.expiryKind,
  };
}

function expiryText(row: HolderRow): string {
  switch (row.expiryKind) {
    case 'ahead':
      return `in ${formatDuration(row.expiresInMillis ?? 0)} (projected)`;
    case 'passed':
      return `expired at ${formatWallTime(row.expiresAtWallMillis ?? NaN)} (projected; not logged yet)`;
    case 'unknown':
      return 'unknown (not in the loaded log)';
  }
}

/**
 * The current-holders table (memoised: while live its rows change at most once a second, so the
 * dashboard's per-batch renders skip it).
 */
/** The columns; `colorOf` colours the holder swatch. */
function holderColumns(colorOf: (holderId: string) => string): readonly TableColumn<HolderRow, HolderSortKey>[] {
  return [
    {
      key: 'resource',
      label: 'resource',
      title: 'the resource',
      cell: (row) => row.resource,
      cellTitle: (row) => row.resource,
    },
    {
      key: 'holder',
      label: 'holder',
      title: 'the agent holding the lease',
      cell: (row) => (
        <>
          <span className="swatch" style={{ background: colorOf(row.holderId) }} aria-hidden="true" /> {row.holderId}
        </>
      ),
    },
    { key: 'fence', label: 'fence', title: "the lease's fence (generation of ownership)", cell: (row) => row.fence },
    {
      key: 'heldFor',
      label: 'held for',
      title: 'since the grant, to the as-of time (now when live)',
      cell: (row) => formatDuration(row.heldForMillis),
      cellTitle: (row) =>
        `since ${formatWallTime(row.heldSinceWallMillis)}${row.grantPosition === undefined ? '' : ` (grant at position ${row.grantPosition})`}`,
    },
    {
      key: 'expiresIn',
      label: 'expires',
      title:
        "the coordinator's expiry (a monotonic reading) projected to its wall clock from the event that set it, relative to the as-of time",
      cell: (row) => (
        <>
          {expiryText(row)}
          {row.expirySource === 'carried' && <span className="badge">carried across a restart</span>}
        </>
      ),
      cellClassName: (row) => (row.expiryKind === 'passed' ? 'warn' : undefined),
    },
    {
      key: 'renewals',
      label: 'renewals',
      title: 'renewals of this lease (same fence) so far',
      cell: (row) => row.renewals,
    },
  ];
}

export const HoldersTable = memo(function HoldersTable({
  rows,
  asOfLabel,
  loadingNote,
  heightPx = 240,
  initialSort = DEFAULT_HOLDER_SORT,
  initialFilter = '',
  match,
}: HoldersTableProps): ReactElement {
  const colorOf = useContext(HolderColorContext);
  const columns = useMemo(() => holderColumns(colorOf), [colorOf]);
  const [sort, setSort] = useState<HolderSort>(initialSort);
  const [filter, setFilter] = useState(initialFilter);
  const matched = useMemo(() => (match === undefined ? rows : matchingHolderRows(rows, match)), [rows, match]);
  const filtering = match?.active === true;
  const shown = useMemo(() => filterHolderRows(matched, filter), [matched, filter]);
  const count = shown.length;
  const texted = filter.trim() !== '';
  return (
    <section
      className="panel holders"
      aria-label="Current holders"
      data-testid="holders-panel"
      data-total={rows.length}
    >
      <h3>
        Current holders ({filtering || texted ? `${count} of ${rows.length}` : rows.length}){' '}
        <span className="muted" data-testid="holders-as-of">
          {asOfLabel}
        </span>
      </h3>
      {filtering && (
        <p className="muted" data-testid="holders-match-count" data-matched={matched.length}>
          {matched.length.toLocaleString('en-US')} of {rows.length.toLocaleString('en-US')} holders match the filters (a
          lease matches on its resource and its holder · fence, as its bar does)
        </p>
      )}
      <label className="holders-filter">
        <span className="sr-only">Filter current holders by resource or holder</span>
        <input
          type="search"
          data-testid="holders-filter"
          placeholder="resource or holder"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </label>
      {loadingNote !== undefined ? (
        <p className="muted" data-testid="holders-loading">
          {loadingNote}
        </p>
      ) : rows.length === 0 ? (
        <p className="muted" data-testid="holders-empty">
          Nobody holds a lease at this point of the log.
        </p>
      ) : (
        <VirtualTable
          rows={shown}
          columns={columns}
          sort={sort}
          onSortChange={setSort}
          sortRows={sortHolderRows}
          rowAttributes={holderRowAttributes}
          rowHeightPx={ROW_HEIGHT_PX}
          heightPx={heightPx}
          tableTestId="holders-table"
          sortTestIdPrefix="holders-sort"
          footer={
            count === 0 && (
              <p className="muted" data-testid="holders-none-match">
                No current holder matches {texted ? `“${filter.trim()}”` : ''}
                {texted && filtering ? ' and ' : ''}
                {filtering ? 'the filters' : ''}.
              </p>
            )
          }
        />
      )}
    </section>
  );
});
