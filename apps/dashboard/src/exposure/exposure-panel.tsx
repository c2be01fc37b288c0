/**
 * The exposure panel: per resource, how long an older holder could still have written after each
 * handover (p50 / p99 / max of the measured windows), with the counts of handovers, unknown ones,
 * ones still open and fence-first ones. Worst first; every column sorts. The figures are those of
 * the view state it is given, so it follows the time-travel position; while live they are
 * recomputed at most once a second.
 */
import { memo, useMemo, useState, type ReactElement } from 'react';
import {
  compareExposureWorstFirst,
  exposureSummaries,
  formatDuration,
  type ExposureSummary,
  type ViewState,
} from '@lease-fence/dashboard-model';
import { countOf } from '../app/count-words.js';
import { useSampled } from '../app/use-sampled.js';
import { VirtualTable, type TableColumn, type TableSort } from '../app/virtual-table.js';

/** Props of {@link ExposurePanel}. */
export interface ExposurePanelProps {
  /** The view state as of the position shown (live: the head). */
  readonly state: ViewState;
  /**
   * The log position `state` is as of, read when the parent renders. The live fold changes in place
   * (the same `state` object), so this is what tells the memoised panel that there is more to look
   * at. @defaultValue `state.position`
   */
  readonly asOfPosition?: number;
  /** Live: sample the state once a second of `nowMillis` instead of at every position. */
  readonly live: boolean;
  /** A clock for the live sampling, epoch milliseconds. */
  readonly nowMillis: () => number;
  /** Called with a resource when its row is picked (e.g. to select its lane). */
  readonly onPick?: ((resource: string) => void) | undefined;
  /** Height of the scrolling body, CSS pixels. @defaultValue 240 */
  readonly heightPx?: number;
}

/** A sortable column of the panel. */
export type ExposureColumn =
  'worst' | 'resource' | 'handovers' | 'p50' | 'p99' | 'max' | 'unknown' | 'open' | 'fenceFirst';

const ROW_HEIGHT_PX = 26;

/** A window in milliseconds, or `—` when none was measured (never 0 for "unknown"). */
function millisText(millis: number | undefined): string {
  return millis === undefined ? '—' : formatDuration(millis);
}

/** The sort of the panel: a column, or `worst` (worst first, the default, no header marked). */
type ExposureSort = TableSort<ExposureColumn>;

const WORST_FIRST: ExposureSort = { key: 'worst', direction: 'descending' };

/**
 * The columns; every one but the resource sorts larger first on the first click. A picked resource
 * calls `onPick`, when given.
 */
function exposureColumns(
  onPick: ((resource: string) => void) | undefined,
): readonly TableColumn<ExposureSummary, ExposureColumn>[] {
  const columns: readonly Omit<TableColumn<ExposureSummary, ExposureColumn>, 'firstDirection'>[] = [
    {
      key: 'resource',
      label: 'resource',
      title: 'the resource (lane)',
      cell: (r) =>
        onPick === undefined ? (
          r.resource
        ) : (
          <button type="button" className="link" onClick={() => onPick(r.resource)}>
            {r.resource}
          </button>
        ),
    },
    {
      key: 'handovers',
      label: 'handovers',
      title: 'grants to a new generation after an earlier holder',
      cell: (r) => r.handovers,
    },
    { key: 'p50', label: 'p50', title: 'median measured window (nearest rank)', cell: (r) => millisText(r.p50Millis) },
    {
      key: 'p99',
      label: 'p99',
      title: '99th percentile of the measured windows (nearest rank)',
      cell: (r) => millisText(r.p99Millis),
    },
    { key: 'max', label: 'max', title: 'longest measured window', cell: (r) => millisText(r.maxMillis) },
    {
      key: 'unknown',
      label: 'unknown',
      title: 'handovers whose generation ended with no gate evidence',
      cell: (r) => r.unknown,
    },
    { key: 'open', label: 'open', title: 'handovers still waiting for gate evidence', cell: (r) => r.open },
    {
      key: 'fenceFirst',
      label: 'fence-first',
      title: 'handovers whose fence a gate admitted before the grant (0 ms)',
      cell: (r) => r.fenceFirst,
    },
  ];
  return columns.map((c) => ({ ...c, firstDirection: c.key === 'resource' ? 'ascending' : 'descending' }));
}

const sortBy = (rows: readonly ExposureSummary[], sort: ExposureSort): readonly ExposureSummary[] =>
  sortExposureRows(rows, sort.key, sort.direction === 'descending');

