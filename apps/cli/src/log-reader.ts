/**
 * Reading the coordinator's log over HTTP (`GET /v1/events`, page by page) for the commands that
 * fold it: `holders --at`, `events`, `explain`.
 */
import type { CoordinatorHttp } from '@lease-fence/client';
import { formatWallDateTime } from '@lease-fence/dashboard-model';
import { EventsReplySchema, type RecordedEvent } from '@lease-fence/protocol';

/** Events per `GET /v1/events` page (the route's largest `limit`). */
const PAGE = 10_000;

/**
 * Reads the events after position `after`, up to `through` (inclusive; absent = the head as of the
 * last page), calling `onEvent` for each in log order.
 *
 * @returns The log's head position as of the last page read.
 * @throws what {@link CoordinatorHttp.get} throws.
 */
export async function readEvents(
  http: CoordinatorHttp,
  options: { readonly after?: number; readonly through?: number },
  onEvent: (recorded: RecordedEvent) => void,
): Promise<number> {
  let after = options.after ?? 0;
  for (;;) {
    const limit = options.through === undefined ? PAGE : Math.min(PAGE, options.through - after);
    if (limit <= 0) return after;
    const { value } = await http.get('read events', `/v1/events?after=${after}&limit=${limit}`, {
      200: EventsReplySchema,
    });
    for (const recorded of value.events) onEvent(recorded);
    const last = value.events[value.events.length - 1];
    if (last === undefined || last.position >= value.head) return value.head;
    after = last.position;
  }
}

/**
 * The log's head position now (one `GET /v1/events` of a single event), for `events --follow`
 * without `--from`, which prints only what is logged from now on.
 * @throws what {@link CoordinatorHttp.get} throws.
 */
export async function readHead(http: CoordinatorHttp): Promise<number> {
  const { value } = await http.get('read the log head', '/v1/events?after=0&limit=1', { 200: EventsReplySchema });
  return value.head;
}

/**
 * Why a log position past the head cannot be answered, in the words `holders --at` and `explain`
 * both use: `the log has no event at 900 (it ends at position 812)`.
 */
export const pastTheLogEnd = (position: number, head: number): string =>
  `the log has no event at ${position} (it ends at position ${head})`;

/**
 * Why a wall time after now cannot be answered from the log, in the words `holders --at` and the
 * MCP server's `who_holds` both use, or `undefined` when it is not after now. The log tells who
 * held what; an open lease's end after now is only a projection (it may be renewed, or released
 * sooner), so answering "nobody held it" for a time to come would be a guess.
 *
 * @param text - The time as the user typed it.
 * @param wallMillis - That time, epoch milliseconds.
 * @param nowWallMillis - This host's wall clock now, epoch milliseconds.
 * @param clockSkewMillis - How far this host's clock may be off the coordinator's: a time within it is not refused.
 */
export const inTheFuture = (
  text: string,
  wallMillis: number,
  nowWallMillis: number,
  clockSkewMillis: number,
): string | undefined =>
  wallMillis > nowWallMillis + clockSkewMillis
    ? `${text} is in the future (it is ${formatWallDateTime(nowWallMillis)} by this host's clock): the log tells who held a resource, not who will`
    : undefined;
