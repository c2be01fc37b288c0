/**
 * The resource side of fence-first handover: a gate process holds a WebSocket to the
 * coordinator (`/v1/gates/link`, gate token) and, when asked "admit fence f for holder h on
 * resource r", raises that resource's {@link FenceGate} floor, saves it durably in its
 * {@link FloorStore}, and only then answers `admitted`. The coordinator grants the lease only
 * after that answer, so right after an acquire returns, every older token is refused at the
 * gate, even if the new holder never wrote. Reconnects with backoff when the link drops.
 *
 * @see docs/sdk.md § "Fence-first handover"
 */
import {
  type AdmitFrame,
  CoordinatorToGateFrameSchema,
  GATE_LINK_PATH,
  type GateStatusBody,
  type GateToCoordinatorFrame,
} from '@lease-fence/protocol';
import type { FenceGate, FenceToken } from 'lease-fence';
import WebSocket from 'ws';
import { parseBaseUrl } from './coordinator-http.js';
import { gateStateOf, type FloorStore } from './floor-store.js';
import { backoffDelayMillis, createRetryPolicy, type RetryOptions } from './retry-policy.js';
import { checkPingIntervalMillis, closeLink, keepLinkAlive, LINK_PING_MILLIS } from './link-keepalive.js';
import { systemTimers, type Timers } from './timers.js';

/** One resource the link guards: its gate and where that gate's floor is saved. */
export type GuardedResource = GuardedFenceGate | DurableAdmitter;

/** A `FenceGate` whose floor the link raises, then saves in its `FloorStore`, before it answers. */
export interface GuardedFenceGate {
  readonly gate: FenceGate;
  readonly store: FloorStore;
}

/**
 * A resource whose durable floor lives elsewhere (a SQL gate's row: `sqlGateGuard` of
 * `@lease-fence/gate-sql`): the link calls `admit` and answers `admitted` once it resolves.
 */
export interface DurableAdmitter {
  /** The resource guarded. */
  readonly resource: string;
  /**
   * Raises the resource's floor to `token` by the `FenceGate` rule and resolves once that floor
   * is durable; rejects, changing nothing, when the rule refuses the token (or the save fails).
   */
  admit(token: FenceToken): Promise<void>;
}

/** What the link reports to {@link GateLinkOptions.onEvent}. */
export type GateLinkEvent =
  /** Connected; the coordinator routes admits of `resources` to this link. */
  | { readonly type: 'guarding'; readonly resources: readonly string[] }
  /** The floor of `resource` is durable at `fence` and the coordinator was told. */
  | { readonly type: 'admitted'; readonly resource: string; readonly holderId: string; readonly fence: number }
  /** An admit this process could not honour (the gate refused the fence, or the save failed): not answered, so the coordinator burns the fence. */
  | { readonly type: 'admit-failed'; readonly resource: string; readonly fence: number; readonly error: unknown }
  /** The coordinator refused a frame of ours (`field` names what); nothing changed there. */
  | { readonly type: 'refused'; readonly field: string; readonly message: string }
  /** The link dropped or could not open; the next attempt is in `retryInMillis`. */
  | { readonly type: 'disconnected'; readonly error?: unknown; readonly retryInMillis: number };

/** Why the link did not admit `token`: `gate`'s floor is at or above it (stale, or its fence for another holder). */
const notAdmitted = (token: FenceToken, gate: FenceGate): Error =>
  new Error(
    `fence ${token.fence} of ${JSON.stringify(token.holderId)} is not above the floor of ${JSON.stringify(token.resource)} (fence ${gate.floor?.fence ?? 0}${gate.floor === undefined ? '' : ` of ${JSON.stringify(gate.floor.holderId)}`}): not admitted, nothing recorded`,
  );