function exposureRowAttributes(r: ExposureSummary): Readonly<Record<string, string | number | undefined>> {
  return {
    'data-testid': 'exposure-row',
    'data-resource': r.resource,
    'data-handovers': r.handovers,
    'data-measured': r.measured,
    'data-unknown': r.unknown,
    'data-open': r.open,
    'data-fence-first': r.fenceFirst,
    'data-p50-millis': r.p50Millis ?? '',
    'data-p99-millis': r.p99Millis ?? '',
    'data-max-millis': r.maxMillis ?? '',
  };
}

/**
 * Orders rows by `column`: `worst` is the default (see `compareExposureWorstFirst`); a number
 * column puts larger first when `descending`, and rows with no value last either way.
 */
export function sortExposureRows(
  rows: readonly ExposureSummary[],
  column: ExposureColumn,
  descending: boolean,
): ExposureSummary[] {
  const sorted = rows.slice();
  if (column === 'worst') return sorted.sort(compareExposureWorstFirst);
  if (column === 'resource')
    return sorted.sort(
      (a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0) * (descending ? -1 : 1),
    );
  const valueOf = (row: ExposureSummary): number | undefined => {
    switch (column) {
      case 'p50':
        return row.p50Millis;
      case 'p99':
        return row.p99Millis;
      case 'max':
        return row.maxMillis;
      default:
        return row[column];
    }
  };
  return sorted.sort((a, b) => {
    const va = valueOf(a);
    const vb = valueOf(b);
    const missing = (va === undefined ? 1 : 0) - (vb === undefined ? 1 : 0);
    if (va === undefined || vb === undefined) return missing || compareExposureWorstFirst(a, b);
    return (descending ? vb - va : va - vb) || compareExposureWorstFirst(a, b);
  });
}

/**
 * The exposure panel (memoised: it renders when its props change, so a live parent passes a new
 * `asOfPosition` as the log grows; the rows themselves are rebuilt at most once a second while live).
 */
export const ExposurePanel = memo(function ExposurePanel({
  state,
  live,
  nowMillis,
  onPick,
  heightPx = 240,
}: ExposurePanelProps): ReactElement {
  const sampled = useSampled(
    { state, position: state.position },
    live ? `live:${Math.floor(nowMillis() / 1_000)}` : `at:${state.position}`,
  );
  // Computed in the render that took the sample, so the rows are as of `position` (a live state moves on in place).
  const summary = useMemo(() => {
    const rows = exposureSummaries(sampled.state);
    const totals = rows.reduce(
      (t, r) => ({
        handovers: t.handovers + r.handovers,
        unknown: t.unknown + r.unknown,
        fenceFirst: t.fenceFirst + r.fenceFirst,
      }),
      { handovers: 0, unknown: 0, fenceFirst: 0 },
    );
    return { rows, totals, position: sampled.position };
  }, [sampled]);
  const [sort, setSort] = useState<ExposureSort>(WORST_FIRST);
  const columns = useMemo(() => exposureColumns(onPick), [onPick]);
  // The same element while the sample, sort and size are: a live parent re-renders this panel
  // four times a second (its asOfPosition), and React skips an unchanged element's subtree.
  return useMemo(
    () => (
      <section
        className="panel exposure"
        aria-label="Exposure at handovers"
        data-testid="exposure-panel"
        data-position={summary.position}
        data-sort={`${sort.key}:${sort.direction === 'descending' ? 'desc' : 'asc'}`}
      >
        <h3>
          {`Exposure at handovers (${countOf(summary.totals.handovers, 'handover')}, ` +
            `${summary.totals.unknown.toLocaleString('en-US')} unknown, ` +
            `${summary.totals.fenceFirst.toLocaleString('en-US')} fence-first)`}
          {sort.key !== 'worst' && (
            <>
              {' '}
              <button type="button" className="link" onClick={() => setSort(WORST_FIRST)}>
                worst first
              </button>
            </>
          )}
        </h3>
        <p className="muted">
          From a new grant until the log first shows the resource&apos;s gate floor at the new fence (a gate admit, a
          floor report, or a refusal of an older fence): meanwhile an older holder&apos;s write would still have been
          admitted. Fence-first handovers are 0. <em>Unknown</em>: the generation ended with no gate evidence — not 0.
          As of position {summary.position.toLocaleString('en-US')}.
        </p>
        {summary.rows.length === 0 ? (
          <p className="muted" data-testid="exposure-empty">
            No handover as of this position (a resource&apos;s first grant is not one).
          </p>
        ) : (
          <VirtualTable
            rows={summary.rows}
            columns={columns}
            sort={sort}
            onSortChange={setSort}
            sortRows={sortBy}
            rowAttributes={exposureRowAttributes}
            rowHeightPx={ROW_HEIGHT_PX}
            heightPx={heightPx}
            tableTestId="exposure-table"
            sortTestIdPrefix="exposure-sort"
          />
        )}
      </section>
    ),
    [summary, sort, columns, heightPx],
  );
});
