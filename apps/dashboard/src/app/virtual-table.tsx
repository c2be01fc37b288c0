/**
 * One virtualised, sortable table for the dashboard's panels (current holders, exposure): a header
 * of sort buttons (▲ ascending, ▼ descending, `aria-sort` on the column header), and a body that
 * renders only the rows in view between two spacer rows, so 500 resources cost only the rows on
 * screen. The sort state is the caller's (it may show it elsewhere, or sort by something that is
 * not a column); the table orders the rows it is given by that sort.
 */
import { useMemo, useState, type ReactElement, type ReactNode } from 'react';
import { visibleRows } from '../timeline/lane-layout.js';

/** Which way a column sorts. */
export type SortDirection = 'ascending' | 'descending';

/**
 * A sort of a {@link VirtualTable}: by the column `key`, one way. `key` may name no column (e.g.
 * the exposure panel's "worst first"): then no header is marked and the caller's sort applies.
 */
export interface TableSort<K extends string> {
  readonly key: K;
  readonly direction: SortDirection;
}

/** A column of a {@link VirtualTable}. */
export interface TableColumn<Row, K extends string> {
  /** The sort key of the column, and the suffix of its sort button's test id. */
  readonly key: K;
  /** The header text. */
  readonly label: string;
  /** The header tooltip: what the column means. */
  readonly title: string;
  /** The cell of `row` in this column. */
  readonly cell: (row: Row) => ReactNode;
  /** Class of the cell of `row`. @defaultValue none */
  readonly cellClassName?: (row: Row) => string | undefined;
  /** Tooltip of the cell of `row`. @defaultValue none */
  readonly cellTitle?: (row: Row) => string | undefined;
  /** Ascending order of two rows by this column (negative: `a` first). @defaultValue unsortable by comparator */
  readonly compare?: (a: Row, b: Row) => number;
  /** The direction a first click on this column sorts. @defaultValue 'ascending' */
  readonly firstDirection?: SortDirection;
}

/** The rows to render for a scroll position, and the heights of the spacer rows around them. */
export interface TableWindow {
  /** Index of the first rendered row. */
  readonly first: number;
  /** Index one past the last rendered row. */
  readonly last: number;
  /** Height of the spacer row above the rendered rows, CSS pixels (0: none). */
  readonly topSpacerPx: number;
  /** Height of the spacer row below the rendered rows, CSS pixels (0: none). */
  readonly bottomSpacerPx: number;
}

/** Rows rendered beyond each edge of the viewport, so a short scroll shows no gap. */
const OVERSCAN_ROWS = 6;

/**
 * The window of rows to render at `scrollTopPx` of a body `viewportHeightPx` tall, with
 * {@link OVERSCAN_ROWS} more on each side (see `visibleRows`), and the spacers that keep the
 * scroll height that of all `rowCount` rows.
 */
export function tableWindow(
  scrollTopPx: number,
  viewportHeightPx: number,
  rowHeightPx: number,
  rowCount: number,
): TableWindow {
  const { first, last } = visibleRows(scrollTopPx, viewportHeightPx, rowHeightPx, rowCount, OVERSCAN_ROWS);
  return { first, last, topSpacerPx: first * rowHeightPx, bottomSpacerPx: (rowCount - last) * rowHeightPx };
}

/**
 * The sort after a click on the header of `column`: the same column flips its direction; another
 * column sorts its `firstDirection` (ascending unless the column says otherwise).
 */
export function nextSort<Row, K extends string>(current: TableSort<K>, column: TableColumn<Row, K>): TableSort<K> {
  if (current.key === column.key)
    return { key: column.key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' };
  return { key: column.key, direction: column.firstDirection ?? 'ascending' };
}

/**
 * `rows` ordered by `sort` with the comparator of its column (reversed when descending; ties keep
 * their order, the sort being stable), or unchanged when that column has none.
 */
export function sortByColumn<Row, K extends string>(
  rows: readonly Row[],
  columns: readonly TableColumn<Row, K>[],
  sort: TableSort<K>,
): readonly Row[] {
  const compare = columns.find((c) => c.key === sort.key)?.compare;
  if (compare === undefined) return rows;
  const sign = sort.direction === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => sign * compare(a, b));
}

