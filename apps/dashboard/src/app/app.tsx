/**
 * The dashboard shell: the viewer token, the stream into the store, the URL as the state, and
 * the panels. Every panel reads one view state: the fold as of the URL's position (live = the head).
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ChangeEvent, type ReactElement } from 'react';
import { type DashboardSummary, formatWallTime, exportInvestigation, importInvestigation, investigationMarkdown, parseInvestigationExport, investigate, type InvestigationResult, filterLanes, holdDurations, logRates, searchLog, type SearchHit, type ViewHistory, hasLeaseActivity, whoHeld, pageHolderColors } from '@lease-fence/dashboard-model';
import { RejectionsTable } from '../rejections/rejections-table.js';
import { fetchEventsPage } from '../stream/http-client.js';
import { StreamClient, streamUrl } from '../stream/stream-client.js';
import { forgetViewerToken, resolveViewerToken, saveViewerToken } from '../stream/viewer-token.js';
import { LeaseDetails } from '../timeline/lease-details.js';
import { TimelineView } from '../timeline/timeline-view.js';
import { zoomWindow, type TimeWindow } from '../timeline/time-scale.js';
import { ConnectionBanner } from './connection-banner.js';
import { DashboardStore } from './dashboard-store.js';
import { installDebugHook } from './debug-hook.js';
import type { DashboardEnvironment } from './environment.js';
import { EventTable } from './event-table.js';
import { FilterBar } from './filter-bar.js';
import { commandForKey } from './keyboard.js';
import { LazyInvestigationView, LazyRatePanels } from './lazy-panels.js';
import { LiveControls } from './live-controls.js';
import { followWindow, ingestTarget, markerPosition, replayStartWall, replayStep, resolveAsOf, stepPosition } from './navigation.js';
import { RestartList } from './restart-list.js';
import { SearchBox } from './search-box.js';
import { TokenPrompt } from './token-prompt.js';
import { DEFAULT_VIEW, describeUnreadableAsOf, formatViewUrl, isNewView, parseViewUrl, type ViewUrlState } from './url-state.js';
import { useWidth } from './use-width.js';

/** Props of {@link App}. */
export interface AppProps {
  readonly env: DashboardEnvironment;
}

interface Imported {
  readonly name: string;
  readonly result: InvestigationResult;
  readonly history: ViewHistory;
}

