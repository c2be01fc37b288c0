/**
 * The URL is the state: the as-of position (or time), time window and zoom, lane filters, search,
 * the selected resource and cursor, replay speed and an open investigation all live in the query
 * string, so a link reopens the same view and back/forward restore views. Pure.
 *
 * | param | meaning |
 * |---|---|
 * | `at` | as-of: a log position (`at=1234`) or an ISO wall time (`at=2026-05-28T12:01:03.120Z`); absent = live |
 * | `from`, `to` | visible window, ISO wall times; absent = follow the as-of time (or now) |
 * | `span` | window width in milliseconds while following |
 * | `q`, `holder`, `rej=1`, `fence=10-200` | filters: resource pattern and `rej` keep lanes; `holder` and `fence` match bars, markers and rows |
 * | `hide=1` | remove the lanes where `holder` and `fence` match nothing (otherwise they are dimmed) |
 * | `search` | search box |
 * | `resource`, `cursor` | selected lane; shared time cursor (ISO wall time) |
 * | `inv`, `ctx` | investigation of the rejection at log position `inv`, ±`ctx` events |
 * | `play`, `speed` | replay forward from `at` at `speed`× wall time |
 *
 * The viewer token never goes in here (see `viewer-token.ts`).
 */
import { parseFenceRange, type LaneFilter, DEFAULT_CONTEXT_RADIUS } from '@lease-fence/dashboard-model';
import type { TimeWindow } from '../timeline/time-scale.js';

/** As-of point: a log position, or a coordinator wall time resolved to the last position at or before it. */
export type AsOf =
  { readonly kind: 'position'; readonly position: number } | { readonly kind: 'wall'; readonly wallMillis: number };

/** Everything the URL holds. */
export interface ViewUrlState {
  /** Undefined: live. */
  readonly at: AsOf | undefined;
  /** Undefined: follow the as-of time (or now when live). */
  readonly window: TimeWindow | undefined;
  /** Window width while following, milliseconds. */
  readonly spanMillis: number;
  readonly filter: LaneFilter;
  readonly search: string;
  readonly resource: string | undefined;
  /** Shared time cursor, coordinator wall epoch milliseconds. */
  readonly cursorWallMillis: number | undefined;
  readonly investigation: { readonly position: number; readonly contextRadius: number } | undefined;
  readonly playing: boolean;
  /** Replay speed, multiple of wall time. */
  readonly speed: number;
}

/** Default window width: 2 minutes. */
export const DEFAULT_SPAN_MILLIS = 120_000;
/** Replay speeds offered. */
export const REPLAY_SPEEDS = [1, 2, 5, 10, 30, 60, 300] as const;

/** The view with nothing in the URL: live, following now, no filter. */
export const DEFAULT_VIEW: ViewUrlState = {
  at: undefined,
  window: undefined,
  spanMillis: DEFAULT_SPAN_MILLIS,
  filter: {},
  search: '',
  resource: undefined,
  cursorWallMillis: undefined,
  investigation: undefined,
  playing: false,
  speed: 1,
};

/**
 * Reads a query string. Unreadable values are ignored (the default is used) rather than thrown:
 * a hand-edited link still opens.
 *
 * @param search - `location.search`, with or without the leading `?`.
 */
export function parseViewUrl(search: string): ViewUrlState {
  const p = new URLSearchParams(search);
  const at = parseAsOf(p.get('at'));
  const from = parseWall(p.get('from'));
  const to = parseWall(p.get('to'));
  const span = positiveInteger(p.get('span'));
  const fence = parseFenceRange(p.get('fence') ?? '');
  const inv = positiveInteger(p.get('inv'));
  const ctx = nonNegativeInteger(p.get('ctx'));
  const speed = Number(p.get('speed'));
  const filter: LaneFilter = {
    ...(nonEmpty(p.get('q')) === undefined ? {} : { resource: nonEmpty(p.get('q')) as string }),
    ...(nonEmpty(p.get('holder')) === undefined ? {} : { holder: nonEmpty(p.get('holder')) as string }),
    ...(p.get('rej') === '1' ? { hasRejections: true } : {}),
    ...(fence ?? {}),
    ...(p.get('hide') === '1' ? { hideUnmatchedLanes: true } : {}),
  };
  return {
    at,
    window:
      from !== undefined && to !== undefined && to > from ? { fromWallMillis: from, toWallMillis: to } : undefined,
    spanMillis: span ?? DEFAULT_SPAN_MILLIS,
    filter,
    search: p.get('search') ?? '',
    resource: nonEmpty(p.get('resource')),
    cursorWallMillis: parseWall(p.get('cursor')),
    investigation: inv === undefined ? undefined : { position: inv, contextRadius: ctx ?? DEFAULT_CONTEXT_RADIUS },
    playing: p.get('play') === '1',
    speed: Number.isFinite(speed) && speed > 0 ? speed : 1,
  };
}

/**
 * What is wrong with the URL's `at`, in a sentence for the page: `parseViewUrl` ignores an
 * unreadable value (the view is then live), and the page says so rather than quietly showing
 * something else than the link asked for.
 *
 * @param search - `location.search`, with or without the leading `?`.
 * @returns Undefined when `at` is absent or readable.
 */
export function describeUnreadableAsOf(search: string): string | undefined {
  const text = new URLSearchParams(search).get('at');
  if (text === null || text.trim() === '' || parseAsOf(text) !== undefined) return undefined;
  return `at="${text}" is neither a log position (at=1234) nor an ISO wall time with its offset (at=2026-05-28T12:01:03.120Z or …+02:00), so this is the live log.`;
}

