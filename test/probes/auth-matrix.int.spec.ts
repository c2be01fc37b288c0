/**
 * Probe: the auth matrix. Every endpoint, over HTTP and the WebSocket stream, is called by every
 * kind of caller: no token, a garbage token, agent A (who holds the lease under test), agent B, a
 * gate whose patterns cover the resource, a gate whose patterns do not, and a viewer. Each answer
 * must be the one the route table of docs/service.md gives that caller, a refused write must leave the log
 * head where it was, and agent B must never renew or release agent A's lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { openStream } from '../support/stream-client.js';
import { reportFigures, PROBE_START_TIMEOUT_MILLIS } from './support/probe-settings.js';
import { PROBE_AGENT_TOKENS, PROBE_TOKEN_ENTRIES, PROBE_TOKENS } from './support/probe-tokens.js';

type Caller = 'no token' | 'garbage' | 'agent A' | 'agent B' | 'gate in scope' | 'gate out of scope' | 'viewer';
const CALLERS: Readonly<Record<Caller, string | undefined>> = {
  'no token': undefined,
  garbage: 'garbage-token-that-was-never-issued',
  'agent A': PROBE_AGENT_TOKENS[0],
  'agent B': PROBE_AGENT_TOKENS[1],
  'gate in scope': PROBE_TOKENS.gateInScope,
  'gate out of scope': PROBE_TOKENS.gateOutOfScope,
  viewer: PROBE_TOKENS.viewer,
};
/** Callers in the order they call each endpoint: agent A last, so its renewal and release come after every refusal. */
const ORDER: readonly Caller[] = [
  'no token',
  'garbage',
  'gate out of scope',
  'viewer',
  'gate in scope',
  'agent B',
  'agent A',
];

/** The lease under test, held by agent A; gates in scope cover `deploy-*`. */
const RESOURCE = 'deploy-auth';

let app: RunningCoordinator;
let heldFence: number;
let earlierFence: number;

beforeAll(async () => {
  app = await startCoordinator({
    tokens: PROBE_TOKEN_ENTRIES,
    env: { LEASE_FENCE_TTL_MILLIS: '600000' },
    startTimeoutMillis: PROBE_START_TIMEOUT_MILLIS,
  });
  // Agent A held the resource once (earlierFence), released it, and holds it again (heldFence):
  // so a gate can truthfully report a stale write of the earlier generation.
  const agentA = CALLERS['agent A']!;
  const first = await call<{ grant: { fence: number } }>(app.url, 'POST', `/v1/leases/${RESOURCE}/acquire`, {
    token: agentA,
    json: { requestId: 'setup-1' },
  });
  earlierFence = first.body.grant.fence;
  await call(app.url, 'POST', `/v1/leases/${RESOURCE}/release`, { token: agentA, json: { fence: earlierFence } });
  const second = await call<{ grant: { fence: number } }>(app.url, 'POST', `/v1/leases/${RESOURCE}/acquire`, {
    token: agentA,
    json: { requestId: 'setup-2' },
  });
  heldFence = second.body.grant.fence;
}, PROBE_START_TIMEOUT_MILLIS + 10_000);

afterAll(async () => {
  await app?.cleanup();
});

/** What a caller must get from one endpoint: the allowed statuses. */
type Expect = (caller: Caller) => readonly number[];
const UNAUTHENTICATED: readonly Caller[] = ['no token', 'garbage'];
/** 401 without a valid token, 403 for a role that may not, else `allowed(caller)`. */
const rule =
  (roles: readonly Caller[], allowed: (caller: Caller) => readonly number[]): Expect =>
  (caller) =>
    UNAUTHENTICATED.includes(caller) ? [401] : roles.includes(caller) ? allowed(caller) : [403];
const EVERY_TOKEN: readonly Caller[] = ['agent A', 'agent B', 'gate in scope', 'gate out of scope', 'viewer'];

interface Endpoint {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: (caller: Caller, index: number) => unknown;
  readonly expect: Expect;
}

