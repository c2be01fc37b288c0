/**
 * What the dashboard shows and where: the top bar, the live controls, the investigation, the
 * filters and notices, the timeline, the who-held probe, the rejections and events, the gates, the rates,
 * the restarts and the problems. Presentational: every figure and action comes in as a prop
 * (see dashboard.tsx).
 */
import { useCallback, type ReactElement, type RefObject } from 'react';
import type { RecordedEvent } from '@lease-fence/protocol';
import {
  exportInvestigation,
  formatWallTime,
  GATE_STALE_AFTER_MILLIS,
  type GateRow,
  investigationMarkdown,
  type holdDurations,
  type HoldingAnswer,
  type InvestigationResult,
  type Lane,
  type LeaseMatch,
  type MissingRejectionsView,
  type RateBin,
  type RejectionView,
  type SearchHit,
  type ViewHistory,
  type ViewState,
} from '@lease-fence/dashboard-model';
import type { StatsSample } from '../stream/stats-history.js';
import { LeaseDetails } from '../timeline/lease-details.js';
import { TimelineLegend } from '../timeline/timeline-legend.js';
import { TimelineView } from '../timeline/timeline-view.js';
import type { TimeWindow } from '../timeline/time-scale.js';
import { ExposurePanel } from '../exposure/exposure-panel.js';
import { GatesPanel } from '../gates/gates-panel.js';
import { RejectionsTable } from '../rejections/rejections-table.js';
import { ConnectionBanner } from './connection-banner.js';
import type { DashboardSnapshot } from './dashboard-store.js';
import type { DashboardEnvironment } from './environment.js';
import { EventTable } from './event-table.js';
import { FilterBar, type FilterMatchCounts } from './filter-bar.js';
import { LazyInvestigationView, LazyRatePanels } from './lazy-panels.js';
import { LiveControls } from './live-controls.js';
import { followWindow, type ResolvedAsOf } from './navigation.js';
import { RestartList } from './restart-list.js';
import { SearchBox } from './search-box.js';
import type { ViewUrlState } from './url-state.js';
import { logDamageOf } from '../stream/stream-client.js';

/** What the panels can ask the dashboard to do. */
export interface DashboardActions {
  readonly seek: (position: number) => void;
  readonly pause: () => void;
  readonly resume: () => void;
  readonly step: (direction: 1 | -1) => void;
  readonly jumpMarker: (direction: 1 | -1) => void;
  readonly zoom: (factor: number, anchorWallMillis: number) => void;
  /** Stable across renders (the memoised rate charts take it). */
  readonly moveCursor: (cursorWallMillis: number) => void;
  readonly openInvestigation: (position: number) => void;
  readonly closeInvestigation: () => void;
  readonly pickHit: (hit: SearchHit) => void;
  readonly dismissProblems: () => void;
}

