/**
 * The Streamable HTTP transport in-process: a client that goes away without deleting its session
 * must not keep its leases renewed for ever; the idle session is ended and its leases released.
 */
import { LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CoordinatorReads } from './coordinator-reads.js';
import { createLeaseFenceMcpServer } from './server.js';
import { serveStreamableHttp, type StreamableHttpEndpoint } from './transports.js';

const noReads: CoordinatorReads = {
  leases: () => Promise.reject(new Error('unexpected read: leases')),
  rejections: () => Promise.reject(new Error('unexpected read: rejections')),
  history: () => Promise.reject(new Error('unexpected read: events')),
};

describe('Streamable HTTP sessions', () => {
  let double: CoordinatorTestDouble;
  let endpoint: StreamableHttpEndpoint | undefined;

  beforeEach(async () => {
    double = await openCoordinatorTestDouble({ tokens: [{ token: 'token-1', role: 'agent', holderId: 'agent-1' }] });
  });

  afterEach(async () => {
    await endpoint?.close();
    await double.close();
  });

  /** The MCP server over Streamable HTTP on 127.0.0.1 for agent-1, whose client talks to the double. */
  const serveAgent1 = (limits: { sessionIdleMillis: number; maxSessions: number }) => {
    const client = new LeaseFenceClient({
      baseUrl: double.url,
      token: 'token-1',
      holderId: 'agent-1',
      clockSkewMillis: 50,
    });
    return serveStreamableHttp(() => createLeaseFenceMcpServer({ client, reads: noReads, version: '0.0.0-test' }), {
      host: '127.0.0.1',
      port: 0,
      ...limits,
    });
  };

  it('ends a session whose client went away without DELETE, releasing its lease', async () => {
    endpoint = await serveAgent1({ sessionIdleMillis: 2000, maxSessions: 10 });
    const mcp = new Client({ name: 'spec', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
    const acquired = (await mcp.callTool({
      name: 'acquire_lease',
      arguments: { resource: 'deploy-a', ttlMillis: 60_000 },
    })) as CallToolResult;
    expect(acquired.content[0]).toMatchObject({ text: expect.stringMatching(/^acquired deploy-a with fence 1 /) });
    expect(endpoint.sessions()).toBe(1);

    await mcp.close(); // drops its connections, sends no DELETE
    const release = await double.nextHandled((r) => r.route === 'release');
    expect(release).toMatchObject({ resource: 'deploy-a', status: 200 });
    expect(endpoint.sessions()).toBe(0);
  });

  it('keeps a session that is in use past the idle timeout, and its lease: only requests that stopped start the idle clock', async () => {
    endpoint = await serveAgent1({ sessionIdleMillis: 1000, maxSessions: 10 });
    const mcp = new Client({ name: 'spec', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
    await mcp.callTool({ name: 'acquire_lease', arguments: { resource: 'deploy-a', ttlMillis: 60_000 } });

    // An agent at work: a call every 250 ms for 3 s, three idle timeouts after its initialize.
    for (let call = 0; call < 12; call += 1) {
      const renewed = (await mcp.callTool({
        name: 'renew_lease',
        arguments: { resource: 'deploy-a' },
      })) as CallToolResult;
      expect(renewed.content[0]).toMatchObject({ text: expect.stringMatching(/^renewed deploy-a: fence 1/) });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(endpoint.sessions()).toBe(1);
    expect(double.handled.filter((r) => r.route === 'release')).toEqual([]);
    await mcp.close();
  });

  it('ends a session whose client only listens past the idle timeout: an open notification stream is no request', async () => {
    // A vanished client's stream can stay open from this side for as long as its TCP connection
    // looks alive (a laptop that slept, a cut network): counting it would renew its leases for ever.
    endpoint = await serveAgent1({ sessionIdleMillis: 1000, maxSessions: 10 });
    const mcp = new Client({ name: 'spec', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url));
    await mcp.connect(transport); // the SDK client opens its GET notification stream and keeps it
    await mcp.callTool({ name: 'acquire_lease', arguments: { resource: 'deploy-a', ttlMillis: 60_000 } });

    const release = await double.nextHandled((r) => r.route === 'release');
    expect(release).toMatchObject({ resource: 'deploy-a', status: 200 });
    expect(endpoint.sessions()).toBe(0);
    await mcp.close();
  });

  it('refuses a session beyond maxSessions with 503 in words, and starts one again once a session ended', async () => {
    endpoint = await serveAgent1({ sessionIdleMillis: 60_000, maxSessions: 2 });
    const url = new URL(endpoint.url);
    const open = async (): Promise<{ mcp: Client; transport: StreamableHTTPClientTransport }> => {
      const mcp = new Client({ name: 'spec', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(url);
      await mcp.connect(transport);
      return { mcp, transport };
    };
    const first = await open();
    const second = await open();

    await expect(open()).rejects.toThrow(/2 MCP sessions are open, the most this server keeps/);
    const refused = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(refused.status).toBe(503);
    expect(endpoint.sessions()).toBe(2);

    await first.transport.terminateSession(); // DELETE /mcp
    const third = await open();
    expect(endpoint.sessions()).toBe(2);
    await Promise.all([first.mcp.close(), second.mcp.close(), third.mcp.close()]);
  });
});
