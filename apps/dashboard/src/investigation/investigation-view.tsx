/**
 * The investigation of one rejection, keyed by its log position: the sentence, both generations
 * on one axis, the gate's floor and who set it, restarts, and the events around it in order
 * (±N, expandable). Export writes JSON (events with positions) and a Markdown summary.
 */
import type { ReactElement } from 'react';
import { EventTable } from '../app/event-table.js';
import {
  afterRefusal,
  contextCaption,
  describeAfterRefusal,
  describeStamp,
  formatWallDateTime,
  formatWallTime,
  type Generation,
  type Investigation,
  type InvestigationResult,
} from '@lease-fence/dashboard-model';
import { GenerationDetails } from '../timeline/lease-details.js';
import { GenerationsChart } from './generations-chart.js';

/** Props of {@link InvestigationView}. */
export interface InvestigationViewProps {
  /** Undefined while the log up to the position is still loading. */
  readonly result: InvestigationResult | undefined;
  /** The view was built from an imported file (no coordinator needed). */
  readonly importedFrom: string | undefined;
  /** Permalink of this view (no token). */
  readonly link: string | undefined;
  readonly widthPx: number;
  readonly onClose: () => void;
  /** Shows more or fewer events around the rejection; undefined when only the exported ones exist (an import). */
  readonly onContextRadius: ((radius: number) => void) | undefined;
  readonly onJump: (position: number) => void;
  readonly onExportJson: () => void;
  readonly onExportMarkdown: () => void;
}

/** The investigation panel. */
export function InvestigationView(props: InvestigationViewProps): ReactElement {
  const { result } = props;
  return (
    <section
      className="panel investigation"
      data-testid="investigation"
      aria-label="Investigation"
      data-state={result === undefined ? 'loading' : result.ok ? 'ready' : result.reason}
    >
      <header>
        <h2>
          Investigation
          {result?.ok === true && (
            <>
              {' '}
              · position {result.investigation.position} · {result.investigation.rejection.resource} ·{' '}
              {formatWallDateTime(result.investigation.rejection.stamp.wallMillis)}
            </>
          )}
        </h2>
        {props.importedFrom !== undefined && (
          <span className="badge" data-testid="imported">
            imported from {props.importedFrom}; no coordinator needed
          </span>
        )}
        <div className="actions">
          {result?.ok === true && (
            <>
              {props.link !== undefined && (
                <a href={props.link} data-testid="permalink">
                  permalink
                </a>
              )}
              <button type="button" onClick={props.onExportJson} data-testid="export-json">
                Export JSON
              </button>
              <button type="button" onClick={props.onExportMarkdown} data-testid="export-markdown">
                Export Markdown
              </button>
            </>
          )}
          <button type="button" onClick={props.onClose} aria-label="Close investigation">
            ✕
          </button>
        </div>
      </header>
      {result === undefined && <p className="muted">Loading the log up to this position…</p>}
      {result?.ok === false && result.reason === 'not-in-log' && (
        <p className="error" data-testid="not-in-log" role="alert">
          Position {result.position} is not in the log
          {result.lastPosition === 0
            ? ' (no events are loaded)'
            : ` (loaded positions ${result.firstPosition}–${result.lastPosition})`}
          . The link may come from another coordinator namespace, or the log was reset.
        </p>
      )}
      {result?.ok === false && result.reason === 'not-a-rejection' && (
        <p className="error" data-testid="not-a-rejection" role="alert">
          Position {result.position} is a {result.type}, not a FenceRejected.{' '}
          <button type="button" className="link" onClick={() => props.onJump(result.position)}>
            Show the log at that position
          </button>
        </p>
      )}
      {result?.ok === true &&
        (() => {
          const inv = result.investigation;
          const r = inv.rejection;
          return (
            <>
              <p className="explanation" data-testid="explanation">
                {inv.explanation}
              </p>
              <GenerationsChart investigation={inv} widthPx={Math.max(480, props.widthPx - 32)} />
              <p className="muted" data-testid="as-of-refusal">
                Both generations as of the refusal (position {inv.position}): expiries are projected from that point;
                the events below may go further.
              </p>
              <div className="investigation-grid">
                <div>
                  <h4>
                    Refused: {r.rejected.holderId}, fence {r.rejected.fence}
                  </h4>
                  {inv.rejected === undefined ? (
                    <p className="muted">This generation is not in the loaded log.</p>
                  ) : (
                    <>
                      <GenerationDetails generation={inv.rejected} nowWallMillis={undefined} />
                      <AfterRefusalNote investigation={inv} generation={inv.rejected} />
                    </>
                  )}
                </div>
                <div>
                  <h4>
                    Gate floor: {r.current.holderId}, fence {r.current.fence}
                  </h4>
                  {inv.current === undefined ? (
                    <p className="muted">This generation is not in the loaded log.</p>
                  ) : (
                    <>
                      <GenerationDetails generation={inv.current} nowWallMillis={undefined} />
                      <AfterRefusalNote investigation={inv} generation={inv.current} />
                    </>
                  )}
                </div>
                <div data-testid="floor">
                  <h4>Gate {inv.floor.gateId}</h4>
                  <p>
                    Floor {inv.floor.fence} ({inv.floor.holderId}):{' '}
                    {inv.floor.admitted === undefined ? (
                      "not admitted in the log, so set by that holder's write (writes are not logged)."
                    ) : (
                      <>
                        pushed by FenceAdmitted at{' '}
                        <button
                          type="button"
                          className="link"
                          onClick={() => props.onJump(inv.floor.admitted?.position ?? inv.position)}
                        >
                          position {inv.floor.admitted.position}
                        </button>{' '}
                        ({describeStamp(inv.floor.admitted)}).
                      </>
                    )}
                  </p>
                  <p>
                    Refusal: seq {r.seq}, {r.kind}, recorded {describeStamp(r.stamp)}
                    {r.gateWallMillis !== undefined && `; gate wall clock ${formatWallTime(r.gateWallMillis)}`}.
                  </p>
                  {inv.restarts.length > 0 && (
                    <ul data-testid="investigation-restarts">
                      {inv.restarts.map((x) => (
                        <li key={x.stamp.position}>
                          restart at position {x.stamp.position} ({formatWallTime(x.stamp.wallMillis)}): recovered fence{' '}
                          {x.recoveredFence}
                          {x.carried === undefined
                            ? ''
                            : `, carried fence ${x.carried.fence} of ${x.carried.holderId} until ${formatWallTime(x.graceEndWallMillis)}`}
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
              </div>
              <EventTable
                events={inv.context.events}
                focusPosition={inv.position}
                onPick={props.onJump}
                caption={contextCaption(inv)}
              />
              {props.onContextRadius !== undefined &&
                (() => {
                  const setRadius = props.onContextRadius;
                  return (
                    <div className="actions">
                      <button
                        type="button"
                        onClick={() => setRadius(inv.contextRadius + 10)}
                        data-testid="expand-context"
                      >
                        Show ±{inv.contextRadius + 10}
                      </button>
                      {inv.contextRadius > 10 && (
                        <button type="button" onClick={() => setRadius(10)}>
                          Back to ±10
                        </button>
                      )}
                    </div>
                  );
                })()}
            </>
          );
        })()}
    </section>
  );
}

/** What the listed events show after the refusal for a generation open at it (nothing when none). */
function AfterRefusalNote(props: { investigation: Investigation; generation: Generation }): ReactElement | null {
  const text = describeAfterRefusal(afterRefusal(props.investigation, props.generation));
  return text === undefined ? null : (
    <p className="muted" data-testid="after-refusal">
      After the refusal (in the events below): {text}.
    </p>
  );
}
