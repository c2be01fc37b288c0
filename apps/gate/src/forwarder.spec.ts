import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createForwarder, forwardedRequestHeaders, removeHopByHop, type ForwardFailure } from './forwarder.js';

describe('forwardedRequestHeaders', () => {
  it('drops the fence token, host, expect, the hop-by-hop headers and every header Connection names; keeps the rest as they are', () => {
    const headers: IncomingHttpHeaders = {
      host: 'gate:3100',
      'lease-fence-token': 'secret',
      connection: 'keep-alive, X-Hop ,x-other',
      'x-hop': 'drop',
      'x-other': 'drop',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x-sum',
      'transfer-encoding': 'chunked',
      upgrade: 'websocket',
      expect: '100-continue',
      'content-type': 'application/json',
      'content-length': '9',
      'set-cookie': ['a=1', 'b=2'],
    };

    const forwarded = forwardedRequestHeaders(headers);

    expect(forwarded).toEqual({
      'content-type': 'application/json',
      'content-length': '9',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(headers['lease-fence-token']).toBe('secret'); // a copy: the request keeps its own headers
  });
});

describe('removeHopByHop', () => {
  it("removes a reply's hop-by-hop headers and those its Connection names, in place", () => {
    const headers: IncomingHttpHeaders = {
      connection: 'x-private',
      'x-private': 'drop',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'content-type': 'text/plain',
      'x-upstream': 'kept',
    };

    expect(removeHopByHop(headers)).toBe(headers);
    expect(headers).toEqual({ 'content-type': 'text/plain', 'x-upstream': 'kept' });
  });
});

describe('createForwarder', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  /** A proxy on a forwarder to `upstream`; failures are answered with their kind, as the gate answers them. */
  const proxyTo = async (upstream: string, upstreamTimeoutMillis = 5_000) => {
    const forwarded: number[] = [];
    const failures: { failure: ForwardFailure; code: string | undefined }[] = [];
    const forwarder = createForwarder({
      upstream: new URL(upstream),
      upstreamTimeoutMillis,
      onForwarded: (seconds) => forwarded.push(seconds),
      onFailure: (failure: ForwardFailure, error, _request, response) => {
        failures.push({ failure, code: error.code });
        if (response.headersSent) response.destroy();
        else response.writeHead(failure === 'upstream-timeout' ? 504 : 502).end(failure);
      },
    });
    const url = await listen(
      createServer((request, response) =>
        forwarder.forward(request, response, request.method === 'PUT' ? () => undefined : undefined),
      ),
    );
    return { url, forwarded, failures, forwarder };
  };

  const send = (url: string, method: string, body?: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(
        `${url}/orders/7?dry=1`,
        { method, agent: false, headers: { 'x-tag': 'abc', 'lease-fence-token': 'secret' } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  it("streams the request to the upstream and its reply back: method, path, query, body, status and the upstream's headers", async () => {
    const received: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
    const upstream = await listen(
      createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          received.push({ method: request.method, url: request.url, headers: request.headers, body });
          response.writeHead(201, { 'x-upstream': 'yes', 'keep-alive': 'timeout=1', 'content-type': 'text/plain' });
          response.end(`got ${body.length}`);
        });
      }),
    );
    const proxy = await proxyTo(upstream);

    const reply = await send(proxy.url, 'PUT', '{"qty":3}');

    expect(reply).toMatchObject({ status: 201, body: 'got 9', headers: { 'x-upstream': 'yes' } });
    expect(reply.headers['keep-alive']).not.toBe('timeout=1');
    expect(received).toEqual([expect.objectContaining({ method: 'PUT', url: '/orders/7?dry=1', body: '{"qty":3}' })]);
    expect(received[0]?.headers).toMatchObject({ 'x-tag': 'abc', host: new URL(upstream).host });
    expect(received[0]?.headers).not.toHaveProperty('lease-fence-token');
    expect(proxy.forwarded).toHaveLength(1);
  });

  it('reports an upstream that is down as upstream-unreachable and one that never answers as upstream-timeout', async () => {
    const down = await listen(createServer());
    const downUrl = down;
    const closing = servers.pop() as Server;
    await new Promise((resolve) => closing.close(resolve));
    const hanging = await listen(createServer(() => undefined));
    const toDown = await proxyTo(downUrl);
    const toHanging = await proxyTo(hanging, 200);

    expect(await send(toDown.url, 'GET')).toMatchObject({ status: 502, body: 'upstream-unreachable' });
    expect(await send(toHanging.url, 'POST', 'x')).toMatchObject({ status: 504, body: 'upstream-timeout' });
    expect([...toDown.forwarded, ...toHanging.forwarded]).toEqual([]);
  });

  it("names what failed once the reply had begun: a stalled or cut reply body is the upstream's, a closed client connection is the client's", async () => {
    // Arrange: an upstream whose replies stop after their first bytes, stalling or cut
    const upstream = await listen(
      createServer((request, response) => {
        response.writeHead(200, { 'content-length': '100' });
        response.write('first bytes');
        if (request.url?.startsWith('/cut') === true) setTimeout(() => response.socket?.destroy(), 50);
      }),
    );
    const proxy = await proxyTo(upstream, 300);
    const stopsReading = (path: string, method = 'GET', body?: string) =>
      new Promise<void>((resolve) => {
        const outgoing = httpRequest(`${proxy.url}${path}`, { method, agent: false }, (response) =>
          response.once('data', () => (path === '/client-left' ? outgoing.destroy() : response.resume())),
        );
        outgoing.on('error', () => undefined);
        outgoing.on('close', () => resolve());
        if (body === undefined) outgoing.end();
        else {
          outgoing.setHeader('content-length', String(body.length * 2));
          outgoing.write(body);
          setTimeout(() => outgoing.destroy(), 50);
        }
      });

    // Act: a stalled reply, a cut reply, a client that leaves mid-reply, one that leaves mid-body
    for (const path of ['/stall', '/cut', '/client-left']) {
      await stopsReading(path);
      await expect.poll(() => proxy.failures.length).toBe(['/stall', '/cut', '/client-left'].indexOf(path) + 1);
    }
    await stopsReading('/client-left-mid-body', 'PUT', 'half of the body');
    await expect.poll(() => proxy.failures.length).toBe(4);

    // Assert: the upstream's failures by their own cause, the clients' as theirs
    expect(proxy.failures).toEqual([
      { failure: 'upstream-timeout', code: 'UND_ERR_BODY_TIMEOUT' },
      { failure: 'upstream-unreachable', code: 'UND_ERR_SOCKET' },
      { failure: 'client-gone', code: expect.any(String) },
      { failure: 'client-gone', code: expect.any(String) },
    ]);
  });
});
