/**
 * TEST DOUBLE of the coordinator's HTTP API, for SDK tests before (and besides) the real
 * service. It is not the coordinator: nothing is durable and there is no event log. It
 * implements the real lease rules by calling the library's in-memory {@link LeaseCoordinator},
 * parses bodies with the protocol's schemas, authenticates with the tokens-file format, and maps
 * outcomes to the statuses of the real API (200 / 409 / 410, 202 for rejections, 400 / 401 / 403).
 *
 * Faults are injected, not mocked away: a reply can be dropped after the command was processed
 * (the socket is destroyed: the client sees a lost reply), delayed after processing, or replaced
 * by a 503 before processing.
 *
 * The agent link (`/v1/agent`, the WebSocket of the SDK's `transport: 'websocket'`) is served
 * too: each request frame is handled exactly as its HTTP route (same faults, same records), and
 * answered `{ id, status, body }`; a `'drop-reply'` fault drops the whole connection, with every
 * operation in flight on it.
 *
 * Grants are signed as the real coordinator signs them (`grant.signedToken`, a compact EdDSA JWS
 * with the protocol's header and payload), with a key generated when the double opens; its public
 * key is served at `GET /v1/keys` and on {@link CoordinatorTestDouble.keys}. A gate token may read
 * `GET /v1/resources/:resource/gate-recovery` (the highest fence the double granted on the resource,
 * its holder while current, the gate's highest recorded refusal seq), which a sidecar asks at its start.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  AGENT_LINK_PATH,
  AGENT_LINK_SUBPROTOCOL,
  AcquireBodySchema,
  AdmitBodySchema,
  RejectionBatchBodySchema,
  RejectionBodySchema,
  ReleaseBodySchema,
  RenewBodySchema,
  resourceMatches,
  type KeysReply,
  type RejectionBody,
  type SignedGrantPayload,
} from '@lease-fence/protocol';
import { LeaseCoordinator, createMonotonicClock, type Clock, type Grant } from 'lease-fence';
import { WebSocketServer } from 'ws';
import { createTestSigningKey } from './test-signing-key.js';

/** One entry of a tokens file (`LEASE_FENCE_TOKENS_FILE`), as the real coordinator reads it. */
export type TokenEntry =
  | { readonly token: string; readonly role: 'agent'; readonly holderId: string }
  | { readonly token: string; readonly role: 'gate'; readonly resources: readonly string[]; readonly gateId: string }
  | { readonly token: string; readonly role: 'viewer' };

/** The routes faults can target (`rejections-batch`: `POST /v1/resources/:resource/rejections/batch`). */
export type DoubleRoute = 'acquire' | 'renew' | 'release' | 'rejections' | 'rejections-batch' | 'admit';

/**
 * A fault for the next matching request(s):
 * - `'drop-reply'` — process the command, then destroy the socket without replying (a lost reply);
 * - `'delay-reply'` — process, then reply after `delayMillis` or once `until` settles;
 * - `'unavailable'` — answer 503 `{ error, message, retryable: true, reason: 'recovering' }` without processing, as a recovering coordinator does.
 */
export interface InjectedFault {
  readonly route: DoubleRoute;
  readonly kind: 'drop-reply' | 'delay-reply' | 'unavailable';
  /** How many matching requests it applies to. Integer ≥ 1. @defaultValue 1 */
  readonly times?: number;
  /** For `'delay-reply'`: milliseconds to hold the reply. */
  readonly delayMillis?: number;
  /** For `'delay-reply'`: hold the reply until this settles. */
  readonly until?: Promise<unknown>;
}

/** A request the double received, after it was handled (an `'unavailable'` one with status 503, not processed). */
export interface HandledRequest {
  /** Which endpoint. */
  readonly route: DoubleRoute;
  /** The resource in the path, decoded. */
  readonly resource: string;
  /** The JSON body as received. */
  readonly body: unknown;
  /** The status decided (also when the reply was then dropped or delayed). */
  readonly status: number;
  /** The reply body decided. */
  readonly reply: unknown;
  /** The fault applied to it, if any. */
  readonly fault: InjectedFault['kind'] | undefined;
}

/** Options of {@link openCoordinatorTestDouble}. */
export interface CoordinatorTestDoubleOptions {
  /** Accepted tokens, in the tokens-file format. */
  readonly tokens: readonly TokenEntry[];
  /** Default lease duration in milliseconds. @defaultValue 3000 */
  readonly ttlMillis?: number;
  /** The coordinator's clock. @defaultValue a monotonic clock in a fresh domain */
  readonly clock?: Clock;
  /** The namespace written into signed grants. @defaultValue `'default'` */
  readonly namespace?: string;
  /**
   * Whether it serves `POST /v1/resources/:resource/rejections/batch`; `false` answers it 404, as a
   * coordinator older than that route does. @defaultValue true
   */
  readonly rejectionBatches?: boolean;
}