/** Options of {@link openGateLink}. */
export interface GateLinkOptions {
  /** The coordinator's base URL, e.g. `http://127.0.0.1:3000`; the link uses `ws:` / `wss:` on it. */
  readonly baseUrl: string | URL;
  /** A gate token whose patterns cover every guarded resource. */
  readonly token: string;
  /** The resources this process guards (one gate each, distinct resources). */
  readonly guards: readonly GuardedResource[];
  /**
   * Backoff between reconnects (`maxAttempts` is ignored: the link retries for as long as it is open).
   * @defaultValue initialDelayMillis 100, maxDelayMillis 2000
   */
  readonly reconnect?: Omit<RetryOptions, 'maxAttempts'>;
  /** Observer of connections, admits and refusals; a throwing observer is ignored. */
  readonly onEvent?: (event: GateLinkEvent) => void;
  /**
   * Timers for the reconnect backoff and the keepalive.
   * @defaultValue the real timers (the keepalive's unref'd, so they keep no process alive)
   */
  readonly timers?: Timers;
  /**
   * How often the link pings the coordinator, in milliseconds, integer in [1, 2^31 - 1]; a link whose
   * peer answered nothing (no pong, ping or frame) since the previous ping is dropped and reconnected,
   * and so is one whose opening handshake takes longer. A coordinator frozen or cut off by the network
   * keeps the socket open without a word: without this, the gate never relinks to the coordinator that
   * took over, and every fence-first acquire of its resources answers 503 `fence-unavailable`.
   * The agent link has the same keepalive (`LeaseFenceClientOptions.pingIntervalMillis`).
   * @defaultValue {@link GATE_LINK_PING_MILLIS}
   */
  readonly pingIntervalMillis?: number;
}

/** The default {@link GateLinkOptions.pingIntervalMillis} (5 000): a silent coordinator is dropped within 10 s. */
export const GATE_LINK_PING_MILLIS = LINK_PING_MILLIS;

