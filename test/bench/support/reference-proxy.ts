/**
 * The reference arm of `npm run bench:gate`: the barest reverse proxy Node does well, in a
 * process of its own. A node:http server whose every request is forwarded to `UPSTREAM_URL` with
 * an undici `Pool` (keep-alive connections, bodies streamed both ways, the reply written straight
 * into the server's response by `pool.stream`), and nothing else: no token, no floor, no
 * metrics, no error bodies. Its requests/s against the direct calls is the ceiling any HTTP
 * proxy written for Node reaches on this machine with this client; the gate is measured against it.
 *
 * Environment: `UPSTREAM_URL` (the upstream's origin), `CONNECTIONS` (the pool's size, the
 * bench's concurrency). Prints one JSON line `{ msg: 'listening', url }` once listening; SIGTERM
 * ends it normally (so `--cpu-prof` writes its profile).
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_URL ?? '');
const pool = new Pool(upstream.origin, { connections: Number(process.env.CONNECTIONS ?? '16'), pipelining: 1 });

/** The request's headers minus the hop-by-hop ones a proxy must not pass on (and `host`, which undici sets). */
function forwardedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, host: _h, ...rest } = headers;
  return rest;
}

const server = createServer((request, response) => {
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  pool.stream(
    {
      path: request.url ?? '/',
      method: request.method as 'GET',
      headers: forwardedHeaders(request.headers),
      body: hasBody ? request : null,
    },
    ({ statusCode, headers }) => {
      const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...rest } = headers;
      response.writeHead(statusCode, rest as OutgoingHttpHeaders);
      return response;
    },
    (error) => {
      if (error === null) return;
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    },
  );
});
server.keepAliveTimeout = 60_000;
process.once('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () =>
  console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
);
