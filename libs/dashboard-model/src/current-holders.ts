/**
 * "Who holds what right now, or at 13:24:40?": one row per resource whose lease is current in
 * the log as of the view's position, with how long it has been held and when it expires, as of
 * a wall time (now when live, the as-of time when time-travelling). Sorting and the text filter
 * of the current-holders table live here too, so the page and its tests share one copy.
 *
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership)
 */
import { openGeneration, type LeaseExpiry, type ViewState } from './view-state.js';

/**
 * When a current lease expires, as seen from the as-of wall time. The coordinator's expiry is a
 * monotonic reading; the wall times here are projected from the event that set it (display only).
 * - `ahead`: the projected expiry is after the as-of time;
 * - `passed`: it is at or before the as-of time, but the log has not recorded the expiry yet
 *   (the coordinator's sweep logs `LeaseExpired`; a holder still counts until then);
 * - `unknown`: no loaded event stated an expiry.
 */
export type HolderExpiryKind = 'ahead' | 'passed' | 'unknown';

/** One row of the current-holders table. */
export interface HolderRow {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  /** Position of the grant; undefined when the grant is not among the loaded events. */
  readonly grantPosition: number | undefined;
  /** Where the generation starts: wall time of its grant (or first loaded event), epoch milliseconds. */
  readonly heldSinceWallMillis: number;
  /** As-of wall time minus `heldSinceWallMillis`, milliseconds. */
  readonly heldForMillis: number;
  readonly expiryKind: HolderExpiryKind;
  /** Projected wall time of the coordinator's expiry, epoch milliseconds; undefined when `unknown`. */
  readonly expiresAtWallMillis: number | undefined;
  /** `expiresAtWallMillis` minus the as-of wall time, milliseconds (≤ 0 once `passed`); undefined when `unknown`. */
  readonly expiresInMillis: number | undefined;
  /** What set the expiry (grant, renewal, restart that carried it); undefined when `unknown`. */
  readonly expirySource: LeaseExpiry['source'] | undefined;
  /** `LeaseRenewed` events of this generation up to the position. */
  readonly renewals: number;
  /** Restarts that carried this generation across. */
  readonly carriedAcross: number;
}

/**
 * The current holders of `state`: one row per lane whose last generation is open (granted and
 * not yet released, expired or dropped by a restart, as far as the log says at `state.position`),
 * in lane order (first appearance in the log).
 *
 * @param state - A view state (e.g. {@link ViewHistory.stateAt} the as-of position). Not modified.
 * @param asOfWallMillis - The wall time durations are measured from, coordinator wall-clock epoch
 *   milliseconds: now when live, the as-of time when time-travelling.
 * @returns Fresh rows; never throws.
 */
export function currentHolders(state: ViewState, asOfWallMillis: number): HolderRow[] {
  const rows: HolderRow[] = [];
  for (const lane of state.lanes.values()) {
    const g = openGeneration(lane);
    if (g === undefined) continue;
    const expiresAtWallMillis = g.expiry?.wallMillis;
    const expiresInMillis = expiresAtWallMillis === undefined ? undefined : expiresAtWallMillis - asOfWallMillis;
    rows.push({
      resource: lane.resource,
      holderId: g.holderId,
      fence: g.fence,
      grantPosition: g.granted?.position,
      heldSinceWallMillis: g.startWallMillis,
      heldForMillis: asOfWallMillis - g.startWallMillis,
      expiryKind: expiresInMillis === undefined ? 'unknown' : expiresInMillis > 0 ? 'ahead' : 'passed',
      expiresAtWallMillis,
      expiresInMillis,
      expirySource: g.expiry?.source,
      renewals: g.renewalPositions.length,
      carriedAcross: g.carried.length,
    });
  }
  return rows;
}

/** Columns the current-holders table sorts by. */
export type HolderSortKey = 'resource' | 'holder' | 'fence' | 'heldFor' | 'expiresIn' | 'renewals';

/** Every {@link HolderSortKey}, in the table's column order. */
export const HOLDER_SORT_KEYS: readonly HolderSortKey[] = [
  'resource',
  'holder',
  'fence',
  'heldFor',
  'expiresIn',
  'renewals',
];

/** A sort of the current-holders table. */
export interface HolderSort {
  readonly key: HolderSortKey;
  readonly direction: 'ascending' | 'descending';
}

/** The table's first sort: by resource, A → Z. */
export const DEFAULT_HOLDER_SORT: HolderSort = { key: 'resource', direction: 'ascending' };

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function compareBy(key: HolderSortKey, a: HolderRow, b: HolderRow): number {
  switch (key) {
    case 'resource':
      return byText(a.resource, b.resource);
    case 'holder':
      return byText(a.holderId, b.holderId);
    case 'fence':
      return a.fence - b.fence;
    case 'heldFor':
      return a.heldForMillis - b.heldForMillis;
    case 'expiresIn':
      return (a.expiresInMillis ?? Infinity) - (b.expiresInMillis ?? Infinity) || 0;
    case 'renewals':
      return a.renewals - b.renewals;
  }
}

/**
 * Rows sorted by one column. Ties are broken by resource (ascending), so the order is total and
 * the same on every render; an unknown expiry sorts after every known one when ascending.
 *
 * @param rows - Not modified.
 * @param sort - Column and direction.
 * @returns A new array.
 */
export function sortHolderRows(rows: readonly HolderRow[], sort: HolderSort): HolderRow[] {
  const sign = sort.direction === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => sign * compareBy(sort.key, a, b) || byText(a.resource, b.resource));
}

/**
 * Rows whose resource or holder contains `text` (case-insensitive, surrounding spaces ignored);
 * every row for an empty text.
 *
 * @param rows - Not modified.
 * @param text - What the filter box holds.
 * @returns A new array, in the order of `rows`.
 */
export function filterHolderRows(rows: readonly HolderRow[], text: string): HolderRow[] {
  const needle = text.trim().toLowerCase();
  if (needle === '') return [...rows];
  return rows.filter(
    (row) => row.resource.toLowerCase().includes(needle) || row.holderId.toLowerCase().includes(needle),
  );
}
