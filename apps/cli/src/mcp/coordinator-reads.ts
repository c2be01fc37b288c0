/**
 * What the MCP server reads from the coordinator besides its own leases: the current holders,
 * the recorded refusals, and the whole log folded by the dashboard's own model
 * (`@lease-fence/dashboard-model`), so `who_holds` at a past time or position and
 * `explain_rejection` give the dashboard's answers. Every role may read these routes, so the
 * agent token suffices. A port, so the server's specs can run without a coordinator log.
 */
import type { CoordinatorHttp } from '@lease-fence/client';
import { ViewHistory, type Generation } from '@lease-fence/dashboard-model';
import {
  LeasesReplySchema,
  RejectionsReplySchema,
  type RecordedRejection,
  type WireLease,
} from '@lease-fence/protocol';
import { readEvents } from '../log-reader.js';

/** The coordinator's read routes, as the MCP server uses them. Each throws when the coordinator cannot answer. */
export interface CoordinatorReads {
  /** `GET /v1/leases`: the current holders. */
  leases(signal?: AbortSignal): Promise<readonly WireLease[]>;
  /** `GET /v1/rejections`: the most recent recorded refusals (at most 1000), oldest first. */
  rejections(signal?: AbortSignal): Promise<readonly RecordedRejection[]>;
  /** The whole log (`GET /v1/events`, every page up to the head) folded into the dashboard model. */
  history(): Promise<ViewHistory>;
}

/**
 * The reads over the SDK's HTTP transport (its timeouts, retries and typed errors), replies
 * parsed with the protocol's schemas; the log is read by the command line's `readEvents`.
 *
 * @param http - A transport with a token of any role (every role may read).
 */
export function coordinatorHttpReads(http: CoordinatorHttp): CoordinatorReads {
  return {
    leases: async (signal) =>
      (await http.get('list leases', '/v1/leases', { 200: LeasesReplySchema }, signal)).value.leases,
    rejections: async (signal) =>
      (await http.get('list rejections', '/v1/rejections', { 200: RejectionsReplySchema }, signal)).value.rejections,
    history: async () => {
      const history = new ViewHistory();
      await readEvents(http, {}, (recorded) => history.append(recorded));
      return history;
    },
  };
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
