/**
 * `fenced_request`'s I/O: one HTTP request to a `lease-fence-gate` sidecar carrying the held
 * lease's signed token in `Lease-Fence-Token`, and the reading of the answer: the upstream's, or
 * one the gate gave itself (its refusals are documented in apps/gate/README.md).
 */
import { z } from 'zod';

/** The header the gate reads the signed grant from (apps/gate/README.md). */
export const LEASE_FENCE_TOKEN_HEADER = 'Lease-Fence-Token';

/** The most characters of an answer's body handed back to the agent. */
export const MAX_BODY_CHARS = 64 * 1024;

const HolderFenceSchema = z.object({ holderId: z.string(), fence: z.number().int() });

/** The gate's 409: the write was refused and never reached the service; the refusal is in its outbox. */
const GateFenceRefusalSchema = z.object({
  ok: z.literal(false),
  reason: z.enum(['stale-fence', 'double-grant']),
  resource: z.string(),
  seq: z.number().int(),
  rejected: HolderFenceSchema,
  current: HolderFenceSchema,
});

/** Every other answer the gate gives itself (401 `invalid-token`, 503 `keys-unavailable`, 502/504 …). */
const GateOwnAnswerSchema = z.object({ ok: z.literal(false), reason: z.string(), message: z.string() });

/**
 * The sidecar's own readiness path (apps/gate/src/gate-server.ts, `GATE_PATH_PREFIX`): a ready
 * gate answers 200 `{ ok: true, resource, floor }`, one still starting 503 `{ reason: 'not-ready' }`.
 */
export const GATE_READY_PATH = '/.well-known/lease-fence-gate/readyz';

const GateReadySchema = z.object({ ok: z.literal(true), resource: z.string() });

/** Why `url` is not a ready `lease-fence-gate` guarding `resource`, or `undefined` when it is. */
export type GateCheck =
  undefined | { readonly reason: 'not-a-gate' | 'other-resource' | 'not-ready'; readonly detail: string };

/**
 * Asks the origin of `url` whether it is a `lease-fence-gate` guarding `resource`, before a
 * signed token is sent there: a token handed to a service without a gate skips the fence check
 * and can be replayed by whoever received it. Only a ready gate naming `resource` passes.
 */
export async function checkGate(url: string, resource: string, signal: AbortSignal): Promise<GateCheck> {
  const probe = new URL(GATE_READY_PATH, url).href;
  let response: Response;
  try {
    response = await fetch(probe, { signal, redirect: 'manual', headers: { accept: 'application/json' } });
  } catch (error) {
    if (signal.aborted) throw error;
    return { reason: 'not-a-gate', detail: `${probe} could not be reached (${(error as Error).message})` };
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.status === 503 && (json as { reason?: unknown } | undefined)?.reason === 'not-ready')
    return { reason: 'not-ready', detail: `the gate at ${new URL(url).origin} is still starting` };
  const ready = GateReadySchema.safeParse(json);
  if (response.status !== 200 || !ready.success)
    return { reason: 'not-a-gate', detail: `${probe} answered ${response.status}, not a lease-fence-gate's readiness` };
  if (ready.data.resource !== resource)
    return {
      reason: 'other-resource',
      detail: `the gate at ${new URL(url).origin} guards ${JSON.stringify(ready.data.resource)}, not ${JSON.stringify(resource)}`,
    };
  return undefined;
}

/** What one fenced request came back with. */
export type FencedAnswer =
  | {
      readonly kind: 'upstream';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly body: string;
      /** True when the body was longer than {@link MAX_BODY_CHARS} and was cut (the rest was never read). */
      readonly truncated: boolean;
      /** A redirect's `Location`, resolved against the request's URL: told to the agent, never followed. */
      readonly location?: string;
    }
  | ({ readonly kind: 'fence-refused'; readonly status: number } & z.infer<typeof GateFenceRefusalSchema>)
  | ({ readonly kind: 'gate-refused'; readonly status: number } & z.infer<typeof GateOwnAnswerSchema>);

/** One request as `fenced_request` sends it. */
export interface FencedRequest {
  readonly method: string;
  readonly url: string;
  readonly body: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly signedToken: string;
  readonly signal: AbortSignal;
}

/**
 * Sends `request` with its signed token and reads the answer. A JSON body without a
 * `content-type` header is sent as `application/json`, any other body as `text/plain`.
 * A redirect is not followed: following it would send the token and the write to wherever the
 * service behind the gate points, past the gate. At most {@link MAX_BODY_CHARS} of the body are
 * read; the rest is left unread (the connection is cancelled), so an endless or huge answer
 * costs bounded memory.
 *
 * @throws when no answer came (connection refused, timeout: `signal`'s reason).
 */
export async function sendFencedRequest(request: FencedRequest): Promise<FencedAnswer> {
  const headers = new Headers(request.headers);
  headers.set(LEASE_FENCE_TOKEN_HEADER, request.signedToken);
  if (request.body !== undefined && !headers.has('content-type'))
    headers.set('content-type', isJson(request.body) ? 'application/json' : 'text/plain; charset=utf-8');
  const response = await fetch(request.url, {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: request.signal,
    redirect: 'manual',
  });
  const { text, truncated } = await readText(response, MAX_BODY_CHARS);
  const contentType = response.headers.get('content-type') ?? undefined;
  if (contentType?.includes('application/json') === true && response.status >= 400) {
    const parsed = parseJson(text);
    const refusal = GateFenceRefusalSchema.safeParse(parsed);
    if (response.status === 409 && refusal.success)
      return { kind: 'fence-refused', status: response.status, ...refusal.data };
    const own = GateOwnAnswerSchema.safeParse(parsed);
    if (own.success) return { kind: 'gate-refused', status: response.status, ...own.data };
  }
  const location = response.headers.get('location');
  return {
    kind: 'upstream',
    status: response.status,
    contentType,
    body: text,
    truncated,
    ...(location === null ? {} : { location: resolvedLocation(location, request.url) }),
  };
}

/** `location` as an absolute URL against `base` (as given when it does not parse). */
const resolvedLocation = (location: string, base: string): string => {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
};

/**
 * The first `maxChars` characters of `response`'s body (decoded as UTF-8), and whether there was
 * more; once `maxChars` are read the rest is not read: the body is cancelled.
 */
async function readText(response: Response, maxChars: number): Promise<{ text: string; truncated: boolean }> {
  if (response.body === null) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    text += done ? decoder.decode() : decoder.decode(value, { stream: true });
    if (text.length > maxChars) {
      await reader.cancel().catch(() => undefined);
      return { text: text.slice(0, maxChars), truncated: true };
    }
    if (done) return { text, truncated: false };
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

const isJson = (text: string): boolean => parseJson(text) !== undefined;
