/**
 * Bad input gets a clear 4xx whose message names the field, and changes nothing: the log's
 * head is the same after every case. No input reaches a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call, coordinatorHttp } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

let app: RunningCoordinator;
let fence: number;
const agent = TEST_TOKENS.agentA.token;
const gate = TEST_TOKENS.gate.token;
const viewer = TEST_TOKENS.viewer.token;
const long = 'x'.repeat(201);

beforeAll(async () => {
  app = await startCoordinator({
    env: {
      LEASE_FENCE_MIN_TTL_MILLIS: '100',
      LEASE_FENCE_MAX_TTL_MILLIS: '60000',
      LEASE_FENCE_TTL_MILLIS: '10000',
      LEASE_FENCE_MAX_BODY_BYTES: '4096',
      // "The log does not grow" below compares heads: no idle uptime checkpoint and no expiry of
      // the setup lease may land between two reads, however slow a loaded machine runs the cases.
      LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '3600000',
    },
  });
  const granted = await call<{ grant: { fence: number } }>(app.url, 'POST', '/v1/leases/held/acquire', {
    token: agent,
    json: { requestId: 'setup', ttlMillis: 60_000 },
  });
  fence = granted.body.grant.fence;
});

afterAll(async () => {
  await app?.cleanup();
});

interface Case {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly token: string;
  readonly json?: unknown;
  readonly raw?: string;
  readonly contentType?: string;
  readonly status: number;
  /** The field the reply must name. */
  readonly field: string;
}

const rejection = {
  seq: 1,
  resource: 'deploy-1',
  kind: 'stale',
  rejected: { holderId: 'a', fence: 1 },
  current: { holderId: 'b', fence: 2 },
};

