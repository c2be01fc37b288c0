/**
 * One viewer's dashboard: the hooks that own its lifecycles (stream, replay, keyboard, debug
 * hook), the figures derived from the store's snapshot and the URL's view, and the actions the
 * panels call. What is shown where is {@link DashboardLayout}'s business.
 */
import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import {
  compileLeaseMatch,
  countMatches,
  currentHolders,
  filterLanes,
  formatWallDateTime,
  GATE_STALE_AFTER_MILLIS,
  gateRows,
  hasLeaseActivity,
  holdDurations,
  investigate,
  logRates,
  rateBinWidthMillis,
  MatchingEvents,
  matchingRejections,
  searchLog,
  whoHeld,
  type DashboardSummary,
  type LogBounds,
  type SearchHit,
} from '@lease-fence/dashboard-model';
import { useGates } from '../gates/use-gates.js';
import { HoldersTable } from '../holders/holders-table.js';
import { zoomWindow, type TimeWindow } from '../timeline/time-scale.js';
import { DashboardLayout } from './dashboard-layout.js';
import { DashboardStore } from './dashboard-store.js';
import { useDebugHook } from './debug-hook.js';
import type { DashboardEnvironment } from './environment.js';
import { HolderColorContext, useHolderColors } from './holder-colors.js';
import {
  followWindow,
  ingestTarget,
  logBounds,
  markerJump,
  markerSearchNote,
  type MarkerSearch,
  replayStartWall,
  resolveAsOf,
  stepPosition,
} from './navigation.js';
import { useDashboardStore, wholeSnapshot } from './use-dashboard-store.js';
import { useKeyboardCommands } from './use-keyboard-commands.js';
import { useLeaseStream } from './use-lease-stream.js';
import { useReplay } from './use-replay.js';
import { useSampled } from './use-sampled.js';
import { browserTimeZone, TimeJump } from './time-jump.js';
import { DEFAULT_VIEW, formatViewUrl, liveView, type AsOf, type ViewUrlState } from './url-state.js';
import { useWidth } from './use-width.js';
import { logDamageOf } from '../stream/stream-client.js';

/** Props of {@link Dashboard}. */
export interface DashboardProps {
  readonly env: DashboardEnvironment;
  readonly token: string;
  readonly view: ViewUrlState;
  readonly updateView: (next: ViewUrlState) => void;
  /** Applies a change to the latest view (for callbacks that must stay stable across renders). */
  readonly changeView: (change: (current: ViewUrlState) => ViewUrlState) => void;
  readonly importControl: ReactElement;
  /** Why the last file picked did not import, or undefined. */
  readonly importAlert: ReactElement | undefined;
  /** Why the URL's `at` was ignored, or undefined. */
  readonly unreadableAt: string | undefined;
  readonly onTokenRefused: (message: string) => void;
}

/** Events listed on each side of the focus position. */
const CONTEXT_ROWS = 8;

/**
 * While live, the tables (rejections, events around the position, search hits, exposure) are
 * rebuilt at most once per this many milliseconds of the browser's clock, however many batches
 * arrive in between; the lanes canvas still draws every animation frame. Paused or time
 * travelling, they follow the as-of position at once.
 */
export const LIVE_TABLE_REFRESH_MILLIS = 250;

/** Most bins of the rate charts (their width is a whole number of seconds, see `rateBinWidthMillis`). */
const RATE_BINS = 90;