/**
 * Writes a query string (with `?`, or `''` for the default view). Parameters at their default are left out.
 */
export function formatViewUrl(view: ViewUrlState): string {
  const p = new URLSearchParams();
  if (view.at !== undefined)
    p.set('at', view.at.kind === 'position' ? String(view.at.position) : isoOf(view.at.wallMillis));
  if (view.window !== undefined) {
    p.set('from', isoOf(view.window.fromWallMillis));
    p.set('to', isoOf(view.window.toWallMillis));
  }
  if (view.spanMillis !== DEFAULT_SPAN_MILLIS) p.set('span', String(Math.round(view.spanMillis)));
  if (view.filter.resource !== undefined) p.set('q', view.filter.resource);
  if (view.filter.holder !== undefined) p.set('holder', view.filter.holder);
  if (view.filter.hasRejections === true) p.set('rej', '1');
  if (view.filter.fenceMin !== undefined || view.filter.fenceMax !== undefined) {
    const { fenceMin, fenceMax } = view.filter;
    p.set('fence', fenceMin === fenceMax ? String(fenceMin) : `${fenceMin ?? ''}-${fenceMax ?? ''}`);
  }
  if (view.filter.hideUnmatchedLanes === true) p.set('hide', '1');
  if (view.search !== '') p.set('search', view.search);
  if (view.resource !== undefined) p.set('resource', view.resource);
  if (view.cursorWallMillis !== undefined) p.set('cursor', isoOf(view.cursorWallMillis));
  if (view.investigation !== undefined) {
    p.set('inv', String(view.investigation.position));
    if (view.investigation.contextRadius !== DEFAULT_CONTEXT_RADIUS)
      p.set('ctx', String(view.investigation.contextRadius));
  }
  if (view.playing) p.set('play', '1');
  if (view.speed !== 1) p.set('speed', String(view.speed));
  const text = p.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * What a link opens, in words for the token prompt ("the investigation of the rejection at log
 * position 1234"), so a reader who opened a permalink in a new tab knows that view opens once the
 * token is entered.
 *
 * @returns Undefined for the default live view (nothing particular to keep).
 */
export function describeView(view: ViewUrlState): string | undefined {
  const at =
    view.at === undefined
      ? undefined
      : view.at.kind === 'position'
        ? `log position ${view.at.position}`
        : isoOf(view.at.wallMillis);
  const resource = view.resource === undefined ? '' : ` on ${view.resource}`;
  if (view.investigation !== undefined)
    return `the investigation of the rejection at log position ${view.investigation.position}`;
  if (at !== undefined) return `the log as of ${at}${resource}`;
  if (view.resource !== undefined) return `the live log${resource}`;
  return formatViewUrl(view) === '' ? undefined : 'the live log with this link’s filters';
}

/**
 * The view back at live (the Live button, space, or a replay reaching the head): no as-of point,
 * following now, and no replay, its speed included, so a live link carries no `play` or `speed`.
 * Filters, search, selection and an open investigation stay.
 */
export function liveView(view: ViewUrlState): ViewUrlState {
  return { ...view, at: undefined, window: undefined, playing: false, speed: DEFAULT_VIEW.speed };
}

/**
 * Whether going from `before` to `after` is a new view worth a history entry (back/forward) rather
 * than a refinement of the same one (pan, zoom, cursor, search typing: replaced in place). A
 * replay is one entry: starting it pushes one, its steps (`at` moving while playing) and its stop
 * or its arrival at live replace it, so Back returns to where the replay started instead of
 * walking through its steps or landing on a replay that starts again.
 */
export function isNewView(before: ViewUrlState, after: ViewUrlState): boolean {
  const replay = before.playing; // its steps, and its stop or end, stay in the entry that started it
  const key = (v: ViewUrlState): string =>
    JSON.stringify([replay ? null : v.at, v.filter, v.resource, v.investigation, replay ? null : v.playing]);
  return key(before) !== key(after);
}

function parseAsOf(text: string | null): AsOf | undefined {
  if (text === null || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) {
    const position = Number(text);
    return Number.isSafeInteger(position) ? { kind: 'position', position } : undefined;
  }
  const wall = parseWall(text);
  return wall === undefined ? undefined : { kind: 'wall', wallMillis: wall };
}

/**
 * An ISO 8601 date-time with its offset (`Z` or `±hh:mm`), as links carry wall times: a shared link
 * must mean the same instant in every browser, so a time without an offset (read as the viewer's
 * local time) is refused, as is anything else `Date.parse` would guess at (`May 5`, `-5`, `1.5`).
 */
const ISO_WALL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

function parseWall(text: string | null): number | undefined {
  if (text === null || !ISO_WALL_TIME.test(text.trim())) return undefined;
  const millis = Date.parse(text.trim());
  return Number.isFinite(millis) ? millis : undefined;
}

function isoOf(wallMillis: number): string {
  return new Date(Math.round(wallMillis)).toISOString();
}

function positiveInteger(text: string | null): number | undefined {
  const n = nonNegativeInteger(text);
  return n === undefined || n === 0 ? undefined : n;
}

function nonNegativeInteger(text: string | null): number | undefined {
  if (text === null || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function nonEmpty(text: string | null): string | undefined {
  const t = text?.trim();
  return t === undefined || t === '' ? undefined : t;
}
