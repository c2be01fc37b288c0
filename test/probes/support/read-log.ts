/**
 * Reads a running coordinator's whole event log through `GET /v1/events`, page by page, as a
 * black-box probe sees it.
 */
import { call } from '../../support/coordinator-http.js';

/** One recorded event as `/v1/events` returns it. */
export interface LoggedEvent {
  readonly position: number;
  readonly event: { readonly type: string; readonly data: Readonly<Record<string, unknown>> };
}

/** The largest page `/v1/events` serves. */
const PAGE_LIMIT = 10_000;

/**
 * Every event from position 1 to the head, in order.
 * @throws if a page is not answered with 200.
 */
export async function readWholeLog(url: string, token: string): Promise<LoggedEvent[]> {
  const events: LoggedEvent[] = [];
  for (;;) {
    const after = events.at(-1)?.position ?? 0;
    const reply = await call<{ events: LoggedEvent[]; head: number }>(
      url,
      'GET',
      `/v1/events?after=${after}&limit=${PAGE_LIMIT}`,
      { token },
    );
    if (reply.status !== 200) throw new Error(`GET /v1/events?after=${after} answered ${reply.status}: ${reply.text}`);
    events.push(...reply.body.events);
    if (reply.body.events.length === 0 || events.at(-1)!.position >= reply.body.head) return events;
  }
}
