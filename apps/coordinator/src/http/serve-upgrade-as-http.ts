/**
 * Serving a request that offered a protocol upgrade as the plain HTTP/1.1 request it also is.
 *
 * Node's HTTP server hands EVERY request carrying `Connection: upgrade` + `Upgrade: …` to the
 * server's `upgrade` listeners once there is one (the stream's), never to the `request` handler:
 * so `curl --http2` (which offers `Upgrade: h2c`) got the stream's "no WebSocket here" for
 * `/v1/leases`, acquire and `/healthz`. RFC 9110 § 7.8 lets a server ignore `Upgrade` and answer
 * in HTTP/1.1; Node 20 has no per-request opt-out (`shouldUpgradeCallback` came later), so the
 * request is handed back to the server: its head is rewritten without the upgrade offer, put back
 * in front of whatever of the body has arrived, and the socket is given to the server as a new
 * connection, whose HTTP parser then reads the request (body, keep-alive and all) as any other.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Hop-by-hop headers of the upgrade offer, dropped when the offer is ignored (RFC 9113 § 3.2 names HTTP2-Settings). */
const UPGRADE_OFFER_HEADERS = new Set(['upgrade', 'http2-settings']);

/**
 * Whether `request` asks for a WebSocket: `GET` with `websocket` among its `Upgrade` protocols
 * (RFC 6455 § 4.1). Any other upgrade offer (`h2c`, …) is to be ignored.
 */
export function isWebSocketUpgrade(request: IncomingMessage): boolean {
  const protocols = (request.headers.upgrade ?? '')
    .split(',')
    .map((protocol) => protocol.trim().toLowerCase().split('/', 1)[0]);
  return request.method === 'GET' && protocols.includes('websocket');
}

/**
 * Serves `request` (received on the server's `upgrade` event) as a plain HTTP/1.1 request of
 * `server`: same method, target, headers (without `Upgrade`, `HTTP2-Settings` and their
 * `Connection` tokens) and body. Call it from an `upgrade` listener instead of answering there.
 *
 * @param server - The HTTP server whose `upgrade` event delivered the request.
 * @param request - The request, as the `upgrade` event gave it (its body not read).
 * @param socket - Its socket.
 * @param head - The bytes after the request head that the server had already read (start of the body).
 */
export function serveUpgradeAsHttp(server: Server, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${request.method ?? 'GET'} ${request.url ?? '/'} HTTP/${request.httpVersion}`];
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    const lower = name.toLowerCase();
    if (UPGRADE_OFFER_HEADERS.has(lower)) continue;
    if (lower === 'connection') {
      const kept = value
        .split(',')
        .map((token) => token.trim())
        .filter(
          (token) =>
            token !== '' && token.toLowerCase() !== 'upgrade' && !UPGRADE_OFFER_HEADERS.has(token.toLowerCase()),
        );
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${value}`);
  }
  // Node's parser decoded the head as latin1; encoding it back the same way restores its bytes.
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit('connection', socket as Socket);
}
