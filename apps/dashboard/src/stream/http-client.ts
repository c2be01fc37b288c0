/**
 * The coordinator's read API as the dashboard uses it: `GET /v1/events?after=&limit=` with a
 * viewer token (`Authorization: Bearer <token>`). Replies are parsed with the protocol's `EventsReplySchema`.
 */
import { EventsReplySchema, type RecordedEvent } from '@lease-fence/protocol';

/** The part of `fetch` the client uses. */
export type FetchLike = (
  url: string,
  init: { readonly headers: Record<string, string>; readonly signal?: AbortSignal },
) => Promise<{ readonly status: number; readonly ok: boolean; json(): Promise<unknown> }>;

/**
 * A page of events, or why there is none (data, not thrown):
 * - `unauthorized`: 401/403, the viewer token was refused;
 * - `http-error`: another non-2xx status;
 * - `invalid-body`: the reply does not match `{ events: RecordedEvent[], head }`;
 * - `network`: the request failed (coordinator down, aborted).
 */
export type EventsPageResult =
  | { readonly ok: true; readonly events: RecordedEvent[]; readonly head: number }
  | {
      readonly ok: false;
      readonly reason: 'unauthorized' | 'http-error' | 'invalid-body' | 'network';
      readonly status: number | undefined;
      readonly message: string;
    };

/** Options of {@link fetchEventsPage}. */
export interface FetchEventsOptions {
  /** Origin of the coordinator, e.g. `http://127.0.0.1:3000`. */
  readonly baseUrl: string;
  readonly token: string;
  /** Events after this position. Integer ≥ 0. */
  readonly after: number;
  /** Most events. Integer 1–10 000. */
  readonly limit: number;
  readonly fetch: FetchLike;
  readonly signal?: AbortSignal;
}

/**
 * Reads one page of the log.
 *
 * @returns See {@link EventsPageResult}; never rejects.
 */
export async function fetchEventsPage(options: FetchEventsOptions): Promise<EventsPageResult> {
  const url = new URL('/v1/events', options.baseUrl);
  url.searchParams.set('after', String(options.after));
  url.searchParams.set('limit', String(options.limit));
  let response: Awaited<ReturnType<FetchLike>>;
  try {
    response = await options.fetch(url.toString(), {
      headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    return {
      ok: false,
      reason: 'network',
      status: undefined,
      message: `could not reach the coordinator: ${(error as Error).message}`,
    };
  }
  if (response.status === 401 || response.status === 403)
    return {
      ok: false,
      reason: 'unauthorized',
      status: response.status,
      message: 'the coordinator refused the viewer token',
    };
  if (!response.ok)
    return {
      ok: false,
      reason: 'http-error',
      status: response.status,
      message: `GET /v1/events answered ${response.status}`,
    };
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    return {
      ok: false,
      reason: 'invalid-body',
      status: response.status,
      message: `GET /v1/events: body is not JSON: ${(error as Error).message}`,
    };
  }
  const parsed = EventsReplySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: 'invalid-body',
      status: response.status,
      message: `GET /v1/events: ${issue === undefined ? 'body' : issue.path.join('.')}: ${issue?.message ?? 'does not match EventsReplySchema'}`,
    };
  }
  return { ok: true, events: parsed.data.events, head: parsed.data.head };
}