/** The dashboard of one viewer token (remounted when the token changes). */
export function Dashboard({
  env,
  token,
  view,
  updateView,
  changeView,
  importControl,
  importAlert,
  unreadableAt,
  onTokenRefused,
}: DashboardProps): ReactElement {
  const [store] = useState(() => new DashboardStore({ schedule: env.schedule }));
  // The zone the time input reads a time without offset in: the browser's, read once.
  const [timeZone] = useState(browserTimeZone);
  // The whole snapshot: live, the as-of position, the lanes and every count move with each loaded event.
  const snapshot = useDashboardStore(store, wholeSnapshot);
  const mainRef = useRef<HTMLDivElement>(null);
  const widthPx = useWidth(mainRef, 1_200);
  const { history } = store;
  const { headPosition, caughtUp, loadedPosition } = snapshot;

  const asOf = resolveAsOf(view.at, history, headPosition, caughtUp);
  // A jump to a rejection or restart that found none loaded (`navigation.ts` `markerJump`). It holds
  // for the view it started from (the same URL state object): while the jump would load on, the
  // stream follows the log; once a marker is loaded the view jumps to it. Any move of the view ends it.
  const [markerSearch, setMarkerSearch] = useState<MarkerSearch | undefined>();
  const searchJump = useMemo(
    () =>
      markerSearch === undefined || markerSearch.view !== view
        ? undefined
        : markerJump(history, markerSearch.from, markerSearch.direction, headPosition, caughtUp),
    // The loaded log grows in place: `loadedPosition` is the change that can load the marker.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [markerSearch, view, history, loadedPosition, headPosition, caughtUp],
  );
  useLeaseStream({
    env,
    store,
    token,
    onTokenRefused,
    holdAt: searchJump?.kind === 'load' ? undefined : ingestTarget(view, asOf, loadedPosition, caughtUp),
  });
  // The coordinator stopped at a damaged record: what is loaded is not "now", whatever the view follows.
  const logDamaged = logDamageOf(snapshot.connection) !== undefined;
  const state = history.stateAt(asOf.position);
  // The live fold changes in place: this pair is a new object whenever the state or the load
  // it reflects changes, so memos keyed on it recompute exactly then.
  const viewed = useMemo(
    () => ({ state, index: history.index, loadedPosition }),
    [state, history.index, loadedPosition],
  );
  const coordinatorNow = useCallback(() => env.now() + store.getSnapshot().clockOffsetMillis, [env, store]);

  const resolveWindow = useCallback((): TimeWindow => {
    if (view.window !== undefined) return view.window;
    return followWindow(asOf.live ? coordinatorNow() : (asOf.wallMillis ?? coordinatorNow()), view.spanMillis);
  }, [view, asOf.live, asOf.wallMillis, coordinatorNow]);
  const windowNow = resolveWindow();

  // One compiled filter decides the lanes, the dimmed bars and markers, the table rows and the counts.
  const match = useMemo(() => compileLeaseMatch(view.filter), [view.filter]);
  const { lanes, total } = useMemo(() => filterLanes(viewed.state, match), [viewed, match]);
  const { index } = history;
  const matchingEvents = useMemo(
    () => (match.active ? new MatchingEvents(match).update(index.events()) : undefined),
    [match, index],
  );
  matchingEvents?.update(index.events()); // scans only the events loaded since the last render
  const matchCounts = useMemo(
    () =>
      matchingEvents === undefined
        ? undefined
        : {
            ...countMatches(lanes, match),
            events: matchingEvents.countUpTo(viewed.state.position),
            asOfPosition: viewed.state.position,
          },
    [lanes, match, matchingEvents, viewed],
  );
  // The tables' sample of the view: while live a new one at most every LIVE_TABLE_REFRESH_MILLIS
  // (the live fold changes in place, so what they show is computed in the render that took it).
  const tableView = useSampled(
    { state, position: asOf.position, loadedPosition },
    asOf.live
      ? `live:${Math.floor(env.now() / LIVE_TABLE_REFRESH_MILLIS)}`
      : `at:${asOf.position}:${loadedPosition}:${state.position}`,
  );
  // A batch loaded inside the sample's interval shows when the interval ends, even if nothing else
  // arrives by then (the store is touched once, so the page renders and takes a new sample).
  const tablesBehind = asOf.live && tableView.position !== asOf.position;
  useEffect(() => {
    if (!tablesBehind) return undefined;
    const handle = env.timers.setTimeout(() => store.touch(), LIVE_TABLE_REFRESH_MILLIS);
    return () => env.timers.clearTimeout(handle);
  }, [tablesBehind, env, store]);
  // Copies: the live fold appends to its arrays in place, and the memoised table compares its props.
  const rejections = useMemo(
    () => ({
      rows: matchingRejections(tableView.state, match).slice(),
      of: tableView.state.rejections.length,
      missing: tableView.state.missingRejections.slice(),
    }),
    [tableView, match],
  );
  // Rates stop at the as-of time (or now): bins after it would read as a drop to zero.
  const ratesEnd = Math.min(
    windowNow.toWallMillis,
    asOf.live ? coordinatorNow() : (asOf.wallMillis ?? windowNow.toWallMillis),
  );
  const ratesToWallMillis = Math.max(windowNow.fromWallMillis + 1_000, ratesEnd);
  // Rates, denials and hold durations are recomputed while live once per rate bin (at most once a
  // second; 2 s bins in the default 2-minute window): a chart of per-bin rates has nothing new to
  // show sooner, and each recharts update is a long task at 2 000 events/s.
  const followingNow = asOf.live && view.window === undefined;
  const rateRefreshMillis = rateBinWidthMillis(ratesToWallMillis - windowNow.fromWallMillis, RATE_BINS);
  const rateKey = followingNow
    ? `live:${Math.floor(env.now() / rateRefreshMillis)}:${rateRefreshMillis}:${view.spanMillis}`
    : `${asOf.position}:${windowNow.fromWallMillis}:${windowNow.toWallMillis}`;
  const rateInputs = useSampled(
    {
      state,
      index: history.index,
      asOfPosition: asOf.position,
      fromWallMillis: windowNow.fromWallMillis,
      toWallMillis: ratesToWallMillis,
    },
    rateKey,
  );
  const rates = useMemo(() => logRates(rateInputs.index, { ...rateInputs, maxBins: RATE_BINS }), [rateInputs]);
  const holds = useMemo(() => holdDurations(rateInputs.state), [rateInputs]);
  // Following now, the denials are sampled with the rates (once per bin): keyed on the stats ring
  // too, the charts rendered twice a second, and recharts costs a long task per render.
  const denialInputs = useSampled(
    { stats: store.stats, window: windowNow },
    followingNow ? rateKey : `${rateKey}:${snapshot.statsSize}`,
  );
  const denials = useMemo(
    () => denialInputs.stats.between(denialInputs.window.fromWallMillis, denialInputs.window.toWallMillis),
    [denialInputs],
  );
  // The rate charts (recharts) are the page's longest render, once per rate bin: rendered as a
  // deferred (interruptible) update, React works on them in slices between frames, and the lanes
  // and tables are not held up by them.
  const deferredRates = useDeferredValue(rates);
  const deferredDenials = useDeferredValue(denials);
  const deferredHolds = useDeferredValue(holds);
  const hits = useMemo(() => searchLog(tableView.state, index, view.search), [tableView, index, view.search]);
  // Current holders as of the view. Live, durations run from now and the rows are rebuilt at most
  // once a second (the live fold changes with every loaded batch, up to 2 000 events/s); otherwise
  // from the as-of time, whenever the as-of point moves.
  const holdersWallMillis = asOf.live ? Math.floor(coordinatorNow() / 1_000) * 1_000 : (asOf.wallMillis ?? 0);
  // Time-travelling to a point the page has not loaded yet, the fold is of an earlier position:
  // no rows until it is loaded (a wrong answer labelled with the right point is worse than none).
  const holdersLoaded = asOf.settled;
  const loadingTo =
    view.at?.kind === 'position'
      ? `position ${view.at.position.toLocaleString('en-US')}`
      : formatWallDateTime(asOf.wallMillis ?? Number.NaN);
  const holdersInput = useSampled(
    { state, wallMillis: holdersWallMillis },
    asOf.live ? `live:${holdersWallMillis}` : `${asOf.position}:${holdersWallMillis}:${holdersLoaded}`,
  );
  const holderRows = useMemo(() => currentHolders(holdersInput.state, holdersInput.wallMillis), [holdersInput]);
  // Read when Enter is pressed, so the field needs no new props per loaded batch.
  const jumpBounds = useCallback(
    (): LogBounds => logBounds(history, store.headPosition, store.caughtUp),
    [history, store],
  );
  const investigationLoadedTo = Math.min(
    loadedPosition,
    (view.investigation?.position ?? 0) + (view.investigation?.contextRadius ?? 0),
  );
  const investigationInput = useMemo(
    () => ({ history, loadedTo: investigationLoadedTo }),
    [history, investigationLoadedTo],
  );
  const investigation = useMemo(() => {
    const inv = view.investigation;
    if (inv === undefined) return undefined;
    if (!caughtUp && investigationInput.loadedTo < inv.position + inv.contextRadius) return undefined;
    return investigate(investigationInput.history, inv.position, inv.contextRadius);
  }, [view.investigation, caughtUp, investigationInput]);

  const { cursorWallMillis } = view;
  const context = useMemo(() => {
    const upTo = tableView.position;
    const focus = cursorWallMillis === undefined ? upTo : Math.min(upTo, history.positionAtWall(cursorWallMillis));
    const events =
      matchingEvents === undefined
        ? history.index.between(focus - CONTEXT_ROWS, Math.min(upTo, focus + CONTEXT_ROWS))
        : matchingEvents.around(focus, CONTEXT_ROWS, upTo).flatMap((position) => history.index.at(position) ?? []);
    return { focus, events };
  }, [tableView, cursorWallMillis, history, matchingEvents]);
  const focusPosition = context.focus;
  const contextEvents = context.events;

  // Navigation
  const seek = useCallback(
    (position: number) =>
      updateView({ ...view, at: { kind: 'position', position: Math.max(0, position) }, playing: false }),
    [view, updateView],
  );
  const pause = useCallback(
    () => updateView({ ...view, at: { kind: 'position', position: asOf.position } }),
    [view, updateView, asOf.position],
  );
  const resume = useCallback(() => updateView(liveView(view)), [view, updateView]);
  const jumpTo = useCallback(
    (at: AsOf) => updateView({ ...view, at, window: undefined, playing: false }),
    [view, updateView],
  );
  const step = useCallback(
    (direction: 1 | -1) => seek(stepPosition(history, asOf.position, direction, headPosition)),
    [seek, history, asOf.position, headPosition],
  );
  const jumpMarker = useCallback(
    (direction: 1 | -1) => {
      const jump = markerJump(history, asOf.position, direction, headPosition, caughtUp);
      if (jump.kind === 'found') seek(jump.position);
      else setMarkerSearch({ view, from: asOf.position, direction });
    },
    [seek, history, asOf.position, headPosition, caughtUp, view, setMarkerSearch],
  );
  // A search that found its marker among the events loaded since: the view jumps to it.
  const searchFound = searchJump?.kind === 'found' ? searchJump.position : undefined;
  useEffect(() => {
    if (searchFound !== undefined) seek(searchFound);
  }, [searchFound, seek]);
  const zoom = useCallback(
    (factor: number, anchor: number) => {
      if (view.window === undefined)
        updateView({ ...view, spanMillis: Math.max(10, Math.min(30 * 86_400_000, view.spanMillis * factor)) });
      else updateView({ ...view, window: zoomWindow(view.window, factor, anchor) });
    },
    [view, updateView],
  );
  // Stable across renders, so the memoised rate charts re-render only when their data changes
  // (recharts measures its SVG paths on every render: a long task if it ran per store notification).
  const moveCursor = useCallback(
    (cursorWallMillis: number) => changeView((current) => ({ ...current, cursorWallMillis })),
    [changeView],
  );
  const openInvestigation = useCallback(
    (position: number) =>
      updateView({ ...view, investigation: { position, contextRadius: view.investigation?.contextRadius ?? 10 } }),
    [view, updateView],
  );
  const closeInvestigation = useCallback(() => updateView({ ...view, investigation: undefined }), [view, updateView]);
  // Stable while the view is (the memoised search box takes it).
  const pickHit = useCallback(
    (hit: SearchHit): void => {
      const around = (wallMillis: number): TimeWindow => ({
        fromWallMillis: wallMillis - view.spanMillis * 0.3,
        toWallMillis: wallMillis + view.spanMillis * 0.7,
      });
      switch (hit.kind) {
        case 'position':
        case 'request':
          seek(hit.position);
          break;
        case 'fence':
          updateView({
            ...view,
            resource: hit.resource,
            cursorWallMillis: hit.startWallMillis,
            window: around(hit.startWallMillis),
          });
          break;
        case 'holder':
          updateView({ ...view, filter: { ...view.filter, holder: hit.holderId } });
          break;
        case 'resource':
          updateView({ ...view, resource: hit.resource });
          break;
      }
    },
    [view, updateView, seek],
  );

  useKeyboardCommands((command) => {
    const middle = (windowNow.fromWallMillis + windowNow.toWallMillis) / 2;
    switch (command) {
      case 'step-back':
        step(-1);
        break;
      case 'step-forward':
        step(1);
        break;
      case 'next-marker':
        jumpMarker(1);
        break;
      case 'previous-marker':
        jumpMarker(-1);
        break;
      case 'toggle-live':
        if (asOf.live) pause();
        else resume();
        break;
      case 'zoom-in':
        zoom(0.5, middle);
        break;
      case 'zoom-out':
        zoom(2, middle);
        break;
      case 'close':
        closeInvestigation();
        break;
    }
  });

  useReplay({
    env,
    store,
    history,
    view,
    fromPosition: asOf.position,
    fromWallMillis: view.playing && !asOf.live ? replayStartWall(view.at, history, caughtUp) : undefined,
    updateView,
  });

  // Debug hook for browser tests and the console: every figure is as of the last committed render.
  useDebugHook(
    env.debugTarget,
    (): DashboardSummary => ({
      connection: snapshot.connection.status,
      live: asOf.live,
      position: asOf.position,
      loadedPosition,
      headPosition,
      newSince: asOf.live ? 0 : Math.max(0, headPosition - asOf.position),
      lanes: total,
      shownLanes: lanes.length,
      generations: [...state.lanes.values()].reduce((n, l) => n + l.generations.length, 0),
      rejections: state.rejections.length,
      restarts: state.restarts.length,
      fenceCounter: state.fenceCounter,
      anomalies: state.anomalyCount,
      shapesDrawn: Number(
        (typeof document === 'undefined'
          ? undefined
          : document.querySelector('[data-testid="lanes-canvas"]')?.getAttribute('data-shapes')) ?? 0,
      ),
      investigation: view.investigation?.position,
      search: view.search,
      matches: matchCounts,
    }),
    (resource, wallMillis) => whoHeld(state, resource, wallMillis),
  );

  // Colours by order of first appearance in the log: the same for live, history and replay.
  const holderIds = history.index.holderIds();
  const colorOf = useHolderColors(holderIds, holderIds.length);
  const probeWall = view.cursorWallMillis ?? (view.at?.kind === 'wall' ? view.at.wallMillis : undefined);

  // The gates' live status, joined with the seq gaps of the viewed log.
  const gatesResult = useGates(env, token);
  const gateReply = gatesResult?.ok === true ? gatesResult.reply : undefined;
  const gates = useMemo(
    () => ({
      rows: gateReply === undefined ? undefined : gateRows(gateReply, state.missingRejections, GATE_STALE_AFTER_MILLIS),
      error: gatesResult?.ok === false ? gatesResult.message : undefined,
    }),
    [gateReply, gatesResult, state.missingRejections],
  );

  return (
    <HolderColorContext value={colorOf}>
      <DashboardLayout
        env={env}
        mainRef={mainRef}
        widthPx={widthPx}
        view={view}
        updateView={updateView}
        snapshot={snapshot}
        history={history}
        asOf={asOf}
        state={state}
        lanes={lanes}
        totalLanes={total}
        match={match}
        matchCounts={matchCounts}
        rejections={rejections}
        hits={hits}
        investigation={investigation}
        link={
          view.investigation === undefined
            ? undefined
            : `${env.origin}/${formatViewUrl({ ...DEFAULT_VIEW, investigation: view.investigation })}`
        }
        probe={
          view.resource !== undefined && probeWall !== undefined ? whoHeld(state, view.resource, probeWall) : undefined
        }
        // Empty: the coordinator is up (it logs CoordinatorStarted at position 1) but no agent has leased anything.
        empty={caughtUp && !hasLeaseActivity(history.head)}
        loading={!caughtUp && loadedPosition === 0}
        windowNow={windowNow}
        resolveWindow={resolveWindow}
        coordinatorNow={coordinatorNow}
        focusPosition={focusPosition}
        tablePosition={tableView.position}
        contextEvents={contextEvents}
        rates={deferredRates}
        denials={deferredDenials}
        holds={deferredHolds}
        gates={gates}
        timeJump={<TimeJump now={env.now} timeZone={timeZone} bounds={jumpBounds} onJump={jumpTo} at={view.at} />}
        holdersPanel={
          <HoldersTable
            rows={holderRows}
            match={match}
            loadingNote={
              holdersLoaded
                ? undefined
                : `loading the log up to ${loadingTo} (${loadedPosition.toLocaleString('en-US')} loaded)…`
            }
            asOfLabel={
              logDamaged
                ? `as of position ${asOf.position.toLocaleString('en-US')}, the last good one (the log is damaged after it)`
                : asOf.live
                  ? 'now (live)'
                  : `as of position ${asOf.position.toLocaleString('en-US')}${asOf.wallMillis === undefined ? '' : ` · ${formatWallDateTime(asOf.wallMillis)}`}`
            }
          />
        }
        markerNote={
          searchJump === undefined || markerSearch === undefined
            ? undefined
            : markerSearchNote(markerSearch, searchJump.kind, headPosition)
        }
        importControl={importControl}
        importAlert={importAlert}
        unreadableAt={unreadableAt}
        actions={{
          seek,
          pause,
          resume,
          step,
          jumpMarker,
          zoom,
          moveCursor,
          openInvestigation,
          closeInvestigation,
          pickHit,
          dismissProblems: () => store.dismissProblems(),
        }}
      />
    </HolderColorContext>
  );
}
