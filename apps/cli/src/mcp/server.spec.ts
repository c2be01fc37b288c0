/**
 * The MCP server's session semantics in-process: the SDK's `Client` linked to the server by the
 * SDK's in-memory transport, the agent SDK against the coordinator test double. What must hold:
 * a lease is renewed while the session lives and released when it ends; a lost lease is told as a
 * notification and first in the next tool result; a lost lease is never used for a write; waiting
 * for a held resource takes it once it is free.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CoordinatorReads } from './coordinator-reads.js';
import { MAX_ACQUIRE_POLL_MILLIS } from './lease-session.js';
import { createLeaseFenceMcpServer, type LeaseFenceMcpSession } from './server.js';

/** These tests never read the log: a read fails the test loudly. */
const noReads: CoordinatorReads = {
  leases: () => Promise.reject(new Error('unexpected read: leases')),
  rejections: () => Promise.reject(new Error('unexpected read: rejections')),
  history: () => Promise.reject(new Error('unexpected read: events')),
};

const eventually = async (what: string, probe: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !probe(); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!probe()) throw new Error(`timed out waiting for ${what}`);
};

describe('lease-fence MCP server sessions', () => {
  let double: CoordinatorTestDouble;
  const open: LeaseFenceMcpSession[] = [];

  beforeEach(async () => {
    double = await openCoordinatorTestDouble({
      tokens: [
        { token: 'token-1', role: 'agent', holderId: 'agent-1' },
        { token: 'token-2', role: 'agent', holderId: 'agent-2' },
      ],
    });
  });

  afterEach(async () => {
    for (const session of open.splice(0)) await session.close();
    await double.close();
  });

  const connect = async (
    holderId: string,
    token: string,
    clockSkewMillis = 50,
  ): Promise<{
    session: LeaseFenceMcpSession;
    mcp: Client;
    notices: string[];
    call: (
      name: string,
      args: Record<string, unknown>,
      signal?: AbortSignal,
    ) => Promise<CallToolResult & { text: string }>;
  }> => {
    const client = new LeaseFenceClient({ baseUrl: double.url, token, holderId, clockSkewMillis });
    const session = createLeaseFenceMcpServer({ client, reads: noReads, version: '0.0.0-test' });
    open.push(session);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await session.server.connect(serverSide);
    const mcp = new Client({ name: 'spec', version: '1.0.0' });
    const notices: string[] = [];
    mcp.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notices.push(String(n.params.data)));
    await mcp.connect(clientSide);
    return {
      session,
      mcp,
      notices,
      call: async (name, args, signal) => {
        // A signal aborted cancels the call the MCP way: the SDK sends notifications/cancelled.
        const result = (await mcp.callTool(
          { name, arguments: args },
          undefined,
          signal === undefined ? {} : { signal },
        )) as CallToolResult;
        return { ...result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n') };
      },
    };
  };

  it('keeps a lease renewed while the session lives and releases it when the session ends', async () => {
    const agent = await connect('agent-1', 'token-1');
    const acquired = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1500 });
    expect(acquired.text).toMatch(/^acquired deploy-a with fence 1 /);
    expect(acquired.text).not.toContain('after waiting'); // it did not wait: the first attempt got it

    await double.nextHandled((r) => r.route === 'renew' && r.status === 200);
    await double.nextHandled((r) => r.route === 'renew' && r.status === 200);
    expect(agent.session.session.current('deploy-a').state).toBe('held');

    await agent.session.close();
    const release = double.handled.find((r) => r.route === 'release');
    expect(release).toMatchObject({ resource: 'deploy-a', status: 200 });
  });

  it('tells a lost lease as a notification and first in the next tool result, and never writes with it', async () => {
    const agent = await connect('agent-1', 'token-1');
    await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1500 });
    double.inject({ route: 'renew', kind: 'unavailable', times: 1000 });

    await eventually('the LEASE LOST notification', () => agent.notices.length > 0);
    expect(agent.notices[0]).toMatch(/^LEASE LOST: your lease on deploy-a \(fence 1\) can no longer be trusted: /);

    const write = await agent.call('fenced_request', {
      resource: 'deploy-a',
      method: 'POST',
      url: 'http://127.0.0.1:9/never-reached',
      body: '{}',
    });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/^LEASE LOST: your lease on deploy-a \(fence 1\)/);
    expect(write.text).toContain('not sent: your lease on deploy-a (fence 1) was lost');
    // told once: the next result carries no notice
    const next = await agent.call('release_lease', { resource: 'deploy-a' });
    expect(next.text).not.toContain('LEASE LOST');
  });

  it('takes a resource again after its lease was lost by deadline while the coordinator still had it', async () => {
    // A clock skew of 1 s on a 1.5 s lease: the server gives the lease up 0.5 s after the grant,
    // the coordinator keeps it for 1.5 s, so the agent's acquire comes while it is still there.
    const agent = await connect('agent-1', 'token-1', 1000);
    await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1500 });
    double.inject({ route: 'renew', kind: 'unavailable', times: 1000 });
    await eventually('the LEASE LOST notification', () => agent.notices.length > 0);
    expect(agent.notices[0]).toContain('Call acquire_lease if you still need it');

    const again = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1500 });

    // The lost lease was this session's own: it is given back, and the agent gets the resource
    // (a new fence), not "your agent already holds deploy-a … from another session".
    expect(again.text).toMatch(/^LEASE LOST: your lease on deploy-a \(fence 1\)/);
    expect(again.text).toContain('acquired deploy-a with fence 2 ');
    expect(double.handled.filter((r) => r.route === 'release')).toMatchObject([{ resource: 'deploy-a', status: 200 }]);
  });

  it('sends no write with a lease its renew_lease was told is gone (released elsewhere with the same agent token)', async () => {
    const agent = await connect('agent-1', 'token-1');
    await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 60_000 });
    // Another process with agent-1's token (an operator's CLI) releases fence 1 behind the session's back.
    const released = await fetch(`${double.url}/v1/leases/deploy-a/release`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-1', 'content-type': 'application/json' },
      body: JSON.stringify({ fence: 1 }),
    });
    expect(released.status).toBe(200);

    const renewed = await agent.call('renew_lease', { resource: 'deploy-a' });
    expect(renewed.isError).toBe(true);
    expect(renewed.text).toMatch(/^not renewed: your lease on deploy-a is lost/);

    // The tool said "stop writing": the session does not send with that lease any more either.
    const write = await agent.call('fenced_request', {
      resource: 'deploy-a',
      method: 'POST',
      url: 'http://127.0.0.1:9/never-reached',
      body: '{}',
    });
    expect(write.text).toMatch(/^not sent: your lease on deploy-a \(fence 1\) was lost/);
  });

  it("answers acquires racing in one session with the session's own lease, not another session's", async () => {
    const agent = await connect('agent-1', 'token-1');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 })),
    );
    const texts = results.map((result) => result.text).sort();
    expect(texts[0]).toMatch(/^acquired deploy-a with fence 1 /);
    for (const text of texts.slice(1))
      expect(text).toMatch(/^you already hold deploy-a with fence 1 in this session; it is being renewed\./);
  });

  it('waits for a held resource when asked to, and says who holds it when not', async () => {
    const first = await connect('agent-1', 'token-1');
    const second = await connect('agent-2', 'token-2');
    await first.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

    const denied = await second.call('acquire_lease', { resource: 'deploy-a' });
    expect(denied.text).toMatch(/^not acquired: deploy-a is held by agent-1\. Try again in /);

    const waiting = second.call('acquire_lease', { resource: 'deploy-a', waitMillis: 20_000 });
    await double.nextHandled((r) => r.route === 'acquire' && r.status === 409);
    await first.call('release_lease', { resource: 'deploy-a' });
    expect((await waiting).text).toMatch(/^acquired deploy-a with fence 2 .*after waiting/);
  });

  it("tells a waiting acquire's progress, so a client whose timeout restarts on progress waits longer than that timeout", async () => {
    const first = await connect('agent-1', 'token-1');
    const second = await connect('agent-2', 'token-2');
    await first.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });
    setTimeout(() => void first.call('release_lease', { resource: 'deploy-a' }), 4500);

    // The client gives up after 2 s without an answer or progress (the SDK's default is 60 s);
    // attempts are at most MAX_ACQUIRE_POLL_MILLIS (1 s) apart.
    const progress: string[] = [];
    const waited = (await second.mcp.callTool(
      { name: 'acquire_lease', arguments: { resource: 'deploy-a', waitMillis: 20_000 } },
      undefined,
      {
        timeout: 2000,
        resetTimeoutOnProgress: true,
        onprogress: (notification) => void progress.push(notification.message ?? ''),
      },
    )) as CallToolResult;

    expect(waited.content[0]).toMatchObject({ text: expect.stringMatching(/^acquired deploy-a with fence 2 /) });
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress[0]).toMatch(/^waiting for deploy-a: deploy-a is held by agent-1\./);
  });

  it('takes no lease for an acquire the client cancelled while it waited: the resource freed later stays free', async () => {
    const first = await connect('agent-1', 'token-1');
    const second = await connect('agent-2', 'token-2');
    await first.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

    const cancel = new AbortController();
    const waiting = second.call('acquire_lease', { resource: 'deploy-a', waitMillis: 20_000 }, cancel.signal);
    await double.nextHandled((r) => r.route === 'acquire' && r.status === 409);
    cancel.abort(new Error('the user pressed stop'));
    await expect(waiting).rejects.toThrow(/stop/);
    await first.call('release_lease', { resource: 'deploy-a' });

    // past the longest pause between two attempts of the wait the client gave up
    await new Promise((resolve) => setTimeout(resolve, 2 * MAX_ACQUIRE_POLL_MILLIS));
    expect(double.handled.filter((r) => r.route === 'acquire' && r.status === 200)).toHaveLength(1);
    expect(second.session.session.current('deploy-a').state).toBe('none');
  });

  /** An HTTP server on 127.0.0.1 answering with `handle`; `url` is its `/deployments`, `close` cuts its connections too. */
  const openOrigin = async (handle: (request: IncomingMessage, response: ServerResponse) => void) => {
    const origin: Server = createServer(handle);
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/deployments`,
      close: () => {
        origin.closeAllConnections();
        return new Promise<void>((resolve) => origin.close(() => resolve()));
      },
    };
  };
  /** Answers `request` with 200 `recorded` once its body has been read. */
  const record = (request: IncomingMessage, response: ServerResponse): void => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('recorded'));
  };
  /** A ready gate guarding deploy-a (unless `ready` says otherwise), and `write` for every other request. */
  const openGate = (
    write: (request: IncomingMessage, response: ServerResponse) => void,
    ready: () => boolean = () => true,
  ) =>
    openOrigin((request, response) => {
      if (request.url === '/.well-known/lease-fence-gate/readyz') {
        response.writeHead(ready() ? 200 : 404, { 'content-type': 'application/json' });
        response.end(ready() ? JSON.stringify({ ok: true, resource: 'deploy-a', floor: 0 }) : '{}');
        return;
      }
      write(request, response);
    });

  it('sends nothing for a fenced_request the client cancelled before the write went out', async () => {
    let writes = 0;
    let answerReadiness: (() => void) | undefined;
    const origin = await openOrigin((request, response) => {
      if (request.url === '/.well-known/lease-fence-gate/readyz') {
        answerReadiness = () =>
          response
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: true, resource: 'deploy-a', floor: 0 }));
        return;
      }
      writes += 1;
      record(request, response);
    });
    try {
      const agent = await connect('agent-1', 'token-1');
      await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

      const cancel = new AbortController();
      const write = agent.call(
        'fenced_request',
        { resource: 'deploy-a', method: 'POST', url: origin.url, body: '{}' },
        cancel.signal,
      );
      await eventually('the readiness probe', () => answerReadiness !== undefined);
      cancel.abort(new Error('the user pressed stop'));
      await expect(write).rejects.toThrow(/stop/);
      answerReadiness?.();

      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(writes).toBe(0);
    } finally {
      await origin.close();
    }
  });

  it('asks before every write whether the URL is a ready gate: a gate replaced by another server gets no token', async () => {
    // One origin that first answers as a ready gate guarding deploy-a, then as a plain service.
    let actsAsGate = true;
    const tokensReceived: (string | undefined)[] = [];
    const gate = await openGate(
      (request, response) => {
        tokensReceived.push(request.headers['lease-fence-token'] as string | undefined);
        record(request, response);
      },
      () => actsAsGate,
    );
    const url = gate.url;
    try {
      const agent = await connect('agent-1', 'token-1');
      await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

      const through = await agent.call('fenced_request', { resource: 'deploy-a', method: 'POST', url, body: '{}' });
      expect(through.text).toMatch(/^200/);
      expect(tokensReceived).toHaveLength(1);

      actsAsGate = false; // the gate stopped; another server answers on its port
      const after = await agent.call('fenced_request', { resource: 'deploy-a', method: 'POST', url, body: '{}' });
      expect(after.isError).toBe(true);
      expect(after.text).toMatch(/^not sent: .* not a lease-fence-gate's readiness/);
      expect(tokensReceived).toHaveLength(1);
    } finally {
      await gate.close();
    }
  });

  it("does not follow a redirect: the lease's token and the write go to the gate only, and the agent is told where it pointed", async () => {
    const tokensElsewhere: (string | undefined)[] = [];
    const elsewhere = await openOrigin((request, response) => {
      tokensElsewhere.push(request.headers['lease-fence-token'] as string | undefined);
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('landed, unfenced'));
    });
    const target = elsewhere.url;
    // the service behind the gate answers 307 (the gate passes its answers through as they are)
    const gate = await openGate((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(307, { location: target }).end());
    });
    try {
      const agent = await connect('agent-1', 'token-1');
      await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

      const redirected = await agent.call('fenced_request', {
        resource: 'deploy-a',
        method: 'POST',
        url: gate.url,
        body: '{"version":7}',
      });

      expect(tokensElsewhere).toEqual([]);
      expect(redirected.text).toMatch(/^307/);
      expect(redirected.text).toContain(`redirected to ${target}: not followed`);
      expect(redirected.structuredContent).toMatchObject({ ok: false, status: 307, location: target });
    } finally {
      await gate.close();
      await elsewhere.close();
    }
  });

  it('reads at most the part of an answer it hands back: an endless body is cut, not buffered until the timeout', async () => {
    let written = 0;
    const gate = await openGate((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk)) written += chunk.length;
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    try {
      const agent = await connect('agent-1', 'token-1');
      await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });

      const read = await agent.call('fenced_request', {
        resource: 'deploy-a',
        method: 'GET',
        url: gate.url,
        timeoutMillis: 10_000,
      });

      expect(read.isError).toBeUndefined();
      expect(read.text).toMatch(/^200 \(text\/plain\):\nx{65536}\n\[body cut\]$/);
      expect(written).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await gate.close();
    }
  });

  it('answers a coordinator that cannot serve, and contradictory arguments, with an error result in words', async () => {
    const agent = await connect('agent-1', 'token-1');
    double.inject({ route: 'acquire', kind: 'unavailable', times: 100 });
    const unavailable = await agent.call('acquire_lease', { resource: 'deploy-a' });
    expect(unavailable.isError).toBe(true);
    expect(unavailable.text).toMatch(/recovering/);
    expect(agent.session.session.current('deploy-a').state).toBe('none');

    const both = await agent.call('who_holds', { resource: 'deploy-a', atTime: '2026-12-01T21:30:00Z', atPosition: 3 });
    expect(both.isError).toBe(true);
    expect(both.text).toBe('atTime and atPosition: give one of them, not both.');
  });

  it("refuses an argument no tool takes and checks ttlMillis by the wire's own rule, naming the field; says a renewal's time left in words", async () => {
    const agent = await connect('agent-1', 'token-1');

    const unknown = await agent.call('acquire_lease', { resource: 'deploy-a', x: 1 });
    const fraction = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1.5 });
    const acquired = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 30_000 });
    const renewed = await agent.call('renew_lease', { resource: 'deploy-a' });

    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/"x"/);
    expect(fraction.isError).toBe(true);
    expect(fraction.text).toMatch(/must be an integer \(milliseconds\) at ttlMillis/);
    expect(acquired.isError).toBeUndefined();
    expect(renewed.text).toMatch(/good for \d+(\.\d+)? s more by this server's clock/);
    expect(renewed.text).not.toMatch(/\d+\.\d{4,}/);
    // A field named …Millis holds whole milliseconds, as every input field does (it held 494.80167…).
    const { remainingMillis } = renewed.structuredContent as { remainingMillis: number };
    expect(Number.isInteger(remainingMillis) && remainingMillis > 0).toBe(true);
  });

  it("refuses a ttlMillis the SDK cannot ask for (beyond the longest timer, or within the clock skew), naming the tool's field, not the SDK's", async () => {
    const agent = await connect('agent-1', 'token-1');

    const huge = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 1e20 });
    const withinSkew = await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 50 });
    await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 30_000 });
    const hugeRenewal = await agent.call('renew_lease', { resource: 'deploy-a', ttlMillis: 1e20 });
    const skewRenewal = await agent.call('renew_lease', { resource: 'deploy-a', ttlMillis: 10 });

    for (const refused of [huge, withinSkew, hugeRenewal, skewRenewal]) {
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/ttlMillis/);
      expect(refused.text).not.toMatch(/LeaseClient|options\./);
    }
    expect(huge.text).toMatch(/at most 2147483647/);
    expect(withinSkew.text).toMatch(/clock skew \(50 ms\)/);
  });

  it('refuses a header value HTTP cannot carry and a body with GET or HEAD, naming the field, before anything is sent', async () => {
    let writes = 0;
    const gate = await openGate((request, response) => {
      writes += 1;
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('recorded'));
    });
    try {
      const agent = await connect('agent-1', 'token-1');
      await agent.call('acquire_lease', { resource: 'deploy-a', ttlMillis: 5000 });
      const send = (args: Record<string, unknown>) =>
        agent.call('fenced_request', { resource: 'deploy-a', url: gate.url, ...args });

      const badValue = await send({ method: 'POST', headers: { 'X-Note': 'line\nbreak' } });
      const badName = await send({ method: 'POST', headers: { 'a b': 'x' } });
      const getBody = await send({ method: 'GET', body: '{}' });
      const headBody = await send({ method: 'HEAD', body: 'x' });

      expect(badValue.isError).toBe(true);
      expect(badValue.text).toMatch(
        /is not a valid HTTP header value \(no line breaks or NUL characters\) at headers\.X-Note$/,
      );
      expect(badName.isError).toBe(true);
      expect(badName.text).toMatch(/is not a valid HTTP header name .* at headers\.a b$/);
      expect(getBody.isError).toBe(true);
      expect(getBody.text).toMatch(/must be absent with method GET at body$/);
      expect(headBody.isError).toBe(true);
      expect(headBody.text).toMatch(/must be absent with method HEAD at body$/);
      expect(writes).toBe(0);
    } finally {
      await gate.close();
    }
  });
});
