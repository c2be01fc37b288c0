/**
 * A small fetch wrapper for black-box tests of the coordinator's HTTP API.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';

/** A reply: status, parsed JSON body (or text when it is not JSON), headers. */
export interface HttpReply<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
  readonly headers: Headers;
}

/** Options of one call. */
export interface CallOptions {
  /** Bearer token; omitted = no Authorization header. */
  readonly token?: string;
  /** JSON body (serialised), or a raw string sent as is. */
  readonly json?: unknown;
  readonly raw?: string;
  /** Content-Type for `raw` bodies. @defaultValue 'application/json' */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Calls `baseUrl + path` and returns the reply (never throws on an HTTP status). */
export async function call<T = unknown>(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<HttpReply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  } else if (options.raw !== undefined) {
    body = options.raw;
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, text, headers: response.headers };
}

/** A client bound to one coordinator URL and (optionally) one token. */
export interface CoordinatorHttp {
  get<T = unknown>(path: string, options?: CallOptions): Promise<HttpReply<T>>;
  post<T = unknown>(path: string, json?: unknown, options?: CallOptions): Promise<HttpReply<T>>;
  /** `GET /v1/events` head position (the log's version), read with `token`. */
  head(): Promise<number>;
}

/** Binds {@link call} to `baseUrl` with a default `token`. */
export function coordinatorHttp(baseUrl: string, token?: string): CoordinatorHttp {
  const withToken = (options: CallOptions = {}): CallOptions => ({
    ...(token === undefined ? {} : { token }),
    ...options,
  });
  return {
    get: (path, options) => call(baseUrl, 'GET', path, withToken(options)),
    post: (path, json, options) =>
      call(baseUrl, 'POST', path, withToken({ ...(json === undefined ? {} : { json }), ...options })),
    async head() {
      const reply = await call<{ head: number }>(baseUrl, 'GET', '/v1/events?limit=1', withToken());
      if (reply.status !== 200) throw new Error(`GET /v1/events answered ${reply.status}: ${reply.text}`);
      return reply.body.head;
    },
  };
}

/** The parts of a grant a gate test writes with. */
export interface TestGrant {
  readonly fence: number;
  readonly signedToken: string;
}

/**
 * Acquires `resource` (TTL 60 000 ms) as the agent whose bearer token is `token`.
 * @param requestId - The acquire's requestId (the same one again is the same acquire); a fresh one by default.
 * @throws Error naming the resource and the reply unless the lease was granted (200).
 */
export async function acquireGrant(
  baseUrl: string,
  token: string,
  resource: string,
  requestId = `${resource}-${randomUUID()}`,
): Promise<TestGrant> {
  const reply = await call<{ grant?: TestGrant }>(
    baseUrl,
    'POST',
    `/v1/leases/${encodeURIComponent(resource)}/acquire`,
    { token, json: { requestId, ttlMillis: 60_000 } },
  );
  if (reply.status !== 200 || reply.body.grant === undefined)
    throw new Error(`acquire of ${resource} answered ${reply.status}: ${reply.text}`);
  return reply.body.grant;
}

/** A loopback URL whose port nothing listens on (taken, then freed): a coordinator that is down. */
export async function deadLoopbackUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
