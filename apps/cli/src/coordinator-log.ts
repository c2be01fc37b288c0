/**
 * What the command line and the MCP server read from the coordinator besides leases: the current
 * holders, the recorded refusals, and the whole event log folded by the dashboard's own model
 * (`@lease-fence/dashboard-model`), so "who held it then" and the explanation of a refusal are the
 * dashboard's answers. Every role may read these routes, so an agent token suffices.
 */
import {
  EventsReplySchema,
  LeasesReplySchema,
  RejectionsReplySchema,
  type EventsReply,
  type RecordedRejection,
  type WireLease,
} from '@lease-fence/protocol';
import type { CoordinatorHttp } from '@lease-fence/client';
import { ViewHistory, type Generation } from '@lease-fence/dashboard-model';

/** The coordinator's read routes, as the MCP server uses them. Each throws when the coordinator cannot answer. */
export interface CoordinatorReads {
  /** `GET /v1/leases`: the current holders. */
  leases(signal?: AbortSignal): Promise<readonly WireLease[]>;
  /** `GET /v1/rejections`: the most recent recorded refusals (at most 1000), oldest first. */
  rejections(signal?: AbortSignal): Promise<readonly RecordedRejection[]>;
  /** `GET /v1/events?after=&limit=`: one page of the log after `after`, and its head position. */
  eventsAfter(after: number, limit: number, signal?: AbortSignal): Promise<EventsReply>;
}

/** Events per page when the whole log is loaded (the route's maximum). */
const PAGE_EVENTS = 10_000;

/**
 * Loads the whole log into the dashboard model's {@link ViewHistory}, page by page, up to the head
 * position the first page reported (events appended meanwhile are left for the next call).
 *
 * @throws what {@link CoordinatorReads.eventsAfter} throws.
 */
export async function loadHistory(reads: CoordinatorReads, signal?: AbortSignal): Promise<ViewHistory> {
  const history = new ViewHistory();
  let after = 0;
  let head = Number.POSITIVE_INFINITY;
  while (after < head) {
    const page = await reads.eventsAfter(after, PAGE_EVENTS, signal);
    head = Math.min(head, page.head);
    if (page.events.length === 0) break;
    for (const recorded of page.events) history.append(recorded);
    after = page.events[page.events.length - 1]?.position ?? head;
  }
  return history;
}

/**
 * The generation of `resource` that carried `fence`, as the loaded log tells it (the latest
 * one when a fence was seen twice); undefined when the log has no such generation.
 */
export function generationOf(history: ViewHistory, resource: string, fence: number): Generation | undefined {
  const generations = history.head.lanes.get(resource)?.generations ?? [];
  for (let i = generations.length - 1; i >= 0; i -= 1) {
    const generation = generations[i];
    if (generation?.fence === fence) return generation;
  }
  return undefined;
}

/**
 * Who held `resource` at log `position`: the latest of its generations still open once the event
 * at that position was recorded (a lease that lapsed but whose expiry was not recorded yet counts
 * as open, as in the log). Undefined when nobody did.
 *
 * @throws RangeError when `position` is not an integer ≥ 0 (`ViewHistory.stateAt`).
 */
export function holderAtPosition(history: ViewHistory, resource: string, position: number): Generation | undefined {
  const open =
    history
      .stateAt(position)
      .lanes.get(resource)
      ?.generations.filter((g) => g.end === undefined) ?? [];
  return open[open.length - 1];
}

/**
 * The reads over the SDK's HTTP transport (its timeouts, retries and typed errors), replies
 * parsed with the protocol's schemas.
 *
 * @param http - A transport with a token of any role (every role may read).
 */
export function coordinatorHttpReads(http: CoordinatorHttp): CoordinatorReads {
  return {
    leases: async (signal) =>
      (await http.get('list leases', '/v1/leases', { 200: LeasesReplySchema }, signal)).value.leases,
    rejections: async (signal) =>
      (await http.get('list rejections', '/v1/rejections', { 200: RejectionsReplySchema }, signal)).value.rejections,
    eventsAfter: async (after, limit, signal) =>
      (await http.get('read events', `/v1/events?after=${after}&limit=${limit}`, { 200: EventsReplySchema }, signal))
        .value,
  };
}