const ENDPOINTS = (): readonly Endpoint[] => [
  // held by A: A is told already-held, B held; never a second fence
  {
    method: 'POST',
    path: `/v1/leases/${RESOURCE}/acquire`,
    body: (_c, i) => ({ requestId: `matrix-acquire-${i}` }),
    expect: rule(['agent A', 'agent B'], () => [409]),
  },
  // B presenting A's fence is not the holder; A renews
  {
    method: 'POST',
    path: `/v1/leases/${RESOURCE}/renew`,
    body: (_c, i) => ({ requestId: `matrix-renew-${i}`, fence: heldFence }),
    expect: rule(['agent A', 'agent B'], (c) => (c === 'agent A' ? [200] : [409])),
  },
  {
    method: 'POST',
    path: `/v1/resources/${RESOURCE}/rejections`,
    body: (_c, i) => ({
      seq: i,
      resource: RESOURCE,
      kind: 'stale',
      rejected: { holderId: 'agent-0', fence: earlierFence },
      current: { holderId: 'agent-0', fence: heldFence },
    }),
    expect: rule(['gate in scope'], () => [202]),
  },
  {
    method: 'POST',
    path: `/v1/resources/${RESOURCE}/admit`,
    body: () => ({ holderId: 'agent-0', fence: heldFence }),
    expect: rule(['gate in scope'], () => [202]),
  },
  { method: 'GET', path: `/v1/resources/${RESOURCE}/gate-recovery`, expect: rule(['gate in scope'], () => [200]) },
  { method: 'GET', path: '/v1/leases', expect: rule(EVERY_TOKEN, () => [200]) },
  { method: 'GET', path: '/v1/events?after=0&limit=5', expect: rule(EVERY_TOKEN, () => [200]) },
  { method: 'GET', path: '/v1/rejections', expect: rule(EVERY_TOKEN, () => [200]) },
  { method: 'GET', path: '/metrics', expect: rule(EVERY_TOKEN, () => [200]) },
  { method: 'GET', path: '/healthz', expect: () => [200] },
  { method: 'GET', path: '/readyz', expect: () => [200] },
  { method: 'GET', path: '/docs', expect: () => [200] },
  { method: 'GET', path: '/docs/openapi.json', expect: () => [200] },
  // B releasing A's lease is refused; A's release goes last of all
  {
    method: 'POST',
    path: `/v1/leases/${RESOURCE}/release`,
    body: () => ({ fence: heldFence }),
    expect: rule(['agent A', 'agent B'], (c) => (c === 'agent A' ? [200] : [409])),
  },
];

describe('probe: auth matrix', () => {
  it('answers every endpoint × caller over HTTP as the route table says, and a refused write changes nothing', async () => {
    const violations: string[] = [];
    let cells = 0;
    const head = async (): Promise<number> =>
      (await call<{ head: number }>(app.url, 'GET', '/v1/events?limit=1', { token: PROBE_TOKENS.viewer })).body.head;
    /** Types of the events appended after `position`, but the uptime checkpoints the coordinator appends on its own while a lease is live. */
    const appendedSince = async (position: number): Promise<string[]> =>
      (
        await call<{ events: { event: { type: string } }[] }>(app.url, 'GET', `/v1/events?after=${position}`, {
          token: PROBE_TOKENS.viewer,
        })
      ).body.events
        .map((e) => e.event.type)
        .filter((type) => type !== 'CoordinatorCheckpointed');
    for (const endpoint of ENDPOINTS()) {
      for (const [index, caller] of ORDER.entries()) {
        const token = CALLERS[caller];
        const before = await head();
        const reply = await call(app.url, endpoint.method, endpoint.path, {
          ...(token === undefined ? {} : { token }),
          ...(endpoint.body === undefined ? {} : { json: endpoint.body(caller, index) }),
        });
        cells += 1;
        const allowed = endpoint.expect(caller);
        if (!allowed.includes(reply.status))
          violations.push(
            `${endpoint.method} ${endpoint.path} as ${caller}: ${reply.status} (allowed ${allowed.join('/')}) ${reply.text.slice(0, 160)}`,
          );
        if (endpoint.method === 'POST' && reply.status >= 400) {
          const appended = await appendedSince(before);
          if (appended.length > 0)
            violations.push(
              `${endpoint.method} ${endpoint.path} as ${caller}: refused with ${reply.status} but the log grew by ${appended.join(', ')}`,
            );
        }
      }
    }
    // Agent A's lease survived every other caller until A released it itself.
    const released = (
      await call<{ events: { event: { type: string; data: Record<string, unknown> } }[] }>(
        app.url,
        'GET',
        '/v1/events?after=0&limit=10000',
        { token: PROBE_TOKENS.viewer },
      )
    ).body.events.filter((e) => e.event.type === 'LeaseReleased' && e.event.data['fence'] === heldFence);
    expect(released.map((e) => e.event.data['holderId'])).toEqual(['agent-0']);
    reportFigures('auth-matrix-http', { cells, violations: violations.length });
    expect(violations).toEqual([]);
  });

  it('opens the stream for every token, by query parameter or Authorization header, and refuses no token or a garbage one with 401', async () => {
    const violations: string[] = [];
    let cells = 0;
    for (const caller of ORDER) {
      const token = CALLERS[caller];
      for (const how of ['query', 'header'] as const) {
        cells += 1;
        const options = token === undefined ? {} : how === 'query' ? { token } : { bearer: token };
        try {
          const stream = await openStream(app.wsUrl, options);
          await stream.waitFor((frame) => frame.type === 'caught-up');
          await stream.close();
          if (UNAUTHENTICATED.includes(caller)) violations.push(`stream as ${caller} by ${how}: opened`);
        } catch (error) {
          const status = (error as { status?: number }).status;
          if (!UNAUTHENTICATED.includes(caller) || status !== 401)
            violations.push(
              `stream as ${caller} by ${how}: ${String(status)} ${(error as Error).message.slice(0, 160)}`,
            );
        }
      }
    }
    reportFigures('auth-matrix-stream', { cells, violations: violations.length });
    expect(violations).toEqual([]);
  });
});
