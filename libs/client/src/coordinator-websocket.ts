/**
 * The SDK's agent link transport: one WebSocket per client to the coordinator's `/v1/agent`
 * (subprotocol `lease-fence.agent.v1`, frames in `@lease-fence/protocol`'s `agent-link.ts`),
 * carrying many operations at once, each tagged with a frame id; replies come in any order.
 * Each reply carries the status and body the HTTP route would have answered, so replies are
 * parsed with the same schemas as over HTTP, and retried by the same loop
 * ({@link sendWithRetries}): a dropped connection, a per-attempt timeout or a 503 is retried with
 * backoff and jitter on a new connection, resending the same body (same requestId), so the
 * coordinator applies each operation at most once and the caller sees one outcome.
 *
 * The connection opens on the first operation and reopens on the next one after a drop;
 * {@link CoordinatorWebSocket.close} closes it (an open WebSocket keeps the process alive).
 * A silent connection counts as dropped (`link-keepalive.ts`, the gate link's rule): one whose peer
 * answered nothing to a ping by the next one, sent every `pingIntervalMillis` while it is open, and
 * one on which an operation timed out with nothing heard since it was sent. A coordinator frozen or
 * cut off by a partition keeps the socket open without a word; without this, every retry would time
 * out on that socket and never reach the standby that took over.
 * A refused upgrade (401, 403, 503 …) is answered like the HTTP reply it is.
 */
import type { Duplex } from 'node:stream';
import { AGENT_LINK_PATH, AGENT_LINK_SUBPROTOCOL, type AgentOp, AgentReplyFrameSchema } from '@lease-fence/protocol';
import WebSocket from 'ws';
import {
  type CoordinatorHttpOptions,
  type ParsedReply,
  type ReplySchemas,
  type Retrying,
  checkConnectionOptions,
  sendWithRetries,
} from './coordinator-http.js';
import {
  checkPingIntervalMillis,
  closeLink,
  keepLinkAlive,
  LINK_PING_MILLIS,
  type LinkKeepalive,
} from './link-keepalive.js';
import { createRetryPolicy } from './retry-policy.js';
import { systemTimers } from './timers.js';

/** The default {@link CoordinatorWebSocketOptions.pingIntervalMillis} (5 000): a silent coordinator is dropped within 10 s. */
export const AGENT_LINK_PING_MILLIS = LINK_PING_MILLIS;

/** Options of {@link CoordinatorWebSocket}: the connection settings of HTTP and the link's keepalive. */
export interface CoordinatorWebSocketOptions extends CoordinatorHttpOptions {
  /**
   * How often the agent link pings the coordinator while it is open, in milliseconds, integer in
   * [1, 2^31 - 1]. A link whose peer answered nothing (no pong, ping or reply) since the previous
   * ping is dropped, and so is one on which an operation timed out with nothing heard since it was
   * sent; the operations in flight on it are resent with the same requestId on a new connection.
   * A coordinator frozen or cut off by the network keeps the socket open without a word: without
   * this, an agent never reaches the standby that took over. The pings keep no process alive.
   * @defaultValue {@link AGENT_LINK_PING_MILLIS}
   */
  readonly pingIntervalMillis?: number;
}

/**
 * The agent link dropped (or could not open) while an operation was in flight: a transport
 * failure, retried like a lost HTTP reply. `code` marks it as a network error for the retry loop.
 */
export class AgentLinkDroppedError extends Error {
  /** A network-error code, so the SDK's retry loop treats it like a reset connection. */
  readonly code = 'ELINKDROPPED';
  constructor(message: string) {
    super(message);
    this.name = 'AgentLinkDroppedError';
  }
}

/** A status and a parsed body: a reply frame, or the HTTP reply to a refused upgrade. */
interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** One open connection and the attempts waiting on it. */
interface Connection {
  readonly socket: WebSocket;
  readonly pending: Map<number, { resolve: (answer: Answer) => void; reject: (error: unknown) => void }>;
  /** The TCP socket `socket` writes to (the upgrade response's), once upgraded. */
  tcp: Duplex | undefined;
  /** Whether this turn's request frames are being held on `tcp`, to be written in one go when the turn ends. */
  corked: boolean;
  /** Drops the connection when its peer goes silent; set once open. */
  keepalive: LinkKeepalive | undefined;
}

/**
 * Holds the request frames of this turn on the connection's TCP socket (Node's `Writable.cork`;
 * `ws` has no public cork and corks around each frame itself, which nests) and writes them in one
 * system call when the turn ends (`process.nextTick`), instead of one per request: operations
 * started together (`Promise.all`, many holders on one client) go out together. No frame waits
 * past the turn it was sent in.
 */
function corkUntilTurnEnd(connection: Connection): void {
  const { tcp } = connection;
  if (connection.corked || tcp === undefined) return;
  connection.corked = true;
  tcp.cork();
  process.nextTick(() => {
    connection.corked = false;
    tcp.uncork();
  });
}

/** Sends lease operations over one agent link; see the module description. */
export class CoordinatorWebSocket {
  readonly #baseUrl: string;
  readonly #url: URL;
  readonly #authorization: string;
  readonly #timeoutMillis: number;
  readonly #pingIntervalMillis: number;
  readonly #retrying: Retrying;
  #connection: Connection | undefined;
  #opening: Promise<Connection | Answer> | undefined;
  #nextId = 1;
  #closed = false;

