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
import { useSampled } from '../app/use-sampled.js';
import { visibleRows } from '../timeline/lane-layout.js';

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

const COLUMNS: readonly { readonly key: ExposureColumn; readonly label: string; readonly title: string }[] = [
  { key: 'resource', label: 'resource', title: 'the resource (lane)' },
  { key: 'handovers', label: 'handovers', title: 'grants to a new generation after an earlier holder' },
  { key: 'p50', label: 'p50', title: 'median measured window (nearest rank)' },
  { key: 'p99', label: 'p99', title: '99th percentile of the measured windows (nearest rank)' },
  { key: 'max', label: 'max', title: 'longest measured window' },
  { key: 'unknown', label: 'unknown', title: 'handovers whose generation ended with no gate evidence' },
  { key: 'open', label: 'open', title: 'handovers still waiting for gate evidence' },
  { key: 'fenceFirst', label: 'fence-first', title: 'handovers whose fence a gate admitted before the grant (0 ms)' },
];

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
  const summary = useMemo(() => ({ rows: exposureSummaries(sampled.state), position: sampled.position }), [sampled]);
  const [sort, setSort] = useState<{ column: ExposureColumn; descending: boolean }>({
    column: 'worst',
    descending: true,
  });
  const rows = useMemo(
    () => sortExposureRows(summary.rows, sort.column, sort.descending),
    [summary, sort.column, sort.descending],
  );
  const [scrollTop, setScrollTop] = useState(0);
  const { first, last } = visibleRows(scrollTop, heightPx, ROW_HEIGHT_PX, rows.length, 6);
  const totals = summary.rows.reduce(
    (t, r) => ({
      handovers: t.handovers + r.handovers,
      unknown: t.unknown + r.unknown,
      fenceFirst: t.fenceFirst + r.fenceFirst,
    }),
    { handovers: 0, unknown: 0, fenceFirst: 0 },
  );
  const pick = (column: ExposureColumn): void =>
    setSort((s) => ({ column, descending: s.column === column ? !s.descending : column !== 'resource' }));
  return (
    <section
      className="panel exposure"
      aria-label="Exposure at handovers"
      data-testid="exposure-panel"
      data-position={summary.position}
      data-sort={`${sort.column}:${sort.descending ? 'desc' : 'asc'}`}
    >
      <h3>
        Exposure at handovers ({totals.handovers.toLocaleString('en-US')} handovers,{' '}
        {totals.unknown.toLocaleString('en-US')} unknown, {totals.fenceFirst.toLocaleString('en-US')} fence-first)
        {sort.column !== 'worst' && (
          <>
            {' '}
            <button type="button" className="link" onClick={() => setSort({ column: 'worst', descending: true })}>
              worst first
            </button>
          </>
        )}
      </h3>
      <p className="muted">
        From a new grant until the log first shows the resource&apos;s gate floor at the new fence (a gate admit, a
        floor report, or a refusal of an older fence): meanwhile an older holder&apos;s write would still have been
        admitted. Fence-first handovers are 0. <em>Unknown</em>: the generation ended with no gate evidence — not 0. As
        of position {summary.position.toLocaleString('en-US')}.
      </p>
      {rows.length === 0 ? (
        <p className="muted" data-testid="exposure-empty">
          No handover as of this position (a resource&apos;s first grant is not one).
        </p>
      ) : (
        <div
          className="table-scroll"
          style={{ maxHeight: heightPx }}
          onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        >
          <table data-testid="exposure-table" aria-rowcount={rows.length}>
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th
                    key={c.key}
                    title={c.title}
                    aria-sort={sort.column === c.key ? (sort.descending ? 'descending' : 'ascending') : undefined}
                  >
                    <button
                      type="button"
                      className="link"
                      onClick={() => pick(c.key)}
                      data-testid={`exposure-sort-${c.key}`}
                    >
                      {c.label}
                      {sort.column === c.key ? (sort.descending ? ' ▼' : ' ▲') : ''}
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {first > 0 && (
                <tr aria-hidden="true" style={{ height: first * ROW_HEIGHT_PX }}>
                  <td colSpan={COLUMNS.length} />
                </tr>
              )}
              {rows.slice(first, last).map((r) => (
                <tr
                  key={r.resource}
                  data-testid="exposure-row"
                  data-resource={r.resource}
                  data-handovers={r.handovers}
                  data-measured={r.measured}
                  data-unknown={r.unknown}
                  data-open={r.open}
                  data-fence-first={r.fenceFirst}
                  data-p50-millis={r.p50Millis ?? ''}
                  data-p99-millis={r.p99Millis ?? ''}
                  data-max-millis={r.maxMillis ?? ''}
                  style={{ height: ROW_HEIGHT_PX }}
                >
                  <td>
                    {onPick === undefined ? (
                      r.resource
                    ) : (
                      <button type="button" className="link" onClick={() => onPick(r.resource)}>
                        {r.resource}
                      </button>
                    )}
                  </td>
                  <td>{r.handovers}</td>
                  <td>{millisText(r.p50Millis)}</td>
                  <td>{millisText(r.p99Millis)}</td>
                  <td>{millisText(r.maxMillis)}</td>
                  <td>{r.unknown}</td>
                  <td>{r.open}</td>
                  <td>{r.fenceFirst}</td>
                </tr>
              ))}
              {last < rows.length && (
                <tr aria-hidden="true" style={{ height: (rows.length - last) * ROW_HEIGHT_PX }}>
                  <td colSpan={COLUMNS.length} />
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
});

/** A window in milliseconds, or `—` when none was measured (never 0 for "unknown"). */
function millisText(millis: number | undefined): string {
  return millis === undefined ? '—' : formatDuration(millis);
}