/** Props of {@link VirtualTable}. */
export interface VirtualTableProps<Row, K extends string> {
  /** The rows, already filtered, in any order (`sortRows` orders them). */
  readonly rows: readonly Row[];
  /** The columns, left to right (a stable array: the sorted rows are memoised on it). */
  readonly columns: readonly TableColumn<Row, K>[];
  /** The current sort (the caller keeps it). */
  readonly sort: TableSort<K>;
  /** Called with the sort a header click asks for (see {@link nextSort}). */
  readonly onSortChange: (sort: TableSort<K>) => void;
  /**
   * Orders the rows for `sort` (re-run when the rows, columns, sort or this function change: pass a
   * stable one). @defaultValue {@link sortByColumn} with the columns' comparators
   */
  readonly sortRows?: (rows: readonly Row[], sort: TableSort<K>) => readonly Row[];
  /** Extra attributes of a row's `<tr>` (its test id and `data-*` attributes), in the order given. */
  readonly rowAttributes: (row: Row) => Readonly<Record<string, string | number | undefined>>;
  /** Height of every row, CSS pixels. */
  readonly rowHeightPx: number;
  /** Maximum height of the scrolling body, CSS pixels; also the viewport the window is cut for. */
  readonly heightPx: number;
  /** Test id of the `<table>`. */
  readonly tableTestId: string;
  /** Prefix of each sort button's test id: `<prefix>-<column key>`. */
  readonly sortTestIdPrefix: string;
  /** Shown under the table (inside the scrolling body), e.g. "no row matches". @defaultValue none */
  readonly footer?: ReactNode;
}

/**
 * A virtualised table sorted by one column at a time. Renders only the rows of
 * {@link tableWindow} for the body's scroll position; `aria-rowcount` counts every row plus the
 * header, so assistive technology announces the whole table. Rows are keyed by their index in the
 * sorted rows: a `<tr>` stays in its place across renders and shows whichever row is there now.
 */
export function VirtualTable<Row, K extends string>({
  rows,
  columns,
  sort,
  onSortChange,
  sortRows,
  rowAttributes,
  rowHeightPx,
  heightPx,
  tableTestId,
  sortTestIdPrefix,
  footer,
}: VirtualTableProps<Row, K>): ReactElement {
  const [scrollTopPx, setScrollTopPx] = useState(0);
  const sorted = useMemo(
    () => (sortRows === undefined ? sortByColumn(rows, columns, sort) : sortRows(rows, sort)),
    [rows, columns, sort, sortRows],
  );
  const count = sorted.length;
  const { first, last, topSpacerPx, bottomSpacerPx } = tableWindow(scrollTopPx, heightPx, rowHeightPx, count);
  // A body its rows overflow is exactly heightPx tall: said so, with `contain: strict`, it is a
  // layout and paint boundary, so rows coming and going while live re-lay out the table alone,
  // not the whole page. A shorter table keeps its own height.
  const fills = count * rowHeightPx >= heightPx;
  return (
    <div
      className="table-scroll"
      style={fills ? { height: heightPx, contain: 'strict' } : { maxHeight: heightPx }}
      onScroll={(e) => setScrollTopPx(e.currentTarget.scrollTop)}
    >
      <table data-testid={tableTestId} aria-rowcount={count + 1}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th
                key={column.key}
                scope="col"
                title={column.title}
                aria-sort={sort.key === column.key ? sort.direction : 'none'}
              >
                <button
                  type="button"
                  className="link"
                  data-testid={`${sortTestIdPrefix}-${column.key}`}
                  onClick={() => onSortChange(nextSort(sort, column))}
                >
                  {column.label}
                  {sort.key === column.key ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {topSpacerPx > 0 && (
            <tr aria-hidden="true" data-spacer="top" style={{ height: topSpacerPx }}>
              <td colSpan={columns.length} />
            </tr>
          )}
          {sorted.slice(first, last).map((row, i) => (
            // Keyed by the row's index, not by what it shows: when rows come, go or re-sort (live, a
            // refresh every second), each <tr> keeps its place and only its cells' text and
            // attributes change, instead of React removing and re-inserting rows (new elements to
            // style, lay out and paint).
            <tr key={first + i} {...rowAttributes(row)} style={{ height: rowHeightPx }}>
              {columns.map((column) => (
                <td key={column.key} className={column.cellClassName?.(row)} title={column.cellTitle?.(row)}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
          {bottomSpacerPx > 0 && (
            <tr aria-hidden="true" data-spacer="bottom" style={{ height: bottomSpacerPx }}>
              <td colSpan={columns.length} />
            </tr>
          )}
        </tbody>
      </table>
      {footer}
    </div>
  );
}
