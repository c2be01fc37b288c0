import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { TokenRegistry } from '../auth/token-registry.js';
import { decideReply } from '../http/api-exception.filter.js';
import { DeniedOutcome } from '../http/denied-outcome.js';
import { createLeaseFastPath } from './lease-fast-path.js';

const tokens = new TokenRegistry(new Map([
  ['agent-token', { role: 'agent', holderId: 'agent-a' }],
  ['viewer-token', { role: 'viewer' }],
] as const));

/** A request double: what the fast path reads. */
const request = (method: string, url: string, token?: string): IncomingMessage =>
  ({ method, url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }) as unknown as IncomingMessage;

/** A response double that records the one reply written. */
function recordingResponse() {
  const sent: { status?: number; headers?: Record<string, unknown>; body?: string } = {};
  const response = {
    headersSent: false,
    writeHead(status: number, headers: Record<string, unknown>) { sent.status = status; sent.headers = headers; },
    end(body: string) { sent.body = body; },
  };
  return { response: response as unknown as ServerResponse, sent };
}

/** Builds the fast path over controller doubles; `handledBy` records who answered. */
function fastPath(leases: { acquire?: () => Promise<unknown> } = {}) {
  const handledBy: string[] = [];
  const listener = createLeaseFastPath({
    tokens,
    leases: {
      acquire: (async (resource: string, body: unknown, agent: { holderId: string }) => {
        handledBy.push(`acquire ${resource} ${JSON.stringify(body)} ${agent.holderId}`);
        return leases.acquire === undefined ? { ok: true } : leases.acquire();
      }) as never,
      renew: (async () => ({ ok: true })) as never,
      release: (async () => ({ ok: true })) as never,
    },
    jsonBody: (req, _res, next) => { (req as IncomingMessage & { body?: unknown }).body = { requestId: 'r1' }; next(); },
    mapException: (error) => error,
    decideAndLog: (exception) => decideReply(exception, { maxBodyBytes: 4096 }),
    isStopping: () => false,
  }, () => handledBy.push('express'));
  return { listener, handledBy };
}

const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('createLeaseFastPath', () => {
  it('answers an agent\'s acquire through the controller, as JSON with the status and content type Express would send', async () => {
    // Arrange
    const { listener, handledBy } = fastPath();
    const { response, sent } = recordingResponse();
    // Act
    listener(request('POST', '/v1/leases/deploy-slot/acquire', 'agent-token'), response);
    await settled();
    // Assert
    expect(handledBy).toEqual(['acquire deploy-slot {"requestId":"r1"} agent-a']);
    expect(sent).toEqual({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': 11 }, body: '{"ok":true}' });
  });

  it('answers a denial with the exception filter\'s status and the outcome as the body', async () => {
    const { listener } = fastPath({ acquire: () => Promise.reject(new DeniedOutcome({ ok: false, reason: 'held' })) });
    const { response, sent } = recordingResponse();
    listener(request('POST', '/v1/leases/deploy-slot/acquire', 'agent-token'), response);
    await settled();
    expect([sent.status, sent.body]).toEqual([409, '{"ok":false,"reason":"held"}']);
  });

  it.each([
    ['no token', request('POST', '/v1/leases/r/acquire')],
    ['an unknown token', request('POST', '/v1/leases/r/acquire', 'nobody')],
    ['a viewer token', request('POST', '/v1/leases/r/acquire', 'viewer-token')],
    ['another method', request('GET', '/v1/leases/r/acquire', 'agent-token')],
    ['a query string', request('POST', '/v1/leases/r/acquire?x=1', 'agent-token')],
    ['a percent-encoded resource', request('POST', '/v1/leases/r%20/acquire', 'agent-token')],
    ['a trailing slash', request('POST', '/v1/leases/r/acquire/', 'agent-token')],
    ['another route', request('GET', '/v1/leases', 'agent-token')],
  ])('hands a request with %s to Express untouched', (_case, incoming) => {
    const { listener, handledBy } = fastPath();
    const { response, sent } = recordingResponse();
    listener(incoming, response);
    expect(handledBy).toEqual(['express']);
    expect(sent).toEqual({});
  });
});