/** The whole dashboard. */
export function App({ env }: AppProps): ReactElement {
  const [initial] = useState(() => resolveViewerToken(env.initialSearch, env.storage));
  const [token, setToken] = useState<string | undefined>(initial.token);
  const [tokenMessage, setTokenMessage] = useState<string | undefined>(undefined);
  const [view, setView] = useState<ViewUrlState>(() => parseViewUrl(initial.searchWithoutToken ?? env.initialSearch));
  // Said until the view changes (the URL is then rewritten without the unreadable value).
  const [unreadableAt, setUnreadableAt] = useState<string | undefined>(() => describeUnreadableAsOf(initial.searchWithoutToken ?? env.initialSearch));
  const [imported, setImported] = useState<Imported | undefined>(undefined);
  const [importError, setImportError] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (initial.searchWithoutToken !== undefined) env.setSearch(initial.searchWithoutToken, 'replace');
  }, [env, initial]);
  useEffect(() => env.onPopState((search) => {
    setView(parseViewUrl(search));
    setUnreadableAt(describeUnreadableAsOf(search));
  }), [env]);

  const viewRef = useRef(view);
  viewRef.current = view;
  const updateView = useCallback((next: ViewUrlState) => {
    const before = viewRef.current;
    viewRef.current = next;
    setView(next);
    setUnreadableAt(undefined);
    env.setSearch(formatViewUrl(next), isNewView(before, next) ? 'push' : 'replace');
  }, [env]);

  const onImportFile = (event: ChangeEvent<HTMLInputElement>): void => {
    const file = event.target.files?.[0];
    if (file === undefined) return;
    void file.text().then((text) => {
      const parsed = parseInvestigationExport(text);
      if (!parsed.ok) {
        setImportError(`${file.name}: ${parsed.message}`);
        return;
      }
      setImportError(undefined);
      const { result, history } = importInvestigation(parsed.value);
      setImported({ name: file.name, result, history });
    });
  };
  const importControl = (
    <label className="import">
      Import investigation <input type="file" accept="application/json,.json" onChange={onImportFile} data-testid="import-file" />
    </label>
  );
  // Shown wherever the import control is: a file that did not import is said even over an imported investigation.
  const importAlert = importError === undefined ? undefined : <p className="error" role="alert">{importError}</p>;

  if (imported !== undefined) {
    return (
      <div className="app">
        <header className="topbar"><h1>lease-fence</h1>{importControl}</header>
        {importAlert}
        <LazyInvestigationView
          result={imported.result}
          importedFrom={imported.name}
          link={undefined}
          widthPx={960}
          onClose={() => setImported(undefined)}
          onContextRadius={undefined}
          onJump={() => undefined}
          onExportJson={() => {
            if (imported.result.ok) env.download(`investigation-${imported.result.investigation.position}.json`, JSON.stringify(exportInvestigation(imported.history, imported.result.investigation), null, 2), 'application/json');
          }}
          onExportMarkdown={() => {
            if (imported.result.ok) env.download(`investigation-${imported.result.investigation.position}.md`, investigationMarkdown(imported.result.investigation, undefined), 'text/markdown');
          }}
        />
      </div>
    );
  }

  if (token === undefined) {
    return (
      <div className="app">
        <header className="topbar"><h1>lease-fence</h1>{importControl}</header>
        {importAlert}
        <TokenPrompt
          message={tokenMessage}
          onSubmit={(typed) => {
            setTokenMessage(undefined);
            setToken(saveViewerToken(env.storage, typed));
          }}
        />
      </div>
    );
  }

  return (
    <Dashboard
      key={token}
      env={env}
      token={token}
      view={view}
      updateView={updateView}
      importControl={importControl}
      importAlert={importAlert}
      unreadableAt={unreadableAt}
      onTokenRefused={(message) => {
        forgetViewerToken(env.storage);
        setTokenMessage(message);
        setToken(undefined);
      }}
    />
  );
}

interface DashboardProps {
  readonly env: DashboardEnvironment;
  readonly token: string;
  readonly view: ViewUrlState;
  readonly updateView: (next: ViewUrlState) => void;
  readonly importControl: ReactElement;
  /** Why the last file picked did not import, or undefined. */
  readonly importAlert: ReactElement | undefined;
  /** Why the URL's `at` was ignored, or undefined. */
  readonly unreadableAt: string | undefined;
  readonly onTokenRefused: (message: string) => void;
}

const CONTEXT_ROWS = 8;

