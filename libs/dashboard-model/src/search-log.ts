/**
 * Search by fence, holder, requestId or log position.
 */
import type { CoordinatorEventType } from '@lease-fence/protocol';
import type { EventIndex } from './event-index.js';
import type { ViewState } from './view-state.js';

/** One search result. Every result can be turned into a view (a position, a lane, a cursor). */
export type SearchHit =
  | {
      readonly kind: 'position';
      readonly position: number;
      readonly type: CoordinatorEventType;
      readonly resource: string | undefined;
    }
  | {
      readonly kind: 'fence';
      readonly fence: number;
      readonly resource: string;
      readonly holderId: string;
      readonly position: number;
      readonly startWallMillis: number;
    }
  | {
      readonly kind: 'request';
      readonly requestId: string;
      readonly position: number;
      readonly type: CoordinatorEventType;
      readonly resource: string;
    }
  | {
      readonly kind: 'holder';
      readonly holderId: string;
      readonly resources: readonly string[];
      readonly generations: number;
    }
  | { readonly kind: 'resource'; readonly resource: string; readonly generations: number };

/** Shortest query that is tried as a requestId prefix (characters). */
export const MIN_REQUEST_PREFIX = 4;

/**
 * Finds what a query names, among events at or before `state.position`:
 * - `#123`, `p:123` or `position:123` → that log position; `f42`, `f:42` or `fence:42` → that fence;
 * - a bare number → both the position and the fence;
 * - anything else → the requestId equal to it, or else the one requestId it is a prefix of
 *   (case-insensitive, at least {@link MIN_REQUEST_PREFIX} characters, and only when exactly one
 *   requestId starts so), plus holders and resources containing it (case-insensitive).
 *
 * @param limit - Most results. @defaultValue 20
 * @returns Results, most specific first; empty for an empty query.
 */
export function searchLog(state: ViewState, index: EventIndex, query: string, limit = 20): SearchHit[] {
  const q = query.trim();
  if (q === '') return [];
  const hits: SearchHit[] = [];
  const positionMatch = /^(?:#|p:|position:)\s*(\d+)$/i.exec(q);
  const fenceMatch = /^(?:f:?|fence:)\s*(\d+)$/i.exec(q);
  const bare = /^\d+$/.test(q) ? Number(q) : undefined;
  const position = positionMatch?.[1] !== undefined ? Number(positionMatch[1]) : bare;
  const fence = fenceMatch?.[1] !== undefined ? Number(fenceMatch[1]) : bare;
  if (position !== undefined && fenceMatch === null && position <= state.position) {
    const recorded = index.at(position);
    if (recorded !== undefined) {
      const d = recorded.event.data;
      hits.push({
        kind: 'position',
        position,
        type: recorded.event.type,
        resource: 'resource' in d ? d.resource : undefined,
      });
    }
  }
  if (fence !== undefined && positionMatch === null) {
    for (const lane of state.lanes.values()) {
      for (const g of lane.generations) {
        if (g.fence === fence)
          hits.push({
            kind: 'fence',
            fence,
            resource: g.resource,
            holderId: g.holderId,
            position: g.firstSeen.position,
            startWallMillis: g.startWallMillis,
          });
      }
    }
  }
  if (position !== undefined || fence !== undefined) return hits.slice(0, limit);

  const needle = q.toLowerCase();
  const events = index.events();
  const end = index.indexOf(state.position + 1);
  const exact: SearchHit[] = [];
  const prefixed: SearchHit[] = [];
  const prefixIds = new Set<string>();
  const tryPrefix = q.length >= MIN_REQUEST_PREFIX;
  for (let i = 0; i < end; i += 1) {
    const recorded = events[i];
    if (recorded === undefined) break;
    const { event } = recorded;
    if (event.type !== 'LeaseGranted' && event.type !== 'LeaseRenewed') continue;
    const { requestId } = event.data;
    if (requestId === q)
      exact.push({
        kind: 'request',
        requestId,
        position: recorded.position,
        type: event.type,
        resource: event.data.resource,
      });
    else if (tryPrefix && exact.length === 0 && prefixIds.size <= 1 && requestId.toLowerCase().startsWith(needle)) {
      prefixIds.add(requestId);
      prefixed.push({
        kind: 'request',
        requestId,
        position: recorded.position,
        type: event.type,
        resource: event.data.resource,
      });
    }
  }
  hits.push(...(exact.length > 0 ? exact : prefixIds.size === 1 ? prefixed : []).slice(0, limit));
  const holders = new Map<string, { resources: Set<string>; generations: number }>();
  const resources: SearchHit[] = [];
  for (const lane of state.lanes.values()) {
    if (lane.resource.toLowerCase().includes(needle))
      resources.push({ kind: 'resource', resource: lane.resource, generations: lane.generations.length });
    for (const g of lane.generations) {
      if (!g.holderId.toLowerCase().includes(needle)) continue;
      let h = holders.get(g.holderId);
      if (h === undefined) {
        h = { resources: new Set(), generations: 0 };
        holders.set(g.holderId, h);
      }
      h.resources.add(g.resource);
      h.generations += 1;
    }
  }
  for (const [holderId, h] of [...holders].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    hits.push({ kind: 'holder', holderId, resources: [...h.resources].sort(), generations: h.generations });
  }
  hits.push(
    ...resources.sort((a, b) => ((a as { resource: string }).resource < (b as { resource: string }).resource ? -1 : 1)),
  );
  return hits.slice(0, limit);
}