const CASES: Readonly<Record<string, Case>> = {
  'malformed JSON': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    raw: '{"requestId": ',
    status: 400,
    field: 'body',
  },
  'a JSON array instead of an object': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    raw: '["r1"]',
    status: 400,
    field: 'body',
  },
  'a JSON string instead of an object': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    raw: '"r1"',
    status: 400,
    field: 'body',
  },
  'a body that is not JSON (text/plain)': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    raw: 'requestId=r1',
    contentType: 'text/plain',
    status: 400,
    field: 'body',
  },
  'no body at all': { method: 'POST', path: '/v1/leases/r/acquire', token: agent, status: 400, field: 'body' },
  'a missing requestId': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: {},
    status: 400,
    field: 'requestId',
  },
  'a numeric requestId': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 42 },
    status: 400,
    field: 'requestId',
  },
  'an empty requestId': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: '' },
    status: 400,
    field: 'requestId',
  },
  'a requestId over 200 characters': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: long },
    status: 400,
    field: 'requestId',
  },
  'a requestId with a leading space': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: ' r1' },
    status: 400,
    field: 'requestId',
  },
  'an unknown field': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', owner: 'me' },
    status: 400,
    field: 'owner',
  },
  'a negative ttlMillis': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: -5 },
    status: 400,
    field: 'ttlMillis',
  },
  'a fractional ttlMillis': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: 1500.5 },
    status: 400,
    field: 'ttlMillis',
  },
  'a ttlMillis given as a string': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: '1000' },
    status: 400,
    field: 'ttlMillis',
  },
  'a ttlMillis below the configured minimum': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: 99 },
    status: 400,
    field: 'ttlMillis',
  },
  'a ttlMillis above the configured maximum': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: 60_001 },
    status: 400,
    field: 'ttlMillis',
  },
  'a :resource over 200 characters': {
    method: 'POST',
    path: `/v1/leases/${long}/acquire`,
    token: agent,
    json: { requestId: 'r1' },
    status: 400,
    field: 'resource',
  },
  'a :resource with a trailing space': {
    method: 'POST',
    path: '/v1/leases/r%20/acquire',
    token: agent,
    json: { requestId: 'r1' },
    status: 400,
    field: 'resource',
  },
  'a :resource with a control character': {
    method: 'POST',
    path: '/v1/leases/r%01/acquire',
    token: agent,
    json: { requestId: 'r1' },
    status: 400,
    field: 'resource',
  },
  'a :resource with broken percent-encoding': {
    method: 'POST',
    path: '/v1/leases/r%zz/acquire',
    token: agent,
    json: { requestId: 'r1' },
    status: 400,
    field: 'path',
  },
  'a body over the size limit': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', pad: 'p'.repeat(5000) },
    status: 413,
    field: 'body',
  },
  'a renewal without a fence': {
    method: 'POST',
    path: '/v1/leases/held/renew',
    token: agent,
    json: { requestId: 'n1' },
    status: 400,
    field: 'fence',
  },
  'a renewal with fence 0': {
    method: 'POST',
    path: '/v1/leases/held/renew',
    token: agent,
    json: { requestId: 'n1', fence: 0 },
    status: 400,
    field: 'fence',
  },
  'a renewal with a fractional fence': {
    method: 'POST',
    path: '/v1/leases/held/renew',
    token: agent,
    json: { requestId: 'n1', fence: 1.5 },
    status: 400,
    field: 'fence',
  },
  'a renewal with a ttlMillis above the maximum': {
    method: 'POST',
    path: '/v1/leases/held/renew',
    token: agent,
    json: { requestId: 'n1', fence: 1, ttlMillis: 10 ** 9 },
    status: 400,
    field: 'ttlMillis',
  },
  'a release with the fence as a string': {
    method: 'POST',
    path: '/v1/leases/held/release',
    token: agent,
    json: { fence: '1' },
    status: 400,
    field: 'fence',
  },
  'a release with an extra field': {
    method: 'POST',
    path: '/v1/leases/held/release',
    token: agent,
    json: { fence: 1, holderId: 'agent-b' },
    status: 400,
    field: 'holderId',
  },
  'a rejection without seq': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, seq: undefined },
    status: 400,
    field: 'seq',
  },
  'a rejection with seq 0 (seqs start at 1)': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, seq: 0 },
    status: 400,
    field: 'seq',
  },
  'a rejection of an unknown kind': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, kind: 'late' },
    status: 400,
    field: 'kind',
  },
  'a rejection with a negative rejected fence': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, rejected: { holderId: 'a', fence: -1 } },
    status: 400,
    field: 'rejected.fence',
  },
  'a rejection with an unknown field inside rejected': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, rejected: { holderId: 'a', fence: 1, extra: 1 } },
    status: 400,
    field: 'rejected.extra',
  },
  'a rejection with an unknown field inside current': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, current: { holderId: 'b', fence: 2, note: 'x' } },
    status: 400,
    field: 'current.note',
  },
  'a rejection for another resource than the path': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, resource: 'deploy-2' },
    status: 400,
    field: 'resource',
  },
  'an admit without holderId': {
    method: 'POST',
    path: '/v1/resources/deploy-1/admit',
    token: gate,
    json: { fence: 3 },
    status: 400,
    field: 'holderId',
  },
  // Well-formed reports that cannot be true of this coordinator's fences (only fence 1 was issued, on 'held').
  'a stale rejection whose fence is above the floor': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, rejected: { holderId: 'a', fence: 9 }, current: { holderId: 'b', fence: 2 } },
    status: 400,
    field: 'rejected.fence',
  },
  'a double-grant rejection with two different fences': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, kind: 'double-grant' },
    status: 400,
    field: 'rejected.fence',
  },
  'a double-grant rejection with one holder twice': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, kind: 'double-grant', rejected: { holderId: 'b', fence: 2 } },
    status: 400,
    field: 'rejected.holderId',
  },
  'a rejection naming fences never issued': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: {
      ...rejection,
      rejected: { holderId: 'a', fence: 900_000_000 },
      current: { holderId: 'b', fence: 900_000_001 },
    },
    status: 400,
    field: 'rejected.fence',
  },
  'a rejection with a wall time of 1e300 ms': {
    method: 'POST',
    path: '/v1/resources/deploy-1/rejections',
    token: gate,
    json: { ...rejection, wallMillis: 1e300 },
    status: 400,
    field: 'wallMillis',
  },
  'a floor report without holderId': {
    method: 'POST',
    path: '/v1/resources/deploy-1/floor',
    token: gate,
    json: { fence: 3 },
    status: 400,
    field: 'holderId',
  },
  'a floor too close to the largest fence to leave its margin': {
    method: 'POST',
    path: '/v1/resources/deploy-1/floor',
    token: gate,
    json: { holderId: 'a', fence: Number.MAX_SAFE_INTEGER - 1 },
    status: 400,
    field: 'fence',
  },
  'an admit of a fence never issued': {
    method: 'POST',
    path: '/v1/resources/deploy-1/admit',
    token: gate,
    json: { holderId: 'nobody', fence: 999_999_999 },
    status: 400,
    field: 'fence',
  },
  'events after a negative position': {
    method: 'GET',
    path: '/v1/events?after=-1',
    token: viewer,
    status: 400,
    field: 'after',
  },
  'events with limit 0': { method: 'GET', path: '/v1/events?limit=0', token: viewer, status: 400, field: 'limit' },
  'events with a non-numeric limit': {
    method: 'GET',
    path: '/v1/events?limit=ten',
    token: viewer,
    status: 400,
    field: 'limit',
  },
  'events with limit over 10 000': {
    method: 'GET',
    path: '/v1/events?limit=10001',
    token: viewer,
    status: 400,
    field: 'limit',
  },
  'events after a hexadecimal position': {
    method: 'GET',
    path: '/v1/events?after=0x10',
    token: viewer,
    status: 400,
    field: 'after',
  },
  'events after a position with an exponent': {
    method: 'GET',
    path: '/v1/events?after=1e3',
    token: viewer,
    status: 400,
    field: 'after',
  },
  'events after an empty position': {
    method: 'GET',
    path: '/v1/events?after=',
    token: viewer,
    status: 400,
    field: 'after',
  },
  'events with after given twice': {
    method: 'GET',
    path: '/v1/events?after=1&after=2',
    token: viewer,
    status: 400,
    field: 'after',
  },
  'events with an unknown query parameter': {
    method: 'GET',
    path: '/v1/events?from=3',
    token: viewer,
    status: 400,
    field: 'from',
  },
  'a JSON null body': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    raw: 'null',
    status: 400,
    field: 'body',
  },
  'a ttlMillis of 1e20': {
    method: 'POST',
    path: '/v1/leases/r/acquire',
    token: agent,
    json: { requestId: 'r1', ttlMillis: 1e20 },
    status: 400,
    field: 'ttlMillis',
  },
};