/** An open gate link; see {@link openGateLink}. */
export interface GateLink {
  /** Whether the coordinator has acknowledged the `guard` of the current connection. */
  readonly guarding: boolean;
  /**
   * Sends the gate's status (floors, outbox backlog, counters) over the link, if it is open and
   * guarding. Observation only: the coordinator keeps the latest in memory (`GET /v1/gates`).
   * @returns whether it was sent; `false` when the link is not guarding (send it with
   *   `FenceGateClient.reportStatus` instead).
   */
  sendStatus(status: GateStatusBody): boolean;
  /** Resolves once the coordinator routes admits to this link (now, if it already does). */
  whenGuarding(): Promise<void>;
  /** Closes the link and stops reconnecting, within `pingIntervalMillis` even if the coordinator went silent. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens a gate link and keeps it open (reconnecting with backoff) until closed.
 * @throws TypeError when `baseUrl` is not an http(s) URL, `token` is empty, or `guards` is empty
 *   or names a resource twice; RangeError for a bad `reconnect` field.
 */
export function openGateLink(options: GateLinkOptions): GateLink {
  const api = 'openGateLink';
  const base = parseBaseUrl(api, options.baseUrl);
  if (typeof options.token !== 'string' || options.token === '')
    throw new TypeError(`${api}: token must be a non-empty gate token`);
  if (!Array.isArray(options.guards) || options.guards.length === 0)
    throw new TypeError(`${api}: guards must list at least one { gate, store } or { resource, admit }`);
  const guards = new Map<string, GuardedResource>();
  for (const [index, guard] of options.guards.entries()) {
    const resource =
      guard !== null && typeof guard === 'object' && 'admit' in guard ? guard.resource : guard?.gate?.resource;
    if (typeof resource !== 'string')
      throw new TypeError(
        `${api}: guards.${index} must be { gate: FenceGate, store: FloorStore } or { resource, admit(token) }`,
      );
    if (guards.has(resource))
      throw new TypeError(`${api}: guards.${index} guards ${JSON.stringify(resource)} a second time`);
    guards.set(resource, guard);
  }
  const pingIntervalMillis = checkPingIntervalMillis(api, options.pingIntervalMillis);
  const policy = createRetryPolicy(api, { ...options.reconnect, maxAttempts: 1 });
  const timers = options.timers ?? systemTimers;
  const url = new URL(GATE_LINK_PATH.replace(/^\//, ''), `${base.href.replace(/\/+$/, '')}/`);
  url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const report = (event: GateLinkEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // observers never change the link's behaviour
    }
  };

  let closed = false;
  let socket: WebSocket | undefined;
  let guarding = false;
  let waiters: (() => void)[] = [];
  const stopReconnect = new AbortController();
  let failures = 0;

  const send = (ws: WebSocket, frame: GateToCoordinatorFrame): void => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
  };

  /** Raise, save, then answer: the coordinator must never hear `admitted` before the floor is durable. */
  const admit = async (ws: WebSocket, frame: AdmitFrame): Promise<void> => {
    const guard = guards.get(frame.resource);
    if (guard === undefined) {
      report({
        type: 'admit-failed',
        resource: frame.resource,
        fence: frame.fence,
        error: new Error(`this process does not guard ${JSON.stringify(frame.resource)}`),
      });
      return;
    }
    const token: FenceToken = { resource: frame.resource, holderId: frame.holderId, fence: frame.fence };
    try {
      if ('admit' in guard) await guard.admit(token);
      else {
        // An admit is not a write: one the rule refuses records nothing (as a SQL gate's guard),
        // since `FenceGate.admit` would take a refusal seq that no outbox ever holds, and the
        // gate's next reported refusal would then tell the coordinator that refusals were lost.
        if (!guard.gate.wouldAdmit(token)) throw notAdmitted(token, guard.gate);
        guard.gate.admit(token);
        await guard.store.save(gateStateOf(guard.gate));
      }
    } catch (error) {
      report({ type: 'admit-failed', resource: frame.resource, fence: frame.fence, error });
      return;
    }
    send(ws, { type: 'admitted', id: frame.id, resource: frame.resource, fence: frame.fence });
    report({ type: 'admitted', resource: frame.resource, holderId: frame.holderId, fence: frame.fence });
  };

  const connect = (): void => {
    if (closed) return;
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${options.token}` },
      perMessageDeflate: false,
      handshakeTimeout: pingIntervalMillis,
    });
    socket = ws;
    let opened = false;
    ws.on('open', () => {
      opened = true;
      send(ws, { type: 'guard', resources: [...guards.keys()] });
      // a silent coordinator's link is terminated: 'close' follows and schedules the reconnect
      keepLinkAlive(ws, { pingIntervalMillis, timers: options.timers });
    });
    ws.on('message', (data) => {
      const parsed = CoordinatorToGateFrameSchema.safeParse(safeJson(data.toString()));
      if (!parsed.success) return; // a newer coordinator's frame this SDK does not know
      const frame = parsed.data;
      switch (frame.type) {
        case 'guarding':
          failures = 0;
          guarding = true;
          for (const wake of waiters.splice(0)) wake();
          report({ type: 'guarding', resources: frame.resources });
          return;
        case 'admit':
          void admit(ws, frame);
          return;
        case 'error':
          report({ type: 'refused', field: frame.field, message: frame.message });
          return;
      }
    });
    ws.on('error', () => undefined); // 'close' follows and schedules the reconnect
    ws.on('unexpected-response', (_request, response) => {
      response.resume();
      ws.emit('error', new Error(`gate link refused: HTTP ${response.statusCode}`));
    });
    ws.on('close', () => {
      guarding = false;
      if (socket === ws) socket = undefined;
      if (closed) return;
      failures = opened ? 1 : failures + 1;
      const retryInMillis = backoffDelayMillis(policy, failures);
      report({ type: 'disconnected', retryInMillis });
      timers.sleep(retryInMillis, stopReconnect.signal).then(connect, () => undefined);
    });
  };
  connect();

  return {
    get guarding() {
      return guarding;
    },
    sendStatus: (status) => {
      const ws = socket;
      if (!guarding || ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
      send(ws, { type: 'status', ...status });
      return true;
    },
    whenGuarding: () => (guarding ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    close: async () => {
      if (closed) return;
      closed = true;
      stopReconnect.abort();
      waiters = [];
      const ws = socket;
      socket = undefined;
      if (ws !== undefined) await closeLink(ws, 1000, 'gate closing', pingIntervalMillis);
    },
  };
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