  /**
   * @param api - Name of the owning API, used in argument errors.
   * @throws TypeError when `baseUrl` is not an http(s) URL or `token` is empty.
   * @throws RangeError when `timeoutMillis`, `pingIntervalMillis` or a `retry` field is out of range (the message names it).
   */
  constructor(api: string, options: CoordinatorWebSocketOptions) {
    const { url: base, timeoutMillis } = checkConnectionOptions(api, options);
    this.#baseUrl = base.href.replace(/\/+$/, '');
    this.#url = new URL(AGENT_LINK_PATH.replace(/^\//, ''), `${this.#baseUrl}/`);
    this.#url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    this.#authorization = `Bearer ${options.token}`;
    this.#timeoutMillis = timeoutMillis;
    this.#pingIntervalMillis = checkPingIntervalMillis(api, options.pingIntervalMillis);
    this.#retrying = {
      policy: createRetryPolicy(api, options.retry),
      timers: options.timers ?? systemTimers,
      onRetry: options.onRetry,
    };
  }

  /** The base URL (http form), without a trailing slash. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /**
   * Sends one operation and parses its reply with the schema registered for its status, retrying
   * transient failures with the same `body`.
   * @param operation - Names the request in errors and retry events (e.g. `acquire deploy-slot-a`).
   * @param op - The operation (the HTTP route `POST /v1/leases/:resource/<op>`).
   * @param resource - The lease's resource (the route's `:resource`, not encoded).
   * @param body - The route's body.
   * @param replies - Expected statuses and their schemas.
   * @param signal - Aborts the attempt and the backoff; the promise rejects with `signal.reason`.
   * @throws what `CoordinatorHttp.post` throws, for the same reasons; Error once closed.
   */
  request<T>(
    operation: string,
    op: AgentOp,
    resource: string,
    body: unknown,
    replies: ReplySchemas<T>,
    signal?: AbortSignal,
  ): Promise<ParsedReply<T>> {
    return sendWithRetries(this.#retrying, operation, () => this.#attempt(op, resource, body, signal), replies, signal);
  }

  /**
   * Closes the connection and stops reconnecting; operations in flight reject. Idempotent. A
   * coordinator that has not completed the close handshake within `pingIntervalMillis` (frozen,
   * partitioned away) is cut off then, so this never waits longer than that for it.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const connection = this.#connection ?? (await this.#opening?.catch(() => undefined));
    this.#connection = undefined;
    if (connection === undefined || !('socket' in connection)) return;
    const { socket } = connection;
    connection.keepalive?.stop();
    await closeLink(socket, 1000, 'client closing', this.#pingIntervalMillis);
  }

  async #attempt(op: AgentOp, resource: string, body: unknown, signal: AbortSignal | undefined): Promise<Answer> {
    const connection = await this.#connect();
    if (!('socket' in connection)) return connection; // the upgrade was answered with an HTTP status
    signal?.throwIfAborted();
    const id = this.#nextId++;
    const { socket, pending, keepalive } = connection;
    if (socket.readyState !== WebSocket.OPEN)
      throw new AgentLinkDroppedError('the agent link closed before the request was sent');
    const heardBeforeSend = keepalive?.mark();
    return new Promise<Answer>((resolve, reject) => {
      const settle = (): void => {
        pending.delete(id);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        settle();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        settle();
        // nothing heard since the send: the connection is silent, so the retry opens a new one
        if (heardBeforeSend !== undefined) keepalive?.dropIfSilentSince(heardBeforeSend);
        reject(new DOMException(`no reply within ${this.#timeoutMillis} ms`, 'TimeoutError'));
      }, this.#timeoutMillis);
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (answer) => {
          settle();
          resolve(answer);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      corkUntilTurnEnd(connection);
      socket.send(JSON.stringify({ id, op, resource, body }));
    });
  }

  /** The open connection, opening one if there is none. */
  #connect(): Promise<Connection | Answer> {
    if (this.#closed) return Promise.reject(new Error('the agent link is closed (close() was called)'));
    const current = this.#connection;
    if (current !== undefined && current.socket.readyState === WebSocket.OPEN) return Promise.resolve(current);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  #open(): Promise<Connection | Answer> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.#url, AGENT_LINK_SUBPROTOCOL, {
        headers: { authorization: this.#authorization },
        perMessageDeflate: false,
        handshakeTimeout: this.#timeoutMillis,
      });
      const connection: Connection = {
        socket,
        pending: new Map(),
        tcp: undefined,
        corked: false,
        keepalive: undefined,
      };
      socket.once('upgrade', (response) => {
        connection.tcp = response.socket;
      });
      let opened = false;
      socket.once('open', () => {
        opened = true;
        if (this.#closed) {
          socket.close(1000, 'client closing');
          reject(new Error('the agent link is closed (close() was called)'));
          return;
        }
        connection.keepalive = keepLinkAlive(socket, { pingIntervalMillis: this.#pingIntervalMillis });
        this.#connection = connection;
        resolve(connection);
      });
      socket.once('unexpected-response', (_request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, body: parseJson(text) ?? text });
          socket.terminate();
        });
        response.on('error', reject);
      });
      socket.on('error', (error) => {
        if (!opened) reject(error);
      });
      socket.on('message', (data, isBinary) => {
        if (isBinary) return;
        const parsed = AgentReplyFrameSchema.safeParse(parseJson(data.toString()));
        if (!parsed.success || parsed.data.id === null) return; // a frame we did not send (a bug of ours, logged by the coordinator)
        connection.pending.get(parsed.data.id)?.resolve(parsed.data);
      });
      socket.once('close', (code, reason) => {
        if (this.#connection === connection) this.#connection = undefined;
        const error = new AgentLinkDroppedError(
          `the agent link closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}) before the reply`,
        );
        for (const waiter of [...connection.pending.values()]) waiter.reject(error);
        if (!opened) reject(error);
      });
    });
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};
