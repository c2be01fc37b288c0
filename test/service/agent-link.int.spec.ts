/**
 * The agent link `/v1/agent` against the built coordinator, black-box: the upgrade is refused
 * like an HTTP call (401 / 403, 400 without the subprotocol, 426 for a plain GET), every frame is
 * answered with the status and body the HTTP route gives for the same request (denials, bad
 * input, another agent's lease), idempotency by requestId holds across both transports, and a
 * flood of frames on one connection is answered once each while the coordinator stays up.
 */
import { once } from 'node:events';
import { AGENT_LINK_PATH } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { openRawAgentLink, type RawAgentLink } from '../support/agent-link-client.js';
import { call } from '../support/coordinator-http.js';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

let app: RunningCoordinator;
let linkA: RawAgentLink;
let linkB: RawAgentLink;
let nextId = 1;

beforeAll(async () => {
  app = await startCoordinator();
  linkA = await openRawAgentLink(app.wsUrl, TEST_TOKENS.agentA.token);
  linkB = await openRawAgentLink(app.wsUrl, TEST_TOKENS.agentB.token);
});

afterAll(async () => {
  await linkA?.close();
  await linkB?.close();
  await app?.cleanup();
});

/** The same request over HTTP, as `{ status, body }`. */
const overHttp = async (token: string, op: string, resource: string, body: unknown): Promise<unknown> => {
  const reply = await call(app.url, 'POST', `/v1/leases/${encodeURIComponent(resource)}/${op}`, { token, json: body });
  return { status: reply.status, body: reply.body };
};
/** The request over the link, as `{ status, body }`. */
const overLink = async (link: RawAgentLink, op: string, resource: string, body: unknown): Promise<unknown> => {
  const { status, body: replyBody } = await link.request(nextId++, op, resource, body);
  return { status, body: replyBody };
};

/** The HTTP status an upgrade was refused with, and its body. */
const refusedUpgrade = (
  headers: Record<string, string>,
  protocol?: string,
  query = '',
): Promise<{ status: number; body: unknown }> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(`${app.wsUrl}${AGENT_LINK_PATH}${query}`, protocol === undefined ? [] : [protocol], {
      headers,
    });
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown });
        socket.terminate();
      });
    });
    socket.once('open', () => {
      socket.close();
      reject(new Error('upgraded'));
    });
    socket.once('error', () => undefined);
  });

describe('upgrading to /v1/agent', () => {
  it('answers a plain GET with 426 saying how to connect', async () => {
    const reply = await call(app.url, 'GET', AGENT_LINK_PATH, { token: TEST_TOKENS.agentA.token });
    expect(reply.status).toBe(426);
    expect(reply.body).toMatchObject({
      error: 'upgrade-required',
      message: expect.stringContaining('lease-fence.agent.v1'),
    });
  });

  it('refuses 401 without a token, 403 for a viewer or a gate, 400 naming sec-websocket-protocol without the subprotocol', async () => {
    const protocol = 'lease-fence.agent.v1';
    expect(await refusedUpgrade({}, protocol)).toMatchObject({ status: 401 });
    expect(await refusedUpgrade({ authorization: `Bearer ${TEST_TOKENS.viewer.token}` }, protocol)).toMatchObject({
      status: 403,
    });
    expect(await refusedUpgrade({ authorization: `Bearer ${TEST_TOKENS.gate.token}` }, protocol)).toMatchObject({
      status: 403,
    });
    expect(await refusedUpgrade({ authorization: `Bearer ${TEST_TOKENS.agentA.token}` })).toMatchObject({
      status: 400,
      body: { error: 'invalid-request', issues: [{ path: 'sec-websocket-protocol' }] },
    });
    expect(
      await refusedUpgrade({ authorization: `Bearer ${TEST_TOKENS.agentA.token}` }, 'lease-fence.agent.v0'),
    ).toMatchObject({
      status: 400,
    });
  });

  it('refuses 400 naming token when ?token= and the Authorization header carry different tokens, and accepts the same one twice', async () => {
    const protocol = 'lease-fence.agent.v1';
    const withQuery = (token: string): string => `?token=${encodeURIComponent(token)}`;
    expect(
      await refusedUpgrade(
        { authorization: `Bearer ${TEST_TOKENS.viewer.token}` },
        protocol,
        withQuery(TEST_TOKENS.agentA.token),
      ),
    ).toMatchObject({ status: 400, body: { error: 'invalid-request', issues: [{ path: 'token' }] } });
    const same = new WebSocket(`${app.wsUrl}${AGENT_LINK_PATH}${withQuery(TEST_TOKENS.agentA.token)}`, [protocol], {
      headers: { authorization: `Bearer ${TEST_TOKENS.agentA.token}` },
    });
    await once(same, 'open');
    same.close();
  });
});

