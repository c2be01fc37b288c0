/**
 * Pure navigation over the loaded log: resolving the URL's as-of point to a position, the window
 * that follows it, stepping one event, jumping to rejections and restarts, and how far the stream
 * must load for a view.
 */
import type { LogBounds, ViewHistory } from '@lease-fence/dashboard-model';
import type { TimeWindow } from '../timeline/time-scale.js';
import type { AsOf, ViewUrlState } from './url-state.js';

/** The view's position in the log. */
export interface ResolvedAsOf {
  /** True when following the head of the log. */
  readonly live: boolean;
  /** Position the view is folded to (the last loaded position ≤ the request). */
  readonly position: number;
  /** Coordinator wall time of that point (the as-of line); undefined when nothing is loaded. */
  readonly wallMillis: number | undefined;
  /** A requested position beyond the head of the log (only once the head is known). */
  readonly beyondLog: number | undefined;
  /**
   * Whether what is loaded settles the point: live; a position loaded (or the head's, when the
   * request is beyond it); a wall time passed by a loaded event or with the whole log loaded.
   * Until then `position` is only the last loaded one, and the stream loads on
   * ({@link ingestTarget}).
   */
  readonly settled: boolean;
}

/**
 * Whether the loaded events are the whole log: the catch-up has reached the head at least once
 * (before that, the head as last heard may be a stale 0) and nothing after the head is missing.
 * The one rule behind {@link resolveAsOf}'s `settled`, {@link logBounds}' last wall time and
 * whether {@link markerJump} loads on.
 *
 * @param history - The loaded log.
 * @param headPosition - Head of the log as last heard.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 */
export function wholeLogLoaded(history: ViewHistory, headPosition: number, headKnown: boolean): boolean {
  return headKnown && history.position >= headPosition;
}

/**
 * Resolves the URL's as-of point against what is loaded.
 *
 * @param at - From the URL; undefined = live.
 * @param history - The loaded log.
 * @param headPosition - Head of the log as last heard.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 */
export function resolveAsOf(
  at: AsOf | undefined,
  history: ViewHistory,
  headPosition: number,
  headKnown: boolean,
): ResolvedAsOf {
  const last = history.position;
  const whole = wholeLogLoaded(history, headPosition, headKnown);
  if (at === undefined)
    return { live: true, position: last, wallMillis: history.head.lastWallMillis, beyondLog: undefined, settled: true };
  if (at.kind === 'wall') {
    const position = history.positionAtWall(at.wallMillis);
    const passed = history.index.wallMaxAt(history.index.size - 1) > at.wallMillis;
    return {
      live: false,
      position,
      wallMillis: at.wallMillis,
      beyondLog: undefined,
      settled: passed || whole,
    };
  }
  const position = Math.min(at.position, last);
  const loaded = history.index.events()[history.index.indexOf(position + 1) - 1];
  return {
    live: false,
    position: loaded?.position ?? 0,
    wallMillis: loaded?.event.data.wallMillis,
    beyondLog: headKnown && at.position > headPosition ? at.position : undefined,
    settled: last >= at.position || whole,
  };
}

/**
 * The log's ends for the time input (`jumpOutsideLog` in `@lease-fence/dashboard-model`).
 * The last wall time is given only with the whole log loaded ({@link wholeLogLoaded}): paused, the
 * page stops loading while the log grows, and before the first catch-up ends the head is not yet
 * known, so a time after the last loaded event may still be in the log, and the view loads on to
 * it ({@link ingestTarget}) instead of refusing it.
 *
 * @param history - The loaded log.
 * @param headPosition - Head of the log as last heard.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 */
export function logBounds(history: ViewHistory, headPosition: number, headKnown: boolean): LogBounds {
  return {
    firstPosition: history.index.firstPosition,
    lastPosition: Math.max(headPosition, history.position),
    firstWallMillis: history.index.events()[0]?.event.data.wallMillis,
    lastWallMillis: wholeLogLoaded(history, headPosition, headKnown) ? history.head.lastWallMillis : undefined,
  };
}

/** The window that follows `anchorWallMillis`: most of `spanMillis` before it, a little after. */
export function followWindow(anchorWallMillis: number, spanMillis: number): TimeWindow {
  return { fromWallMillis: anchorWallMillis - spanMillis * 0.85, toWallMillis: anchorWallMillis + spanMillis * 0.15 };
}

/**
 * The position one event before or after `position` among the loaded events; forward past the
 * last loaded event it is `position + 1` when the log has more (the stream then loads it), else
 * `position`.
 */
export function stepPosition(history: ViewHistory, position: number, direction: 1 | -1, headPosition: number): number {
  const events = history.index.events();
  if (direction === -1) {
    const before = events[history.index.indexOf(position) - 1];
    return before?.position ?? Math.min(position, Math.max(0, history.index.firstPosition - 1));
  }
  const after = events[history.index.indexOf(position + 1)];
  if (after !== undefined) return after.position;
  return position < headPosition ? position + 1 : position;
}

/** A jump to a rejection or restart that found none loaded ({@link markerJump}), for the view it started from. */
export interface MarkerSearch {
  /** The view the jump was asked in: the search ends when the view changes. */
  readonly view: ViewUrlState;
  /** The as-of position the jump started from. */
  readonly from: number;
  readonly direction: 1 | -1;
}

/**
 * What the toolbar says of a {@link MarkerSearch} whose {@link markerJump} is `kind` now
 * (undefined once it is found: the view has jumped).
 */
