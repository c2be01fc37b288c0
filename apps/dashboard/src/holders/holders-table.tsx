/**
 * The current-holders table: "who holds what right now, or at 13:24:40?". One row per resource
 * whose lease is current as of the view (live: now; time-travelling: the as-of position and
 * time): resource, holder (in its colour), fence, held for, expires in (or when the projected
 * expiry passed without the log recording it yet), renewals. Sortable by every column, filtered
 * by a resource or holder substring, and virtualised: 500 resources cost only the rows in view.
 * The rows come from `currentHolders` in `@lease-fence/dashboard-model`.
 */
import { memo, useContext, useMemo, useState, type ReactElement } from 'react';
import {
  DEFAULT_HOLDER_SORT,
  filterHolderRows,
  formatDuration,
  formatWallTime,
  sortHolderRows,
  type HolderRow,
  type HolderSort,
  type HolderSortKey,
} from '@lease-fence/dashboard-model';
import { HolderColorContext } from '../app/holder-colors.js';
import { visibleRows } from '../timeline/lane-layout.js';

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
}

const ROW_HEIGHT_PX = 26;

const COLUMNS: readonly { readonly key: HolderSortKey; readonly label: string; readonly title: string }[] = [
  { key: 'resource', label: 'resource', title: 'the resource' },
  { key: 'holder', label: 'holder', title: 'the agent holding the lease' },
  { key: 'fence', label: 'fence', title: "the lease's fence (generation of ownership)" },
  { key: 'heldFor', label: 'held for', title: 'since the grant, to the as-of time (now when live)' },
  {
    key: 'expiresIn',
    label: 'expires',
    title:
      "the coordinator's expiry (a monotonic reading) projected to its wall clock from the event that set it, relative to the as-of time",
  },
  { key: 'renewals', label: 'renewals', title: 'renewals of this lease (same fence) so far' },
];

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
export const HoldersTable = memo(function HoldersTable({
  rows,
  asOfLabel,
  loadingNote,
  heightPx = 240,
  initialSort = DEFAULT_HOLDER_SORT,
  initialFilter = '',
}: HoldersTableProps): ReactElement {
  const colorOf = useContext(HolderColorContext);
  const [sort, setSort] = useState<HolderSort>(initialSort);
  const [filter, setFilter] = useState(initialFilter);
  const [scrollTop, setScrollTop] = useState(0);
  const shown = useMemo(() => sortHolderRows(filterHolderRows(rows, filter), sort), [rows, filter, sort]);
  const count = shown.length;
  const { first, last } = visibleRows(scrollTop, heightPx, ROW_HEIGHT_PX, count, 6);
  const toggle = (key: HolderSortKey): void =>
    setSort((current) =>
      current.key === key
        ? { key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' }
        : { key, direction: 'ascending' },
    );
  return (
    <section
      className="panel holders"
      aria-label="Current holders"
      data-testid="holders-panel"
      data-total={rows.length}
    >
      <h3>
        Current holders ({filter.trim() === '' ? rows.length : `${count} of ${rows.length}`}){' '}
        <span className="muted" data-testid="holders-as-of">
          {asOfLabel}
        </span>
      </h3>
      <label className="holders-filter">
        <span className="sr-only">Filter current holders by resource or holder</span>
        <input
          type="search"
          data-testid="holders-filter"
          placeholder="resource or holder"
          value={filter}
          onChange={(e) => {
            setFilter(e.target.value);
            setScrollTop(0);
          }}
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
        <div
          className="table-scroll"
          style={{ height: Math.min(heightPx, (count + 1) * ROW_HEIGHT_PX + 4) }}
          onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        >
          <table data-testid="holders-table" aria-rowcount={count + 1}>
            <thead>
              <tr>
                {COLUMNS.map((column) => (
                  <th
                    key={column.key}
                    scope="col"
                    title={column.title}
                    aria-sort={sort.key === column.key ? sort.direction : 'none'}
                  >
                    <button
                      type="button"
                      className="link"
                      data-testid={`holders-sort-${column.key}`}
                      onClick={() => toggle(column.key)}
                    >
                      {column.label}
                      {sort.key === column.key ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ''}
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {first > 0 && <tr style={{ height: first * ROW_HEIGHT_PX }} aria-hidden="true" />}
              {shown.slice(first, last).map((row) => (
                <tr
                  key={row.resource}
                  data-testid="holder-row"
                  data-resource={row.resource}
                  data-holder={row.holderId}
                  data-fence={row.fence}
                  data-renewals={row.renewals}
                  data-held-for-millis={row.heldForMillis}
                  data-expires-in-millis={row.expiresInMillis}
                  data-expiry-kind={row.expiryKind}
                  style={{ height: ROW_HEIGHT_PX }}
                >
                  <td title={row.resource}>{row.resource}</td>
                  <td>
                    <span className="swatch" style={{ background: colorOf(row.holderId) }} aria-hidden="true" />{' '}
                    {row.holderId}
                  </td>
                  <td>{row.fence}</td>
                  <td
                    title={`since ${formatWallTime(row.heldSinceWallMillis)}${row.grantPosition === undefined ? '' : ` (grant at position ${row.grantPosition})`}`}
                  >
                    {formatDuration(row.heldForMillis)}
                  </td>
                  <td className={row.expiryKind === 'passed' ? 'warn' : undefined}>
                    {expiryText(row)}
                    {row.expirySource === 'carried' && <span className="badge">carried across a restart</span>}
                  </td>
                  <td>{row.renewals}</td>
                </tr>
              ))}
              {last < count && <tr style={{ height: (count - last) * ROW_HEIGHT_PX }} aria-hidden="true" />}
            </tbody>
          </table>
          {count === 0 && (
            <p className="muted" data-testid="holders-none-match">
              No current holder matches “{filter.trim()}”.
            </p>
          )}
        </div>
      )}
    </section>
  );
});
