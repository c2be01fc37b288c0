/**
 * `GET /v1/gates` as the dashboard uses it: the gates' latest reported status (viewer token),
 * parsed with the protocol's `GatesReplySchema`.
 *
 * Polled rather than carried on the event stream: the stream delivers the log (facts with
 * positions, replayed for time travel), while a gate's status is observation the coordinator
 * keeps in memory only, with no position to replay it at.
 */
import { GatesReplySchema, type GatesReply } from '@lease-fence/protocol';
import type { FetchLike } from '../stream/http-client.js';

/** The gates, or why there are none (data, not thrown). */
export type GatesResult =
  { readonly ok: true; readonly reply: GatesReply } | { readonly ok: false; readonly message: string };

/**
 * Reads `GET /v1/gates`.
 * @param baseUrl - Origin of the coordinator.
 * @returns See {@link GatesResult}; never rejects.
 */
export async function fetchGates(
  baseUrl: string,
  token: string,
  fetch: FetchLike,
  signal?: AbortSignal,
): Promise<GatesResult> {
  try {
    const response = await fetch(new URL('/v1/gates', baseUrl).toString(), {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      ...(signal === undefined ? {} : { signal }),
    });
    if (!response.ok) return { ok: false, message: `GET /v1/gates answered ${response.status}` };
    const parsed = GatesReplySchema.safeParse(await response.json());
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        message: `GET /v1/gates: ${issue?.path.join('.') ?? 'body'}: ${issue?.message ?? 'malformed'}`,
      };
    }
    return { ok: true, reply: parsed.data };
  } catch (error) {
    return { ok: false, message: `could not reach the coordinator for GET /v1/gates: ${(error as Error).message}` };
  }
}