export function markerSearchNote(
  search: MarkerSearch,
  kind: 'found' | 'load' | 'none',
  headPosition: number,
): string | undefined {
  const from = search.from.toLocaleString('en-US');
  if (kind === 'found') return undefined;
  if (kind === 'load') return `Loading the log for the next rejection or restart after position ${from}…`;
  return search.direction === 1
    ? `No rejection or restart after position ${from} (the log ends at ${headPosition.toLocaleString('en-US')}).`
    : `No rejection or restart before position ${from}.`;
}

/**
 * Where a jump to the next / previous rejection or restart from `position` stands: `found` among
 * the loaded events; `load` when none is loaded after it but the log has more (a paused view holds
 * its loading, so the next one may not be loaded yet: the stream follows until one is, or the head);
 * `none` when the loaded events are the whole log in that direction.
 *
 * @param history - The loaded log (read now, not from an earlier render).
 * @param position - Where the jump starts (the view's as-of position).
 * @param direction - 1: forward, -1: back (the log is loaded from its start, so back is never `load`).
 * @param headPosition - Head of the log as last heard.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 */
export function markerJump(
  history: ViewHistory,
  position: number,
  direction: 1 | -1,
  headPosition: number,
  headKnown: boolean,
): { readonly kind: 'found'; readonly position: number } | { readonly kind: 'load' | 'none' } {
  const found = history.index.nextMarker(position, direction);
  if (found !== undefined) return { kind: 'found', position: found };
  return direction === 1 && !wholeLogLoaded(history, headPosition, headKnown) ? { kind: 'load' } : { kind: 'none' };
}

/**
 * The coordinator wall time a replay starts its clock from: the as-of point's, once the log is
 * loaded up to it. Before that the as-of point's time is unknown, and a clock started from a
 * guess would either stick at the start or run to the end at once, so the replay waits.
 *
 * @param at - From the URL; undefined = live (no replay).
 * @param history - The loaded log.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 * @returns Coordinator wall-clock epoch milliseconds, or undefined while the as-of point is not loaded.
 */
export function replayStartWall(at: AsOf | undefined, history: ViewHistory, headKnown: boolean): number | undefined {
  if (at === undefined) return undefined;
  if (at.kind === 'wall')
    return headKnown || (history.head.lastWallMillis ?? -Infinity) >= at.wallMillis ? at.wallMillis : undefined;
  if (!headKnown && history.position < at.position) return undefined;
  return resolveAsOf(at, history, history.position, headKnown).wallMillis;
}

/**
 * What one tick of a replay does: `seek` forward to a later position, `hold` where it is, or go
 * `live` once it has reached the head of the log and the log is loaded up to the head.
 */
export type ReplayStep =
  { readonly kind: 'hold' } | { readonly kind: 'seek'; readonly position: number } | { readonly kind: 'live' };

/**
 * One tick of a replay whose clock reads `wallMillis`: the last loaded position at or before that
 * time, never behind `fromPosition`.
 *
 * @param history - The loaded log (read now, not from an earlier render).
 * @param fromPosition - The replay's current position.
 * @param wallMillis - The replay clock, coordinator wall-clock epoch milliseconds.
 * @param headPosition - Head of the log as last heard.
 * @param headKnown - Whether the catch-up has reached the head at least once (before that, never live).
 */
export function replayStep(
  history: ViewHistory,
  fromPosition: number,
  wallMillis: number,
  headPosition: number,
  headKnown: boolean,
): ReplayStep {
  const position = Math.max(fromPosition, history.positionAtWall(wallMillis));
  if (headKnown && position >= headPosition && history.position >= headPosition) return { kind: 'live' };
  return position === fromPosition ? { kind: 'hold' } : { kind: 'seek', position };
}

/** Events loaded ahead of the as-of position while replaying. */
export const REPLAY_LOAD_AHEAD = 10_000;

/**
 * How far the stream must load for a view: undefined = follow live; otherwise hold at this
 * position (never below what is already loaded, so pausing keeps memory where it is). A replay
 * loads {@link REPLAY_LOAD_AHEAD} events ahead of its position; a wall time later than every
 * loaded event follows the stream until an event passes it (the log grew while the view was
 * paused, or the time is still to come).
 *
 * @param view - The URL's view.
 * @param asOf - The view's point resolved against what is loaded ({@link resolveAsOf}).
 * @param loadedPosition - The last loaded position.
 * @param headKnown - Whether the catch-up has reached the head at least once.
 */
export function ingestTarget(
  view: ViewUrlState,
  asOf: ResolvedAsOf,
  loadedPosition: number,
  headKnown: boolean,
): number | undefined {
  if (view.at === undefined) return undefined;
  if (!headKnown) return undefined; // load to the head once, then hold
  // A time no loaded event has passed yet (the last loaded one is at or before it): follow the
  // stream until one does. Holding at the head as last heard instead chases a moving target while
  // the log grows (each event past the hold raises the head, and each raise re-opened the socket:
  // dozens of sockets a second for a time in the future).
  if (view.at.kind === 'wall' && asOf.position >= loadedPosition) return undefined;
  const ahead = view.playing ? REPLAY_LOAD_AHEAD : 0;
  const wanted =
    view.at.kind === 'position'
      ? view.at.position + Math.max(ahead, view.investigation?.contextRadius ?? 0)
      : loadedPosition;
  const investigation =
    view.investigation === undefined ? 0 : view.investigation.position + view.investigation.contextRadius;
  return Math.max(loadedPosition, wanted, investigation);
}