describe('bad input', () => {
  it('has a lease to renew and release in the cases below', () => {
    expect(fence).toBeGreaterThan(0);
  });

  it.each(Object.entries(CASES))(
    'answers %s with a 4xx naming the field, and the log does not grow',
    async (_name, input) => {
      // Arrange
      const viewerHttp = coordinatorHttp(app.url, viewer);
      const headBefore = await viewerHttp.head();

      // Act
      const reply = await call<{ error: string; message: string; issues?: { path: string; message: string }[] }>(
        app.url,
        input.method,
        input.path,
        {
          token: input.token,
          ...(input.json === undefined ? {} : { json: input.json }),
          ...(input.raw === undefined ? {} : { raw: input.raw }),
          ...(input.contentType === undefined ? {} : { contentType: input.contentType }),
        },
      );

      // Assert
      expect(reply.status, reply.text).toBe(input.status);
      expect(reply.body.message).toContain(input.field);
      if (reply.body.issues !== undefined) expect(reply.body.issues.map((i) => i.path)).toContain(input.field);
      expect(await viewerHttp.head()).toBe(headBefore);
    },
  );

  it.each([
    ['a JSON null body', { raw: 'null' }, 'body: must be a JSON object, got null', 'malformed'],
    ['a JSON array body', { raw: '[]' }, 'body: must be a JSON object, got an array', 'Content-Type'],
    ['an empty requestId', { json: { requestId: '' } }, 'requestId: ', 'printable ASCII'],
    ['a numeric requestId', { json: { requestId: 42 } }, 'requestId: must be a string', 'Invalid input'],
    [
      'a ttlMillis of 1e20',
      { json: { requestId: 'r1', ttlMillis: 1e20 } },
      'ttlMillis: is out of range: must be between 100 and 60000 milliseconds',
      'integer',
    ],
    [
      'a ttlMillis of 9007199254740993',
      { raw: '{"requestId":"r1","ttlMillis":9007199254740993}' },
      'ttlMillis: is out of range: must be between 100 and 60000 milliseconds',
      'integer',
    ],
  ])('words %s plainly', async (_name, input, expected, misleading) => {
    const reply = await call<{ message: string }>(app.url, 'POST', '/v1/leases/worded/acquire', {
      token: agent,
      ...input,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toContain(expected);
    expect(reply.body.message).not.toContain(misleading);
  });

  it.each([
    [
      'a body that is not gzip sent as gzip',
      'gzip',
      400,
      'content-encoding: the body is not valid gzip (incorrect header check)',
    ],
    [
      'a body that is not deflate sent as deflate',
      'deflate',
      400,
      'content-encoding: the body is not valid deflate (incorrect header check)',
    ],
    ['an unsupported content-encoding', 'x', 415, 'content-encoding: x is not supported'],
  ] as const)('names content-encoding for %s, with issues', async (_name, encoding, status, expected) => {
    const reply = await call<{ error: string; message: string; issues?: { path: string }[] }>(
      app.url,
      'POST',
      '/v1/leases/encoded/acquire',
      {
        token: agent,
        raw: '{"requestId":"zz1"}',
        headers: { 'content-encoding': encoding },
      },
    );
    expect(reply.status).toBe(status);
    expect(reply.body.message).toContain(expected);
    expect(reply.body.issues?.map((i) => i.path)).toEqual(['content-encoding']);
  });

  it('words a repeated or malformed query parameter naming it, and an unknown one by name', async () => {
    const get = async (query: string): Promise<string> =>
      (await call<{ message: string }>(app.url, 'GET', `/v1/events?${query}`, { token: viewer })).body.message;
    expect(await get('after=0x10')).toBe(
      'after: must be a whole number in decimal digits only (a log position, 0 to 9007199254740991)',
    );
    expect(await get('after=1&after=2')).toBe('after: must be given once');
    expect(await get('after=')).toBe('after: must not be empty: give a log position or leave the parameter out');
    expect(await get('after=1&from=2&to=3')).toBe(
      'from: is not a known query parameter; to: is not a known query parameter',
    );
  });

  it.each(['/v1/events', '/v1/leases', '/v1/rejections'])(
    'refuses an unknown query parameter on %s with 400 naming it, as every viewer GET does',
    async (path) => {
      const reply = await call<{ error: string; message: string; issues: { path: string }[] }>(
        app.url,
        'GET',
        `${path}?foo=1`,
        { token: viewer },
      );
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({
        error: 'invalid-request',
        message: 'foo: is not a known query parameter',
        issues: [{ path: 'foo' }],
      });
    },
  );

  it("refuses a requestId reused for another resource in the API's words, naming requestId and no internal function", async () => {
    // Arrange
    await call(app.url, 'POST', '/v1/leases/reuse-a/acquire', { token: agent, json: { requestId: 'reused-id' } });

    // Act
    const reply = await call<{ message: string; issues: { path: string }[] }>(
      app.url,
      'POST',
      '/v1/leases/reuse-b/acquire',
      { token: agent, json: { requestId: 'reused-id' } },
    );

    // Assert
    expect(reply.status).toBe(400);
    expect(reply.body.issues.map((i) => i.path)).toEqual(['requestId']);
    expect(reply.body.message).toBe(
      'requestId: was already used by this agent to acquire another resource; send a fresh requestId for each acquisition (reuse one only to retry the same acquire)',
    );
    expect(reply.body.message).not.toMatch(/decide|Acquire/);
  });

  it('leaves the lease taken in setup untouched by all of the above', async () => {
    const leases = await call<{ leases: { resource: string; fence: number; holderId: string }[] }>(
      app.url,
      'GET',
      '/v1/leases',
      { token: viewer },
    );
    expect(leases.body.leases).toContainEqual(
      expect.objectContaining({ resource: 'held', fence, holderId: 'agent-a' }),
    );
  });
});
