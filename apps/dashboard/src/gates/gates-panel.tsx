/**
 * The gates panel: "are the gates healthy?" One row per gate and resource — floor (holder and
 * fence), outbox backlog, refusals, invalid tokens, seq gaps the log detected, last contact —
 * with a stale mark when a gate has not reported for a while. Status comes from `GET /v1/gates`
 * (live, whatever the view's as-of position); seq gaps from the log's `RejectionsMissing`.
 */
import { memo, type ReactElement } from 'react';
import { formatAgo, type GateRow } from '@lease-fence/dashboard-model';

/** Props of {@link GatesPanel}. */
export interface GatesPanelProps {
  /** Undefined until the first answer of `GET /v1/gates`. */
  readonly rows: readonly GateRow[] | undefined;
  /** Why the last poll failed, or undefined. */
  readonly error: string | undefined;
  /** The stale threshold, milliseconds (shown in the legend). */
  readonly staleAfterMillis: number;
}

/** The gates panel (memoised: it renders when its props change, not with every loaded batch). */
export const GatesPanel = memo(function GatesPanel({ rows, error, staleAfterMillis }: GatesPanelProps): ReactElement {
  return (
    <section className="panel gates" aria-label="Gates" data-testid="gates-panel">
      <h3>Gates{rows === undefined ? '' : ` (${rows.length})`}</h3>
      {error !== undefined && (
        <p className="error" role="alert" data-testid="gates-error">
          {error}
        </p>
      )}
      {rows !== undefined && rows.length === 0 && (
        <p className="muted" data-testid="gates-empty">
          No gate has reported to this coordinator since it started. A gate (the <code>lease-fence-gate</code> sidecar,
          or your own process with the SDK) reports its floor, outbox backlog and refusals every few seconds; the demo
          started by <code>npm start</code> runs one per deploy slot.
        </p>
      )}
      {rows !== undefined && rows.length > 0 && (
        <table className="gates-table">
          <thead>
            <tr>
              <th scope="col">Gate</th>
              <th scope="col">Resource</th>
              <th scope="col">Floor (holder · fence)</th>
              <th scope="col" title="refusals durable at the gate and not yet acknowledged by the coordinator">
                Outbox backlog
              </th>
              <th
                scope="col"
                title="stale or double-granted fences refused (409): the gate's last refusal seq, kept across its restarts"
              >
                Refusals
              </th>
              <th
                scope="col"
                title="missing, malformed, altered or foreign tokens refused (401) since the gate started"
              >
                Invalid tokens
              </th>
              <th scope="col" title="RejectionsMissing in the log: refusals the gate made whose reports never arrived">
                Seq gaps
              </th>
              <th
                scope="col"
                title={`coordinator time since the gate's last report; stale after ${staleAfterMillis / 1000} s`}
              >
                Last contact
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr
                key={`${row.gateId}\u0000${row.resource}`}
                data-testid="gate-row"
                data-gate={row.gateId}
                data-resource={row.resource}
                className={row.stale ? 'stale' : undefined}
              >
                <td>{row.gateId}</td>
                <td>{row.resource}</td>
                <td data-testid="gate-floor">
                  {row.floor === undefined ? (
                    <span className="muted">none yet</span>
                  ) : (
                    `${row.floor.holderId} · ${row.floor.fence}`
                  )}
                </td>
                <td data-testid="gate-backlog" className={row.outboxBacklog > 0 ? 'warn' : undefined}>
                  {row.outboxBacklog}
                </td>
                <td data-testid="gate-refusals">{row.refusals}</td>
                <td data-testid="gate-invalid-tokens" className={row.invalidTokens > 0 ? 'warn' : undefined}>
                  {row.invalidTokens}
                </td>
                <td data-testid="gate-seq-gaps" className={row.seqGaps > 0 ? 'warn' : undefined}>
                  {row.seqGaps === 0 ? '0' : `${row.seqGaps} (${row.missingRefusals} refusals lost)`}
                </td>
                <td data-testid="gate-last-contact">
                  {formatAgo(row.lastContactAgoMillis)}
                  {row.stale && (
                    <>
                      {' '}
                      <span className="badge" data-testid="gate-stale">
                        stale
                      </span>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});
