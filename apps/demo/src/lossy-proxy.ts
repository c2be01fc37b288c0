/**
 * A fault-injecting HTTP proxy between the demo's agents and the coordinator: it forwards every
 * request, and for a fraction of the lease requests it throws the reply away AFTER the
 * coordinator processed it (the socket is destroyed). The agent sees a lost reply and retries
 * with the same requestId; the coordinator answers with the grant it already made.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.js';

/** Options of {@link openLossyProxy}. */
export interface LossyProxyOptions {
  /** The coordinator's base URL. */
  readonly upstreamUrl: string;
  /** Decides, per lease request, whether to drop its reply. */
  readonly shouldDrop: (request: { readonly method: string; readonly path: string }) => boolean;
  readonly log: Logger;
}

/** A running proxy. */
export interface LossyProxy {
  /** `http://127.0.0.1:<port>`: give it to the agents as the coordinator's URL. */
  readonly url: string;
  /** Replies dropped so far. */
  readonly dropped: number;
  close(): Promise<void>;
}

const LEASE_PATH = /^\/v1\/leases\/([^/]+)\/(acquire|renew|release)$/;

/** Starts the proxy on 127.0.0.1, any free port. */
export const openLossyProxy = async (options: LossyProxyOptions): Promise<LossyProxy> => {
  const upstream = options.upstreamUrl.replace(/\/+$/, '');
  let dropped = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const path = request.url ?? '/';
      const body = await readBody(request);
      let reply: Response;
      try {
        reply = await fetch(`${upstream}${path}`, {
          method: request.method ?? 'GET',
          headers: forwardedHeaders(request),
          ...(body.length > 0 ? { body } : {}),
        });
      } catch (error) {
        response
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'bad-gateway', message: String(error) }));
        return;
      }
      const text = await reply.text();
      const lease = LEASE_PATH.exec(path.split('?')[0] ?? '');
      if (lease !== null && options.shouldDrop({ method: request.method ?? 'GET', path })) {
        dropped += 1;
        options.log(
          decodeURIComponent(lease[1] as string),
          `proxy dropped the coordinator's ${reply.status} reply to the ${lease[2]} request (it was processed; the agent will retry)`,
        );
        request.socket.destroy();
        return;
      }
      response
        .writeHead(reply.status, { 'content-type': reply.headers.get('content-type') ?? 'application/json' })
        .end(text);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(502).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

const forwardedHeaders = (request: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const name of ['authorization', 'content-type', 'accept']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
};

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