describe('frames answered as HTTP answers', () => {
  it.each([
    ['an unknown field', 'acquire', 'deploy-same-1', { requestId: 'x', holderId: 'agent-b' }],
    ['a missing requestId', 'acquire', 'deploy-same-2', {}],
    ['a bad ttlMillis', 'acquire', 'deploy-same-3', { requestId: 'x', ttlMillis: -1 }],
    ['a ttlMillis above the bounds', 'acquire', 'deploy-same-4', { requestId: 'x', ttlMillis: 1e20 }],
    ['a resource that is no id', 'acquire', 'deploy\u0007bell', { requestId: 'x' }],
    ['a body that is no object', 'renew', 'deploy-same-5', [1]],
    ['a release of a fence never issued', 'release', 'deploy-same-6', { fence: 999_999 }],
  ])('%s: the same status and body over both transports, and nothing changes', async (_name, op, resource, body) => {
    // Act
    const viaLink = await overLink(linkA, op, resource, body);
    const viaHttp = await overHttp(TEST_TOKENS.agentA.token, op, resource, body);

    // Assert
    expect(viaLink).toEqual(viaHttp);
    expect((viaLink as { status: number }).status).toBeGreaterThanOrEqual(400);
  });

  it("denies another agent's renew and release of a lease exactly as HTTP does, and the holder keeps it", async () => {
    // Arrange: agent-a holds the lease (over the link)
    const granted = (await overLink(linkA, 'acquire', 'deploy-owned', { requestId: 'owned-1', ttlMillis: 30_000 })) as {
      status: number;
      body: { grant: { fence: number } };
    };
    const { fence } = granted.body.grant;

    // Act: agent-b tries to renew and release it over the link, then over HTTP
    const renewLink = await overLink(linkB, 'renew', 'deploy-owned', { requestId: 'steal-1', fence });
    const renewHttp = await overHttp(TEST_TOKENS.agentB.token, 'renew', 'deploy-owned', {
      requestId: 'steal-1',
      fence,
    });
    const releaseLink = await overLink(linkB, 'release', 'deploy-owned', { fence });
    const releaseHttp = await overHttp(TEST_TOKENS.agentB.token, 'release', 'deploy-owned', { fence });

    // Assert
    expect(granted.status).toBe(200);
    expect(renewLink).toEqual({ status: 409, body: { ok: false, reason: 'not-holder' } });
    expect(renewHttp).toEqual(renewLink);
    expect(releaseLink).toEqual(releaseHttp);
    const leases = await call<{ leases: { resource: string; holderId: string; fence: number }[] }>(
      app.url,
      'GET',
      '/v1/leases',
      {
        token: TEST_TOKENS.viewer.token,
      },
    );
    expect(leases.body.leases).toContainEqual(
      expect.objectContaining({ resource: 'deploy-owned', holderId: 'agent-a', fence }),
    );
  });

  it('gives a retried requestId the same grant on either transport (same fence, same signed token)', async () => {
    const first = (await overLink(linkA, 'acquire', 'deploy-idem', { requestId: 'idem-1' })) as { body: unknown };
    const again = (await overLink(linkA, 'acquire', 'deploy-idem', { requestId: 'idem-1' })) as { body: unknown };
    const viaHttp = (await overHttp(TEST_TOKENS.agentA.token, 'acquire', 'deploy-idem', { requestId: 'idem-1' })) as {
      body: unknown;
    };
    expect(first).toMatchObject({ status: 200 });
    expect(again).toEqual(first);
    expect(viaHttp).toEqual(first);
  });

  it('answers a frame that is no JSON, and one without a readable id, with 400 and id null; the link stays open', async () => {
    linkA.send('{"id": 1,');
    linkA.send({ op: 'acquire', resource: 'deploy-x', body: {} });
    const refused = [await linkA.reply(null)];
    while (linkA.replies.filter((reply) => reply.id === null).length < 2) await new Promise((r) => setTimeout(r, 10));
    refused.push(...linkA.replies.filter((reply) => reply.id === null).slice(1));

    expect(
      refused.map((reply) => [reply.status, (reply.body as { issues: { path: string }[] }).issues[0]?.path]),
    ).toEqual([
      [400, 'frame'],
      [400, 'id'],
    ]);
    expect(await overLink(linkA, 'release', 'deploy-never', { fence: 1 })).toMatchObject({ status: 409 });
  });
});

describe('a flood of frames on one connection', () => {
  it('answers every one of 3000 frames sent at once exactly once, with one grant per requestId in the log', async () => {
    // Arrange
    const flood = await openRawAgentLink(app.wsUrl, TEST_TOKENS.agentB.token);
    const count = 3000;

    // Act: 100 distinct acquires, each repeated 30 times (retries of one requestId), all without waiting
    for (let id = 1; id <= count; id += 1)
      flood.send({ id, op: 'acquire', resource: `deploy-flood-${id % 100}`, body: { requestId: `flood-${id % 100}` } });
    while (flood.replies.length < count) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100)); // nothing more arrives

    // Assert
    expect(flood.replies).toHaveLength(count);
    expect(new Set(flood.replies.map((reply) => reply.id)).size).toBe(count);
    expect(flood.replies.every((reply) => reply.status === 200)).toBe(true);
    const events = await call<{ events: { event: { type: string; data: { resource?: string } } }[] }>(
      app.url,
      'GET',
      '/v1/events?after=0&limit=10000',
      { token: TEST_TOKENS.viewer.token },
    );
    const floodGrants = events.body.events.filter(
      ({ event }) => event.type === 'LeaseGranted' && event.data.resource?.startsWith('deploy-flood-'),
    );
    expect(floodGrants).toHaveLength(100);
    await flood.close();
  });
});
