/**
 * Every `FenceRejected` as of the view: sequence, resource, refused holder and fence, current
 * holder and fence, time, reporting gate. Newest first; rows are virtualised, so thousands of
 * rejections cost only the rows in view. Selecting a row opens its investigation. Above it, every
 * `RejectionsMissing`: refusals a gate made but whose reports never reached the log.
 */
import { memo, useMemo, useState, type ReactElement } from 'react';
import {
  formatWallDateTime,
  reportedLate,
  wallTimeColumn,
  type MissingRejectionsView,
  type RejectionView,
} from '@lease-fence/dashboard-model';
import { seqRange } from '../app/event-table.js';
import { visibleRows } from '../timeline/lane-layout.js';

/** Props of {@link RejectionsTable}. */
export interface RejectionsTableProps {
  /** In log order (the table shows newest first); the filters' matches when a filter is set. */
  readonly rejections: readonly RejectionView[];
  /** Every rejection as of the view when `rejections` is filtered (the heading says "k of N"). @defaultValue undefined */
  readonly of?: number | undefined;
  /** Refusals known to be missing, in log order. @defaultValue [] */
  readonly missing?: readonly MissingRejectionsView[];
  readonly selectedPosition: number | undefined;
  readonly onSelect: (position: number) => void;
  /** Height of the scrolling body, CSS pixels. @defaultValue 280 */
  readonly heightPx?: number;
}

const ROW_HEIGHT_PX = 26;

/** The rejections table (memoised: it renders when its props change, not with every loaded batch). */
export const RejectionsTable = memo(function RejectionsTable({
  rejections,
  of,
  missing = [],
  selectedPosition,
  onSelect,
  heightPx = 280,
}: RejectionsTableProps): ReactElement {
  const [scrollTop, setScrollTop] = useState(0);
  const count = rejections.length;
  const time = useMemo(
    () =>
      wallTimeColumn(
        'time',
        rejections.map((r) => r.stamp.wallMillis),
      ),
    [rejections],
  );
  const { first, last } = visibleRows(scrollTop, heightPx, ROW_HEIGHT_PX, count, 6);
  const rows: RejectionView[] = [];
  for (let i = first; i < last; i += 1) {
    const r = rejections[count - 1 - i];
    if (r !== undefined) rows.push(r);
  }
  return (
    <section className="panel rejections" aria-label="Rejections">
      <h3 data-testid="rejections-heading">
        Rejections (
        {of === undefined
          ? count.toLocaleString('en-US')
          : `${count.toLocaleString('en-US')} of ${of.toLocaleString('en-US')} match the filters`}
        )
      </h3>
      {missing.length > 0 && (
        <ul className="missing-rejections" data-testid="missing-rejections" aria-label="Missing rejections">
          {missing.map((m) => (
            <li
              key={m.stamp.position}
              data-testid="missing-rejection-row"
              data-position={m.stamp.position}
              title={`RejectionsMissing at position ${m.stamp.position}, ${formatWallDateTime(m.stamp.wallMillis)}`}
            >
              <span className="badge">missing</span> gate {m.gateId} on {m.resource}: refusal
              {m.fromSeq === m.throughSeq ? '' : 's'} seq {seqRange(m.fromSeq, m.throughSeq)} never reached the log (seq{' '}
              {m.reportedSeq} did) — evidence of overlapping holders was lost
            </li>
          ))}
        </ul>
      )}
      {count === 0 && of !== undefined && of > 0 ? (
        <p className="muted" data-testid="rejections-empty">
          No rejection matches the filters (a rejection matches on its refused or its floor holder · fence).
        </p>
      ) : count === 0 ? (
        <p className="muted" data-testid="rejections-empty">
          No stale write has been refused as of this position. Gates report refusals with{' '}
          <code>POST /v1/resources/:resource/rejections</code>.
        </p>
      ) : (
        <div
          className="table-scroll"
          // A fixed height with `contain: strict`: a layout and paint boundary, so rows coming and
          // going while live re-lay out the table alone, not the whole page.
          style={{ height: heightPx, contain: 'strict' }}
          onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        >
          <table data-testid="rejections-table" aria-rowcount={count}>
            <thead>
              <tr>
                <th>position</th>
                <th>seq</th>
                <th>resource</th>
                <th title="refused holder · fence">refused · fence</th>
                <th title="the gate's floor: current holder · fence">floor · fence</th>
                <th title="coordinator wall clock, UTC">{time.header}</th>
                <th className="gate">gate</th>
              </tr>
            </thead>
            <tbody>
              {first > 0 && <tr style={{ height: first * ROW_HEIGHT_PX }} aria-hidden="true" />}
              {rows.map((r) => (
                <tr
                  key={r.stamp.position}
                  data-testid="rejection-row"
                  data-position={r.stamp.position}
                  className={r.stamp.position === selectedPosition ? 'selected' : undefined}
                  style={{ height: ROW_HEIGHT_PX }}
                  onClick={() => onSelect(r.stamp.position)}
                  tabIndex={0}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') onSelect(r.stamp.position);
                  }}
                >
                  <td>{r.stamp.position}</td>
                  <td>{r.seq}</td>
                  <td title={r.resource}>{r.resource}</td>
                  <td className="refused">
                    {r.rejected.holderId} · {r.rejected.fence}
                    {r.kind === 'double-grant' && <span className="badge">double grant</span>}
                  </td>
                  <td>
                    {r.current.holderId} · {r.current.fence}
                  </td>
                  <td
                    title={
                      r.gateWallMillis === undefined
                        ? 'coordinator wall clock, UTC'
                        : `gate wall clock ${formatWallDateTime(r.gateWallMillis)}`
                    }
                  >
                    {time.format(r.stamp.wallMillis)}
                    {reportedLate(r) && (
                      <span
                        className="badge"
                        data-testid="reported-late-badge"
                        title={`refused at ${formatWallDateTime(r.gateWallMillis as number)} by gate ${r.gateId}'s own clock; recorded when its outbox delivered it`}
                      >
                        reported late
                      </span>
                    )}
                  </td>
                  <td className="gate" title={r.gateId}>
                    {r.gateId}
                  </td>
                </tr>
              ))}
              {last < count && <tr style={{ height: (count - last) * ROW_HEIGHT_PX }} aria-hidden="true" />}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
});