/** Props of {@link DashboardLayout}. */
export interface DashboardLayoutProps {
  readonly env: DashboardEnvironment;
  readonly mainRef: RefObject<HTMLDivElement | null>;
  readonly widthPx: number;
  readonly view: ViewUrlState;
  readonly updateView: (next: ViewUrlState) => void;
  readonly snapshot: DashboardSnapshot;
  readonly history: ViewHistory;
  readonly asOf: ResolvedAsOf;
  /** The view state as of `asOf.position`. */
  readonly state: ViewState;
  /** The lanes the filter keeps, and how many there are in all. */
  readonly lanes: readonly Lane[];
  readonly totalLanes: number;
  /** The compiled filter: the timeline dims what it does not match. */
  readonly match: LeaseMatch;
  /** What a jump to a rejection or restart is doing when none was loaded (`navigation.ts` `markerSearchNote`). */
  readonly markerNote?: string | undefined;
  /** What the filter matches; undefined when no filter is set. */
  readonly matchCounts: FilterMatchCounts | undefined;
  /**
   * The rejections table's sample (while live at most every `LIVE_TABLE_REFRESH_MILLIS`): the
   * rejections the filter matches in log order (every rejection when no filter is set), how many
   * there are in all, and the refusals known to be missing.
   */
  readonly rejections: {
    readonly rows: readonly RejectionView[];
    readonly of: number;
    readonly missing: readonly MissingRejectionsView[];
  };
  readonly hits: readonly SearchHit[];
  readonly investigation: InvestigationResult | undefined;
  /** Permalink of the open investigation (no token). */
  readonly link: string | undefined;
  readonly probe: HoldingAnswer | undefined;
  readonly empty: boolean;
  readonly loading: boolean;
  readonly windowNow: TimeWindow;
  readonly resolveWindow: () => TimeWindow;
  readonly coordinatorNow: () => number;
  readonly focusPosition: number;
  /**
   * The position the tables show (while live it moves at most every `LIVE_TABLE_REFRESH_MILLIS`,
   * see dashboard.tsx; otherwise the as-of position).
   */
  readonly tablePosition: number;
  readonly contextEvents: readonly RecordedEvent[];
  readonly rates: { readonly bins: readonly RateBin[]; readonly widthMillis: number };
  readonly denials: readonly StatsSample[];
  readonly holds: ReturnType<typeof holdDurations>;
  /** The gates panel's rows (undefined until `GET /v1/gates` first answers) and why the last poll failed. */
  readonly gates: { readonly rows: readonly GateRow[] | undefined; readonly error: string | undefined };
  /** The "jump to" time input, shown beside the live controls. */
  readonly timeJump: ReactElement;
  /** The current-holders table. */
  readonly holdersPanel: ReactElement;
  readonly importControl: ReactElement;
  readonly importAlert: ReactElement | undefined;
  readonly unreadableAt: string | undefined;
  readonly actions: DashboardActions;
}

