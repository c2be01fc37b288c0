/**
 * Lane filters: they remove lanes (the view shows "k of N lanes"), never bars inside a lane.
 */
import type { Lane, ViewState } from './view-state.js';

/** What lanes to keep. Every field is optional; all given fields must match. */
export interface LaneFilter {
  /** Resource pattern: `*` and `?` wildcards (whole id), otherwise a case-insensitive substring. */
  readonly resource?: string;
  /** Keep lanes with a generation whose holder id contains this (case-insensitive). */
  readonly holder?: string;
  /** Keep only lanes with at least one rejection. */
  readonly hasRejections?: boolean;
  /** Keep lanes with a generation whose fence is ≥ this. */
  readonly fenceMin?: number;
  /** Keep lanes with a generation whose fence is ≤ this. */
  readonly fenceMax?: number;
}

/**
 * The lanes of `state` that match `filter`, sorted by resource id, and how many there are in all.
 *
 * @returns `lanes` (kept, sorted) and `total` (every lane of the state).
 */
export function filterLanes(state: ViewState, filter: LaneFilter): { readonly lanes: Lane[]; readonly total: number } {
  const resource = compilePattern(filter.resource);
  const holder = filter.holder?.trim().toLowerCase() || undefined;
  const fenceMin = filter.fenceMin ?? -Infinity;
  const fenceMax = filter.fenceMax ?? Infinity;
  const byFence = filter.fenceMin !== undefined || filter.fenceMax !== undefined;
  const lanes: Lane[] = [];
  for (const lane of state.lanes.values()) {
    if (resource !== undefined && !resource(lane.resource)) continue;
    if (filter.hasRejections === true && lane.rejections.length === 0) continue;
    if (holder !== undefined && !lane.generations.some((g) => g.holderId.toLowerCase().includes(holder))) continue;
    if (byFence && !lane.generations.some((g) => g.fence >= fenceMin && g.fence <= fenceMax)) continue;
    lanes.push(lane);
  }
  lanes.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  return { lanes, total: state.lanes.size };
}

/**
 * Parses a fence range typed by a person: `12`, `10-200`, `10-`, `-200`.
 *
 * @returns The bounds, or undefined when the text is empty or not a range.
 */
export function parseFenceRange(text: string): { readonly fenceMin?: number; readonly fenceMax?: number } | undefined {
  const match = /^\s*(\d+)?\s*(-)?\s*(\d+)?\s*$/.exec(text);
  if (match === null || (match[1] === undefined && match[3] === undefined)) return undefined;
  const lo = match[1] === undefined ? undefined : Number(match[1]);
  const hi = match[3] === undefined ? undefined : Number(match[3]);
  if (match[2] === undefined) return { fenceMin: lo ?? hi, fenceMax: lo ?? hi };
  return { ...(lo === undefined ? {} : { fenceMin: lo }), ...(hi === undefined ? {} : { fenceMax: hi }) };
}

/** What the fence box says: a range to filter by, no fence filter (empty box), or why the text is not a range. */
export type FenceFilterInput =
  | { readonly ok: true; readonly range: { readonly fenceMin?: number; readonly fenceMax?: number } | undefined }
  | { readonly ok: false; readonly message: string };

/** Shown beside a fence box that does not hold a range. */
export const FENCE_RANGE_HINT = 'fence range like 10-200 or 42';

/**
 * Reads the fence box: empty → no filter; `12`, `10-200`, `10-`, `-200` → that range; anything
 * else (letters, a range whose low end is above its high end) → an error message to show beside
 * the box. Pure.
 */
export function parseFenceFilterInput(text: string): FenceFilterInput {
  if (text.trim() === '') return { ok: true, range: undefined };
  const range = parseFenceRange(text);
  if (range === undefined) return { ok: false, message: FENCE_RANGE_HINT };
  if (range.fenceMin !== undefined && range.fenceMax !== undefined && range.fenceMin > range.fenceMax) {
    return { ok: false, message: `${FENCE_RANGE_HINT} (low end first)` };
  }
  return { ok: true, range };
}

function compilePattern(pattern: string | undefined): ((resource: string) => boolean) | undefined {
  const p = pattern?.trim();
  if (p === undefined || p === '') return undefined;
  if (!/[*?]/.test(p)) {
    const needle = p.toLowerCase();
    return (resource) => resource.toLowerCase().includes(needle);
  }
  const source = p
    .split('')
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const regex = new RegExp(`^${source}$`, 'i');
  return (resource) => regex.test(resource);
}
