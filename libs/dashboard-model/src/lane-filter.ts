/**
 * The filters' settings and the fence box's reading. What they match, bar by bar and row by row,
 * and which lanes they keep is `lease-match.ts`.
 */

/**
 * The dashboard's filters. Every field is optional; all given fields must match. The resource
 * pattern and "with rejections" keep or remove whole lanes; the holder and the fence range match
 * bar by bar and row by row (see `compileLeaseMatch` in `lease-match.ts`).
 */
export interface LaneFilter {
  /** Resource pattern: `*` and `?` wildcards (whole id), otherwise a case-insensitive substring. */
  readonly resource?: string;
  /** Bars, markers and rows whose holder id contains this (case-insensitive). */
  readonly holder?: string;
  /** Keep only lanes with at least one rejection. */
  readonly hasRejections?: boolean;
  /** Bars, markers and rows whose fence is ≥ this. */
  readonly fenceMin?: number;
  /** Bars, markers and rows whose fence is ≤ this. */
  readonly fenceMax?: number;
  /** Remove the lanes where the holder and fence filters match no bar and no rejection (otherwise they are dimmed). */
  readonly hideUnmatchedLanes?: boolean;
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