/** A running double: see {@link openCoordinatorTestDouble}. */
export interface CoordinatorTestDouble {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The in-memory coordinator deciding every command (inspect it, or call it directly). */
  readonly coordinator: LeaseCoordinator;
  /** Every request handled so far, in order. */
  readonly handled: readonly HandledRequest[];
  /** The public key grants are signed with, as `GET /v1/keys` serves it (a JWKS). */
  readonly keys: KeysReply;
  /** Rejections recorded (each (gate, resource, seq) once, singly or in a batch), in arrival order. */
  readonly rejections: readonly { readonly gateId: string; readonly body: RejectionBody }[];
  /** Queues a fault for the next matching request(s). */
  inject(fault: InjectedFault): void;
  /** Calls `listener` for every handled request, before its reply leaves (or is dropped). Returns an unsubscribe. */
  onHandled(listener: (request: HandledRequest) => void): () => void;
  /** Resolves with the first handled request (from now) that `predicate` accepts. */
  nextHandled(predicate: (request: HandledRequest) => boolean): Promise<HandledRequest>;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

const ROUTE = /^\/v1\/(leases|resources)\/([^/]+)\/(acquire|renew|release|rejections|rejections\/batch|admit)$/;
/** `GET /v1/resources/:resource/gate-recovery`: what a starting gate reconciles with. */
const GATE_RECOVERY_ROUTE = /^\/v1\/resources\/([^/]+)\/gate-recovery$/;

/**
 * Starts the double on 127.0.0.1, port 0.
 * @example
 * ```ts
 * const double = await openCoordinatorTestDouble({ tokens: [{ token: 't', role: 'agent', holderId: 'agent-1' }] });
 * double.inject({ route: 'acquire', kind: 'drop-reply' });
 * ```
 */
export const openCoordinatorTestDouble = async (
  options: CoordinatorTestDoubleOptions,
): Promise<CoordinatorTestDouble> => {
  const coordinator = new LeaseCoordinator({
    clock: options.clock ?? createMonotonicClock(`test-double:${randomUUID()}`),
    ttlMillis: options.ttlMillis ?? 3000,
  });
  const tokens = new Map(options.tokens.map((entry) => [entry.token, entry]));
  const faults: { fault: InjectedFault; remaining: number }[] = [];
  const handled: HandledRequest[] = [];
  const rejections: { gateId: string; body: RejectionBody }[] = [];
  const rejectionKeys = new Set<string>();
  const listeners = new Set<(request: HandledRequest) => void>();
  const signingKey = await createTestSigningKey();
  const keys: KeysReply = signingKey.jwks;
  const namespace = options.namespace ?? 'default';
  // One token per fence (Ed25519 is deterministic, so this is what signing again would give): a
  // retry or a renewal is answered without waiting on the crypto thread pool, as quickly as before.
  const signedTokens = new Map<string, Promise<string>>();
  /** resource → the highest fence the double granted on it (what `gate-recovery` answers). */
  const highestFences = new Map<string, number>();
  const toWire = async (grant: Grant) => {
    const payload: SignedGrantPayload = {
      resource: grant.resource,
      holderId: grant.holderId,
      fence: grant.fence,
      namespace,
    };
    const key = JSON.stringify(payload);
    let signedToken = signedTokens.get(key);
    if (signedToken === undefined) signedTokens.set(key, (signedToken = signingKey.sign(payload)));
    return { ...grant, coordinatorExpiresAt: grant.coordinatorExpiresAt.toJSON(), signedToken: await signedToken };
  };

  const takeFault = (route: DoubleRoute): InjectedFault | undefined => {
    const index = faults.findIndex((entry) => entry.fault.route === route);
    if (index < 0) return undefined;
    const entry = faults[index] as { fault: InjectedFault; remaining: number };
    entry.remaining -= 1;
    if (entry.remaining <= 0) faults.splice(index, 1);
    return entry.fault;
  };

  const decide = async (
    route: DoubleRoute,
    resource: string,
    principal: TokenEntry,
    body: unknown,
  ): Promise<{ status: number; reply: unknown }> => {
    const invalid = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) => ({
      status: 400,
      reply: {
        error: 'invalid-request',
        message: 'invalid request body',
        issues: issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      },
    });
    const forbidden = {
      status: 403,
      reply: { error: 'forbidden', message: `a ${principal.role} token may not ${route}` },
    };
    if (route === 'rejections' || route === 'rejections-batch' || route === 'admit') {
      if (principal.role !== 'gate') return forbidden;
      if (!principal.resources.some((pattern) => resourceMatches(pattern, resource))) {
        return {
          status: 403,
          reply: { error: 'forbidden', message: `gate ${principal.gateId} may not report for ${resource}` },
        };
      }
      if (route === 'admit') {
        const parsed = AdmitBodySchema.safeParse(body);
        return parsed.success ? { status: 202, reply: { ok: true } } : invalid(parsed.error.issues);
      }
      const record = (gateId: string, rejection: RejectionBody): { ok: true; duplicate: boolean } => {
        const key = JSON.stringify([gateId, resource, rejection.seq]);
        const duplicate = rejectionKeys.has(key);
        if (!duplicate) {
          rejectionKeys.add(key);
          rejections.push({ gateId, body: rejection });
        }
        return { ok: true, duplicate };
      };
      if (route === 'rejections-batch') {
        const batch = RejectionBatchBodySchema.safeParse(body);
        if (!batch.success) return invalid(batch.error.issues);
        const gateId = principal.gateId;
        return {
          status: 202,
          reply: { ok: true, items: batch.data.items.map((item) => record(gateId, { ...item, resource })) },
        };
      }
      const parsed = RejectionBodySchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      if (parsed.data.resource !== resource)
        return invalid([{ path: ['resource'], message: 'must match the resource in the path' }]);
      return { status: 202, reply: record(principal.gateId, parsed.data) };
    }
    if (principal.role !== 'agent') return forbidden;
    const holderId = principal.holderId;
    try {
      if (route === 'acquire') {
        const parsed = AcquireBodySchema.safeParse(body);
        if (!parsed.success) return invalid(parsed.error.issues);
        const outcome = coordinator.acquire({
          resource,
          holderId,
          requestId: parsed.data.requestId,
          ttlMillis: parsed.data.ttlMillis,
        });
        if (!outcome.ok) return { status: outcome.reason === 'expired' ? 410 : 409, reply: outcome };
        // Only a grant raises a resource's fence (a renewal keeps it).
        highestFences.set(resource, Math.max(highestFences.get(resource) ?? 0, outcome.grant.fence));
        return { status: 200, reply: { ok: true, grant: await toWire(outcome.grant) } };
      }
      if (route === 'renew') {
        const parsed = RenewBodySchema.safeParse(body);
        if (!parsed.success) return invalid(parsed.error.issues);
        const outcome = coordinator.renew({
          resource,
          holderId,
          fence: parsed.data.fence,
          requestId: parsed.data.requestId,
          ttlMillis: parsed.data.ttlMillis,
        });
        if (outcome.ok) return { status: 200, reply: { ok: true, grant: await toWire(outcome.grant) } };
        return { status: outcome.reason === 'expired' ? 410 : 409, reply: outcome };
      }
      const parsed = ReleaseBodySchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      const outcome = coordinator.release({ resource, holderId, fence: parsed.data.fence });
      return { status: outcome.ok ? 200 : outcome.reason === 'expired' ? 410 : 409, reply: outcome };
    } catch (error) {
      if (error instanceof RangeError || error instanceof TypeError) {
        return { status: 400, reply: { error: 'invalid-request', message: error.message, issues: [] } };
      }
      throw error;
    }
  };