/** The dashboard's page. */
export function DashboardLayout({ mainRef, ...props }: DashboardLayoutProps): ReactElement {
  const {
    env,
    view,
    updateView,
    snapshot,
    history,
    asOf,
    state,
    lanes,
    totalLanes: total,
    investigation,
    link,
    probe,
    windowNow,
    coordinatorNow,
    focusPosition,
    actions,
  } = props;
  const { seek, pause, resume, step, jumpMarker, openInvestigation } = actions;
  const headPosition = snapshot.headPosition;
  // Stable while the view is, so the memoised panels render only when what they show changes.
  const onQuery = useCallback((search: string) => updateView({ ...view, search }), [view, updateView]);
  const pickExposure = useCallback((resource: string) => updateView({ ...view, resource }), [view, updateView]);
  return (
    <div className="app" ref={mainRef}>
      <header className="topbar">
        <h1>lease-fence</h1>
        <ConnectionBanner
          connection={snapshot.connection}
          caughtUp={snapshot.caughtUp}
          position={snapshot.loadedPosition}
          headPosition={headPosition}
          held={snapshot.held}
        />
        <SearchBox query={view.search} hits={props.hits} onQuery={onQuery} onPick={actions.pickHit} />
        {props.importControl}
      </header>
      {props.importAlert}
      {props.unreadableAt !== undefined && (
        <p className="error" role="alert" data-testid="unreadable-at">
          {props.unreadableAt}
        </p>
      )}
      <LiveControls
        live={asOf.live}
        connected={
          (snapshot.connection.status === 'live' || snapshot.connection.status === 'catching-up') &&
          logDamageOf(snapshot.connection) === undefined
        }
        asOfPosition={asOf.position}
        asOfWallMillis={asOf.wallMillis}
        firstPosition={history.index.firstPosition}
        headPosition={headPosition}
        playing={view.playing}
        speed={view.speed}
        beyondLog={asOf.beyondLog}
        markerNote={props.markerNote}
        onPause={pause}
        onResume={resume}
        onSeek={seek}
        onStep={step}
        onMarker={jumpMarker}
        onPlay={(playing) => updateView({ ...view, playing })}
        onSpeed={(speed) => updateView({ ...view, speed })}
      />
      {props.timeJump}
      {view.investigation !== undefined && (
        <LazyInvestigationView
          result={investigation}
          importedFrom={undefined}
          link={link}
          widthPx={props.widthPx}
          onClose={actions.closeInvestigation}
          onContextRadius={(contextRadius) =>
            updateView({ ...view, investigation: { position: view.investigation?.position ?? 0, contextRadius } })
          }
          onJump={seek}
          onExportJson={() => {
            if (investigation?.ok === true)
              env.download(
                `investigation-${investigation.investigation.position}.json`,
                JSON.stringify(exportInvestigation(history, investigation.investigation), null, 2),
                'application/json',
              );
          }}
          onExportMarkdown={() => {
            if (investigation?.ok === true)
              env.download(
                `investigation-${investigation.investigation.position}.md`,
                investigationMarkdown(investigation.investigation, link),
                'text/markdown',
              );
          }}
        />
      )}
      <FilterBar
        filter={view.filter}
        shown={lanes.length}
        total={total}
        counts={props.matchCounts}
        onChange={(filter) => updateView({ ...view, filter })}
      />
      {props.loading && (
        <p className="notice" data-testid="loading-state">
          Loading the log from the coordinator…{' '}
          {snapshot.connection.status === 'reconnecting' &&
            'The coordinator is not answering yet: start it with `npm start` (or `npm run coordinator`).'}
        </p>
      )}
      {props.empty && (
        <div className="notice" data-testid="empty-state">
          <p>
            <strong>No leases yet.</strong> The coordinator is running
            {snapshot.loadedPosition > 0 && <> (log position {snapshot.loadedPosition})</>}, but no agent has asked for
            a lease. Grants, renewals, expiries and refused stale writes appear here as the coordinator logs them.
          </p>
          <ul>
            <li>
              Start the demo&apos;s contending agents with <code>npm start</code> (coordinator and agents together).
            </li>
            <li>
              Or lease from your own code with the SDK:{' '}
              <code>
                new LeaseFenceClient({'{'} baseUrl, token, holderId {'}'}).withLease(&apos;my-resource&apos;, async
                (lease, signal) =&gt; …)
              </code>
              .
            </li>
          </ul>
        </div>
      )}
      {!props.empty && !props.loading && lanes.length === 0 && total > 0 && (
        <p className="notice" data-testid="no-lanes">
          No lane matches these filters (0 of {total}).{' '}
          <button type="button" className="link" onClick={() => updateView({ ...view, filter: {} })}>
            Clear filters
          </button>
        </p>
      )}
      {asOf.live &&
        view.window === undefined &&
        state.lastWallMillis !== undefined &&
        state.lastWallMillis < windowNow.fromWallMillis && (
          <p className="notice" data-testid="idle-notice">
            Nothing happened in this window: the last event was at {formatWallTime(state.lastWallMillis)}.{' '}
            <button
              type="button"
              className="link"
              onClick={() => updateView({ ...view, window: followWindow(state.lastWallMillis ?? 0, view.spanMillis) })}
            >
              Show the last activity
            </button>
          </p>
        )}
      <TimelineLegend lanes={lanes} window={windowNow} />
      <TimelineView
        state={state}
        lanes={lanes}
        match={props.match}
        resolveWindow={props.resolveWindow}
        animate={asOf.live && view.window === undefined}
        nowWallMillis={asOf.live ? coordinatorNow : undefined}
        asOfWallMillis={asOf.live ? undefined : asOf.wallMillis}
        cursorWallMillis={view.cursorWallMillis}
        selectedResource={view.resource}
        onZoom={actions.zoom}
        onPan={(window) => updateView({ ...view, window })}
        onPick={(resource, wallMillis) => updateView({ ...view, resource, cursorWallMillis: wallMillis })}
        onSelectRejection={openInvestigation}
        heightPx={Math.min(460, Math.max(150, 26 + lanes.length * 22 + 8))}
      />
      <div className="timeline-help muted">
        Drag or shift+wheel to pan, ctrl+wheel or +/− to zoom, click a lane to pin the cursor, click a red marker to
        investigate. Keys: [ ] step, n p next/previous rejection or restart, space pause/live.
        {view.window !== undefined && (
          <>
            {' '}
            <button type="button" className="link" onClick={() => updateView({ ...view, window: undefined })}>
              Follow {asOf.live ? 'now' : 'the as-of time'}
            </button>
          </>
        )}{' '}
        Window {formatWallTime(windowNow.fromWallMillis)} – {formatWallTime(windowNow.toWallMillis)} (coordinator wall
        clock, UTC).
      </div>
      {probe !== undefined && (
        <section className="panel probe" data-testid="who-held" aria-label="Who held it">
          <h3>
            Who held {view.resource} at {formatWallTime(probe.wallMillis)}?{' '}
            <button
              type="button"
              className="link"
              onClick={() => updateView({ ...view, resource: undefined, cursorWallMillis: undefined })}
            >
              clear
            </button>
          </h3>
          <LeaseDetails answer={probe} nowWallMillis={asOf.live ? coordinatorNow : undefined} />
        </section>
      )}
      {props.holdersPanel}
      <div className="columns">
        <RejectionsTable
          rejections={props.rejections.rows}
          of={props.matchCounts === undefined ? undefined : props.rejections.of}
          missing={props.rejections.missing}
          selectedPosition={view.investigation?.position}
          onSelect={openInvestigation}
        />
        <EventTable
          events={props.contextEvents}
          focusPosition={focusPosition}
          onPick={seek}
          caption={`${props.matchCounts === undefined ? 'Events' : 'Events matching the filters'} around position ${focusPosition}${view.cursorWallMillis === undefined ? '' : ` (cursor ${formatWallTime(view.cursorWallMillis)})`}`}
        />
      </div>
      <ExposurePanel
        state={state}
        asOfPosition={props.tablePosition}
        live={asOf.live}
        nowMillis={coordinatorNow}
        onPick={pickExposure}
      />
      <GatesPanel rows={props.gates.rows} error={props.gates.error} staleAfterMillis={GATE_STALE_AFTER_MILLIS} />
      <LazyRatePanels
        bins={props.rates.bins}
        binWidthMillis={props.rates.widthMillis}
        denials={props.denials}
        holdBins={props.holds.bins}
        holdP50Millis={props.holds.p50Millis}
        holdP95Millis={props.holds.p95Millis}
        cursorWallMillis={view.cursorWallMillis}
        onCursor={actions.moveCursor}
        widthPx={props.widthPx}
      />
      <RestartList restarts={state.restarts} onJump={seek} />
      {(snapshot.problems.length > 0 || state.anomalyCount > 0) && (
        <section className="panel problems" data-testid="problems">
          <h3>
            Problems{' '}
            {snapshot.problems.length > 0 && (
              <button type="button" className="link" onClick={actions.dismissProblems} data-testid="dismiss-problems">
                dismiss
              </button>
            )}
          </h3>
          <ul>
            {snapshot.problems.map((p, i) => (
              <li key={i}>
                <time className="muted" title="this browser's clock, UTC">
                  {formatWallTime(p.atMillis)}
                </time>{' '}
                {p.message}
                {p.kind === 'connection' && <span className="muted"> (cleared once live again)</span>}
              </li>
            ))}
            {state.anomalies.slice(0, 10).map((a) => (
              <li key={`a${a.position}`}>
                position {a.position} ({a.type}): {a.message}
              </li>
            ))}
            {state.anomalyCount > 10 && <li>and {state.anomalyCount - 10} more anomalies</li>}
          </ul>
        </section>
      )}
    </div>
  );
}