function Dashboard({ env, token, view, updateView, importControl, importAlert, unreadableAt, onTokenRefused }: DashboardProps): ReactElement {
  const [store] = useState(() => new DashboardStore({ schedule: env.schedule }));
  const clientRef = useRef<StreamClient | undefined>(undefined);
  useSyncExternalStore(store.subscribe, store.getVersion, store.getVersion);
  const mainRef = useRef<HTMLDivElement>(null);
  const widthPx = useWidth(mainRef, 1_200);
  const refusedRef = useRef(onTokenRefused);
  refusedRef.current = onTokenRefused;

  // Stream: catch up from the start, then live; the token is checked over HTTP first because a
  // browser cannot see why a WebSocket upgrade failed.
  useEffect(() => {
    let checkToken = (): void => undefined;
    const client = new StreamClient({
      url: (after) => streamUrl(env.origin, after, token),
      connect: env.connect,
      timers: env.timers,
      onEvent: (recorded) => store.appendEvent(recorded),
      onFrame: (frame) => store.applyFrame(frame, env.now()),
      onHead: (position) => store.noteHead(position),
      onState: (state) => {
        store.setConnection(state);
        if (state.status === 'unauthorized') refusedRef.current(`The coordinator refused this viewer token (${state.reason}).`);
        // A refused upgrade looks like any failed connection to a browser: ask over HTTP now and then.
        if (state.status === 'reconnecting' && state.attempt % 3 === 0) checkToken();
      },
      onProblem: (message) => store.reportProblem(message, 'data', env.now()),
    });
    clientRef.current = client;
    const abort = new AbortController();
    checkToken = (): void => {
      void fetchEventsPage({ baseUrl: env.origin, token, after: 0, limit: 1, fetch: env.fetch, signal: abort.signal }).then((page) => {
        if (abort.signal.aborted) return;
        if (page.ok) store.noteHead(page.head);
        else if (page.reason === 'unauthorized') refusedRef.current('The coordinator refused this viewer token (HTTP 401). Paste a viewer token from its token file.');
        else store.reportProblem(page.message, page.reason === 'invalid-body' ? 'data' : 'connection', env.now());
      });
    };
    checkToken();
    client.start();
    return () => {
      abort.abort();
      client.close();
      clientRef.current = undefined;
    };
  }, [env, store, token]);

  const history = store.history;
  const headPosition = store.headPosition;
  const asOf = resolveAsOf(view.at, history, headPosition, store.caughtUp);
  const state = history.stateAt(asOf.position);
  const coordinatorNow = useCallback(() => env.now() + store.clockOffsetMillis, [env, store]);

  // Loading follows the view: live follows the head; a paused view holds (memory stays bounded).
  const target = ingestTarget(view, history.position, store.caughtUp);
  useEffect(() => {
    const client = clientRef.current;
    if (client === undefined) return;
    if (target === undefined) {
      if (client.heldAt !== undefined) client.release();
    } else if (client.heldAt !== target) client.holdAt(target);
  }, [target]);

  const resolveWindow = useCallback((): TimeWindow => {
    if (view.window !== undefined) return view.window;
    return followWindow(asOf.live ? coordinatorNow() : (asOf.wallMillis ?? coordinatorNow()), view.spanMillis);
  }, [view, asOf.live, asOf.wallMillis, coordinatorNow]);
  const windowNow = resolveWindow();

  // Memo keys: the live state is folded in place, so keys name the position (and the store version) explicitly.
  const { lanes, total } = useMemo(() => filterLanes(state, view.filter), [state, asOf.position, view.filter, store.version]);
  const rateKey = asOf.live && view.window === undefined ? `live:${Math.floor(env.now() / 1_000)}:${view.spanMillis}` : `${asOf.position}:${windowNow.fromWallMillis}:${windowNow.toWallMillis}`;
  // Rates stop at the as-of time (or now): bins after it would read as a drop to zero.
  const ratesEnd = Math.min(windowNow.toWallMillis, asOf.live ? coordinatorNow() : (asOf.wallMillis ?? windowNow.toWallMillis));
  const rates = useMemo(
    () => logRates(history.index, { asOfPosition: asOf.position, fromWallMillis: windowNow.fromWallMillis, toWallMillis: Math.max(windowNow.fromWallMillis + 1_000, ratesEnd), maxBins: 90 }),
    [rateKey], // recomputed at most once a second while live
  );
  const denials = useMemo(() => store.stats.between(windowNow.fromWallMillis, windowNow.toWallMillis), [rateKey, store.stats.size]);
  const holds = useMemo(() => holdDurations(state), [rateKey, state]);
  const hits = useMemo(() => searchLog(state, history.index, view.search), [view.search, asOf.position, state, history.index]);
  const investigationLoadedTo = Math.min(history.position, (view.investigation?.position ?? 0) + (view.investigation?.contextRadius ?? 0));
  const investigation = useMemo(() => {
    const inv = view.investigation;
    if (inv === undefined) return undefined;
    if (!store.caughtUp && history.position < inv.position + inv.contextRadius) return undefined;
    return investigate(history, inv.position, inv.contextRadius);
  }, [view.investigation, store.caughtUp, investigationLoadedTo, history]);

  const focusPosition = view.cursorWallMillis === undefined ? asOf.position : Math.min(asOf.position, history.positionAtWall(view.cursorWallMillis));
  const contextEvents = history.index.between(focusPosition - CONTEXT_ROWS, Math.min(asOf.position, focusPosition + CONTEXT_ROWS));

  // Navigation
  const seek = useCallback((position: number) => updateView({ ...view, at: { kind: 'position', position: Math.max(0, position) }, playing: false }), [view, updateView]);
  const pause = useCallback(() => updateView({ ...view, at: { kind: 'position', position: asOf.position } }), [view, updateView, asOf.position]);
  const resume = useCallback(() => updateView({ ...view, at: undefined, window: undefined, playing: false }), [view, updateView]);
  const step = useCallback((direction: 1 | -1) => seek(stepPosition(history, asOf.position, direction, headPosition)), [seek, history, asOf.position, headPosition]);
  const jumpMarker = useCallback((direction: 1 | -1) => seek(markerPosition(history, asOf.position, direction)), [seek, history, asOf.position]);
  const zoom = useCallback((factor: number, anchor: number) => {
    const v = view;
    if (v.window === undefined) updateView({ ...v, spanMillis: Math.max(10, Math.min(30 * 86_400_000, v.spanMillis * factor)) });
    else updateView({ ...v, window: zoomWindow(v.window, factor, anchor) });
  }, [view, updateView]);
  // Stable across renders, so the memoised rate charts re-render only when their data changes
  // (recharts measures its SVG paths on every render: a long task if it ran per store notification).
  const currentView = useRef(view);
  currentView.current = view;
  const moveCursor = useCallback((cursorWallMillis: number) => updateView({ ...currentView.current, cursorWallMillis }), [updateView]);
  const openInvestigation = useCallback((position: number) => updateView({ ...view, investigation: { position, contextRadius: view.investigation?.contextRadius ?? 10 } }), [view, updateView]);

  // Keyboard
  const keys = useRef({ step, jumpMarker, pause, resume, zoom, live: asOf.live, close: () => updateView({ ...view, investigation: undefined }), window: windowNow });
  keys.current = { step, jumpMarker, pause, resume, zoom, live: asOf.live, close: () => updateView({ ...view, investigation: undefined }), window: windowNow };
  useEffect(() => {
    if (typeof document === 'undefined') return undefined;
    const onKey = (event: KeyboardEvent): void => {
      const el = event.target as HTMLElement | null;
      const inFormField = el !== null && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
      const command = commandForKey({ key: event.key, ctrlKey: event.ctrlKey, metaKey: event.metaKey, altKey: event.altKey, inFormField });
      if (command === undefined) return;
      event.preventDefault();
      const k = keys.current;
      const middle = (k.window.fromWallMillis + k.window.toWallMillis) / 2;
      switch (command) {
        case 'step-back': k.step(-1); break;
        case 'step-forward': k.step(1); break;
        case 'next-marker': k.jumpMarker(1); break;
        case 'previous-marker': k.jumpMarker(-1); break;
        case 'toggle-live': if (k.live) k.pause(); else k.resume(); break;
        case 'zoom-in': k.zoom(0.5, middle); break;
        case 'zoom-out': k.zoom(2, middle); break;
        case 'close': k.close(); break;
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  // Replay forward at a chosen speed of wall time; the stream loads ahead while playing. The
  // clock starts once the as-of position is loaded (its wall time is known); each tick reads the
  // store as it is now, not as of the last render.
  const replayFromWall = view.playing && !asOf.live ? replayStartWall(view.at, history, store.caughtUp) : undefined;
  const replayReady = replayFromWall !== undefined;
  const latest = useRef({ view, asOf, replayFromWall });
  latest.current = { view, asOf, replayFromWall };
  useEffect(() => {
    if (!replayReady) return undefined;
    let wall = latest.current.replayFromWall ?? 0;
    let position = latest.current.asOf.position;
    let last = env.now();
    let handle: unknown;
    const tick = (): void => {
      const now = env.now();
      wall += (now - last) * latest.current.view.speed;
      last = now;
      const next = replayStep(history, position, wall, store.headPosition, store.caughtUp);
      if (next.kind === 'live') {
        updateView({ ...latest.current.view, at: undefined, playing: false, window: undefined });
        return;
      }
      if (next.kind === 'seek') {
        position = next.position;
        updateView({ ...latest.current.view, at: { kind: 'position', position } });
      }
      handle = env.timers.setTimeout(tick, 100);
    };
    handle = env.timers.setTimeout(tick, 100);
    return () => env.timers.clearTimeout(handle);
  }, [replayReady, env, history, store, updateView]);

  // Debug hook for browser tests and the console. Every figure is as of this render: the live
  // fold is updated in place between renders, so a summary that mixed this render's state with
  // the store's current load could describe a view that was never shown.
  const renderedLoadedPosition = history.position;
  const summaryRef = useRef<() => DashboardSummary>(() => { throw new Error('summary read before the first render'); });
  summaryRef.current = () => ({
    connection: store.connection.status,
    live: asOf.live,
    position: asOf.position,
    loadedPosition: renderedLoadedPosition,
    headPosition,
    newSince: asOf.live ? 0 : Math.max(0, headPosition - asOf.position),
    lanes: total,
    shownLanes: lanes.length,
    generations: [...state.lanes.values()].reduce((n, l) => n + l.generations.length, 0),
    rejections: state.rejections.length,
    restarts: state.restarts.length,
    fenceCounter: state.fenceCounter,
    anomalies: state.anomalyCount,
    shapesDrawn: Number((typeof document === 'undefined' ? undefined : document.querySelector('[data-testid="lanes-canvas"]')?.getAttribute('data-shapes')) ?? 0),
    investigation: view.investigation?.position,
    search: view.search,
  });
  const stateRef = useRef(state);
  stateRef.current = state;
  useEffect(() => installDebugHook(env.debugTarget, {
    summary: () => summaryRef.current(),
    whoHeld: (resource, wallMillis) => whoHeld(stateRef.current, resource, typeof wallMillis === 'string' ? Date.parse(wallMillis) : wallMillis),
  }), [env]);

  const pickHit = (hit: SearchHit): void => {
    const around = (wallMillis: number): TimeWindow => ({ fromWallMillis: wallMillis - view.spanMillis * 0.3, toWallMillis: wallMillis + view.spanMillis * 0.7 });
    switch (hit.kind) {
      case 'position':
      case 'request':
        seek(hit.position);
        break;
      case 'fence':
        updateView({ ...view, resource: hit.resource, cursorWallMillis: hit.startWallMillis, window: around(hit.startWallMillis) });
        break;
      case 'holder':
        updateView({ ...view, filter: { ...view.filter, holder: hit.holderId } });
        break;
      case 'resource':
        updateView({ ...view, resource: hit.resource });
        break;
    }
  };

  const probeWall = view.cursorWallMillis ?? (view.at?.kind === 'wall' ? view.at.wallMillis : undefined);
  const probe = view.resource !== undefined && probeWall !== undefined ? whoHeld(state, view.resource, probeWall) : undefined;
  const link = view.investigation === undefined ? undefined : `${env.origin}/${formatViewUrl({ ...DEFAULT_VIEW, investigation: view.investigation })}`;
  // Empty: the coordinator is up (it logs CoordinatorStarted at position 1) but no agent has leased anything.
  const empty = store.caughtUp && !hasLeaseActivity(history.head);
  // Colours by order of first appearance in the log: the same for live, history and replay.
  pageHolderColors.register(history.index.holderIds());
  const loading = !store.caughtUp && history.position === 0;

  return (
    <div className="app" ref={mainRef}>
      <header className="topbar">
        <h1>lease-fence</h1>
        <ConnectionBanner connection={store.connection} caughtUp={store.caughtUp} position={history.position} headPosition={headPosition} held={clientRef.current?.heldAt !== undefined} />
        <SearchBox query={view.search} hits={hits} onQuery={(search) => updateView({ ...view, search })} onPick={pickHit} />
        {importControl}
      </header>
      {importAlert}
      {unreadableAt !== undefined && <p className="error" role="alert" data-testid="unreadable-at">{unreadableAt}</p>}
      <LiveControls
        live={asOf.live}
        connected={store.connection.status === 'live' || store.connection.status === 'catching-up'}
        asOfPosition={asOf.position}
        asOfWallMillis={asOf.wallMillis}
        firstPosition={history.index.firstPosition}
        headPosition={headPosition}
        playing={view.playing}
        speed={view.speed}
        beyondLog={asOf.beyondLog}
        onPause={pause}
        onResume={resume}
        onSeek={seek}
        onStep={step}
        onMarker={jumpMarker}
        onPlay={(playing) => updateView({ ...view, playing })}
        onSpeed={(speed) => updateView({ ...view, speed })}
      />
      {view.investigation !== undefined && (
        <LazyInvestigationView
          result={investigation}
          importedFrom={undefined}
          link={link}
          widthPx={widthPx}
          onClose={() => updateView({ ...view, investigation: undefined })}
          onContextRadius={(contextRadius) => updateView({ ...view, investigation: { position: view.investigation?.position ?? 0, contextRadius } })}
          onJump={seek}
          onExportJson={() => {
            if (investigation?.ok === true) env.download(`investigation-${investigation.investigation.position}.json`, JSON.stringify(exportInvestigation(history, investigation.investigation), null, 2), 'application/json');
          }}
          onExportMarkdown={() => {
            if (investigation?.ok === true) env.download(`investigation-${investigation.investigation.position}.md`, investigationMarkdown(investigation.investigation, link), 'text/markdown');
          }}
        />
      )}
      <FilterBar filter={view.filter} shown={lanes.length} total={total} onChange={(filter) => updateView({ ...view, filter })} />
      {loading && <p className="notice" data-testid="loading-state">Loading the log from the coordinator… {store.connection.status === 'reconnecting' && 'The coordinator is not answering yet: start it with `npm start` (or `npm run coordinator`).'}</p>}
      {empty && (
        <div className="notice" data-testid="empty-state">
          <p>
            <strong>No leases yet.</strong> The coordinator is running{history.position > 0 && <> (log position {history.position})</>}, but no agent has asked for a lease.
            Grants, renewals, expiries and refused stale writes appear here as the coordinator logs them.
          </p>
          <ul>
            <li>Start the demo&apos;s contending agents with <code>npm start</code> (coordinator and agents together).</li>
            <li>Or lease from your own code with the SDK: <code>new LeaseFenceClient({'{'} baseUrl, token, holderId {'}'}).withLease(&apos;my-resource&apos;, async (lease, signal) =&gt; …)</code>.</li>
          </ul>
        </div>
      )}
      {!empty && !loading && lanes.length === 0 && total > 0 && (
        <p className="notice" data-testid="no-lanes">No lane matches these filters (0 of {total}). <button type="button" className="link" onClick={() => updateView({ ...view, filter: {} })}>Clear filters</button></p>
      )}
      {asOf.live && view.window === undefined && state.lastWallMillis !== undefined && state.lastWallMillis < windowNow.fromWallMillis && (
        <p className="notice" data-testid="idle-notice">
          Nothing happened in this window: the last event was at {formatWallTime(state.lastWallMillis)}.{' '}
          <button type="button" className="link" onClick={() => updateView({ ...view, window: followWindow(state.lastWallMillis ?? 0, view.spanMillis) })}>Show the last activity</button>
        </p>
      )}
      <TimelineView
        state={state}
        lanes={lanes}
        resolveWindow={resolveWindow}
        animate={asOf.live && view.window === undefined}
        nowWallMillis={asOf.live ? coordinatorNow : undefined}
        asOfWallMillis={asOf.live ? undefined : asOf.wallMillis}
        cursorWallMillis={view.cursorWallMillis}
        selectedResource={view.resource}
        onZoom={zoom}
        onPan={(window) => updateView({ ...view, window })}
        onPick={(resource, wallMillis) => updateView({ ...view, resource, cursorWallMillis: wallMillis })}
        onSelectRejection={openInvestigation}
        heightPx={Math.min(460, Math.max(150, 26 + lanes.length * 22 + 8))}
      />
      <div className="timeline-help muted">
        Drag or shift+wheel to pan, ctrl+wheel or +/− to zoom, click a lane to pin the cursor, click a red marker to investigate. Keys: [ ] step, n p next/previous rejection or restart, space pause/live.
        {view.window !== undefined && <> <button type="button" className="link" onClick={() => updateView({ ...view, window: undefined })}>Follow {asOf.live ? 'now' : 'the as-of time'}</button></>}
        {' '}Window {formatWallTime(windowNow.fromWallMillis)} – {formatWallTime(windowNow.toWallMillis)} (coordinator wall clock, UTC).
      </div>
      {probe !== undefined && (
        <section className="panel probe" data-testid="who-held" aria-label="Who held it">
          <h3>Who held {view.resource} at {formatWallTime(probe.wallMillis)}? <button type="button" className="link" onClick={() => updateView({ ...view, resource: undefined, cursorWallMillis: undefined })}>clear</button></h3>
          <LeaseDetails answer={probe} nowWallMillis={asOf.live ? coordinatorNow : undefined} />
        </section>
      )}
      <div className="columns">
        <RejectionsTable rejections={state.rejections} missing={state.missingRejections} selectedPosition={view.investigation?.position} onSelect={openInvestigation} />
        <EventTable events={contextEvents} focusPosition={focusPosition} onPick={seek} caption={`Events around position ${focusPosition}${view.cursorWallMillis === undefined ? '' : ` (cursor ${formatWallTime(view.cursorWallMillis)})`}`} />
      </div>
      <LazyRatePanels
        bins={rates.bins}
        binWidthMillis={rates.widthMillis}
        denials={denials}
        holdBins={holds.bins}
        holdP50Millis={holds.p50Millis}
        holdP95Millis={holds.p95Millis}
        cursorWallMillis={view.cursorWallMillis}
        onCursor={moveCursor}
        widthPx={widthPx}
      />
      <RestartList restarts={state.restarts} onJump={seek} />
      {(store.problems.length > 0 || state.anomalyCount > 0) && (
        <section className="panel problems" data-testid="problems">
          <h3>Problems {store.problems.length > 0 && <button type="button" className="link" onClick={() => store.dismissProblems()} data-testid="dismiss-problems">dismiss</button>}</h3>
          <ul>
            {store.problems.map((p, i) => <li key={i}><time className="muted" title="this browser's clock, UTC">{formatWallTime(p.atMillis)}</time> {p.message}{p.kind === 'connection' && <span className="muted"> (cleared once live again)</span>}</li>)}
            {state.anomalies.slice(0, 10).map((a) => <li key={`a${a.position}`}>position {a.position} ({a.type}): {a.message}</li>)}
            {state.anomalyCount > 10 && <li>and {state.anomalyCount - 10} more anomalies</li>}
          </ul>
        </section>
      )}
    </div>
  );
}