  /** One request of either transport: its fault, its outcome, and its record (listeners called). */
  const serve = async (
    route: DoubleRoute,
    resource: string,
    principal: TokenEntry,
    body: unknown,
  ): Promise<{ status: number; reply: unknown; fault: InjectedFault | undefined }> => {
    const fault = takeFault(route);
    const { status, reply } =
      fault?.kind === 'unavailable'
        ? {
            status: 503,
            reply: {
              error: 'coordinator-unavailable',
              message: 'injected fault: unavailable',
              retryable: true,
              reason: 'recovering',
            },
          }
        : await decide(route, resource, principal, body);
    const record: HandledRequest = { route, resource, body, status, reply, fault: fault?.kind };
    handled.push(record);
    for (const listener of [...listeners]) listener(record);
    return { status, reply, fault };
  };

  /** Holds a reply as a `'delay-reply'` fault says. */
  const delay = async (fault: InjectedFault): Promise<void> => {
    if (fault.until !== undefined) await fault.until.catch(() => undefined);
    if (fault.delayMillis !== undefined) await new Promise((resolve) => setTimeout(resolve, fault.delayMillis));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const send = (status: number, reply: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    };
    const path = new URL(request.url ?? '/', 'http://double').pathname;
    if (request.method === 'GET' && path === '/readyz') return send(200, { status: 'ready' });
    if (request.method === 'GET' && path === '/v1/keys') return send(200, keys);
    const recovery = GATE_RECOVERY_ROUTE.exec(path);
    if (request.method === 'GET' && recovery !== null) {
      const resource = decodeURIComponent(recovery[1] as string);
      const authorization = request.headers.authorization ?? '';
      const gate = authorization.startsWith('Bearer ') ? tokens.get(authorization.slice('Bearer '.length)) : undefined;
      if (gate === undefined) return send(401, { error: 'unauthorized', message: 'missing or unknown bearer token' });
      if (gate.role !== 'gate' || !gate.resources.some((pattern) => resourceMatches(pattern, resource)))
        return send(403, { error: 'forbidden', message: `this token may not read the gate recovery of ${resource}` });
      const fence = highestFences.get(resource);
      const current = coordinator.holder(resource);
      const seqs = rejections
        .filter((entry) => entry.gateId === gate.gateId && entry.body.resource === resource)
        .map((entry) => entry.body.seq);
      return send(200, {
        ok: true,
        resource,
        latestGrant:
          fence === undefined ? null : { holderId: current?.fence === fence ? current.holderId : null, fence },
        lastRejectionSeq: Math.max(0, ...seqs),
      });
    }
    const match = ROUTE.exec(path);
    const route = (match?.[3] === 'rejections/batch' ? 'rejections-batch' : match?.[3]) as DoubleRoute | undefined;
    if (
      request.method !== 'POST' ||
      match === null ||
      route === undefined ||
      (route === 'rejections-batch' && options.rejectionBatches === false) ||
      (match[1] === 'leases') !== ['acquire', 'renew', 'release'].includes(route)
    ) {
      return send(404, { error: 'not-found', message: `no route ${request.method ?? ''} ${path}` });
    }
    const resource = decodeURIComponent(match[2] as string);
    const authorization = request.headers.authorization ?? '';
    const principal = authorization.startsWith('Bearer ')
      ? tokens.get(authorization.slice('Bearer '.length))
      : undefined;
    const text = await readBody(request);
    if (principal === undefined)
      return send(401, { error: 'unauthorized', message: 'missing or unknown bearer token' });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send(400, { error: 'invalid-request', message: 'body is not JSON', issues: [] });
    }
    const { status, reply, fault } = await serve(route, resource, principal, body);
    if (fault?.kind === 'drop-reply') {
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'delay-reply') {
      await delay(fault);
      if (request.socket.destroyed) return;
    }
    send(status, reply);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'internal', message: String(error) }));
    });
  });
  const links = new WebSocketServer({ noServer: true, handleProtocols: () => AGENT_LINK_SUBPROTOCOL });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const authorization = request.headers.authorization ?? '';
    const principal = authorization.startsWith('Bearer ')
      ? tokens.get(authorization.slice('Bearer '.length))
      : undefined;
    if (new URL(request.url ?? '/', 'http://double').pathname !== AGENT_LINK_PATH || principal === undefined) {
      const status = principal === undefined ? '401 Unauthorized' : '404 Not Found';
      const text = JSON.stringify({ error: status.slice(4).toLowerCase(), message: `upgrade refused: ${status}` });
      socket.end(
        `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
      );
      return;
    }
    links.handleUpgrade(request, socket, head, (link) => {
      link.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { id: number; op: DoubleRoute; resource: string; body: unknown };
        void (async () => {
          const { status, reply, fault } = await serve(frame.op, frame.resource, principal, frame.body);
          if (fault?.kind === 'drop-reply') return link.terminate();
          if (fault?.kind === 'delay-reply') await delay(fault);
          if (link.readyState === link.OPEN) link.send(JSON.stringify({ id: frame.id, status, body: reply }));
        })();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    coordinator,
    handled,
    keys,
    rejections,
    inject(fault) {
      const times = fault.times ?? 1;
      if (!Number.isSafeInteger(times) || times < 1)
        throw new RangeError(`CoordinatorTestDouble.inject: times must be an integer ≥ 1, got ${String(times)}`);
      faults.push({ fault, remaining: times });
    },
    onHandled(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    nextHandled(predicate) {
      return new Promise((resolve) => {
        const listener = (request: HandledRequest): void => {
          if (!predicate(request)) return;
          listeners.delete(listener);
          resolve(request);
        };
        listeners.add(listener);
      });
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        for (const link of links.clients) link.terminate();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      });
    },
  };
};

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
