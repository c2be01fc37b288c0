/**
 * A fault-injecting HTTP proxy for SDK tests against the real coordinator: forwards each request,
 * and destroys the connection instead of replying for the next `drops` requests whose path
 * matches — after the coordinator processed them (a lost reply).
 *
 * It also proxies the agent link WebSocket (`/v1/agent`): frames are forwarded both ways, and a
 * request frame stands for the path of the HTTP route it replaces (`/v1/leases/<resource>/<op>`),
 * so the same rules apply: when the coordinator's reply to a matching frame arrives, the agent's
 * connection is dropped instead (the link dies mid-batch, after the operation was applied).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_LINK_SUBPROTOCOL } from '@lease-fence/protocol';
import WebSocket, { WebSocketServer } from 'ws';

/** A running proxy. */
export interface DropReplyProxy {
  readonly url: string;
  /** Drops the replies of the next `count` requests whose path matches `pattern`. */
  dropNext(pattern: RegExp, count?: number): void;
  /** Paths whose replies were dropped, in order. */
  readonly dropped: readonly string[];
  close(): Promise<void>;
}

/** Starts a proxy to `upstreamUrl` on 127.0.0.1, port 0. */
export const openDropReplyProxy = async (upstreamUrl: string): Promise<DropReplyProxy> => {
  const rules: { pattern: RegExp; remaining: number }[] = [];
  const dropped: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const path = request.url ?? '/';
        const reply = await fetch(`${upstreamUrl}${path}`, {
          method: request.method ?? 'GET',
          headers: Object.fromEntries(
            ['authorization', 'content-type'].flatMap((name) =>
              typeof request.headers[name] === 'string' ? [[name, request.headers[name]]] : [],
            ),
          ),
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const text = await reply.text();
        const rule = rules.find((each) => each.remaining > 0 && each.pattern.test(path));
        if (rule !== undefined) {
          rule.remaining -= 1;
          dropped.push(path);
          request.socket.destroy();
          return;
        }
        response
          .writeHead(reply.status, { 'content-type': reply.headers.get('content-type') ?? 'application/json' })
          .end(text);
      })().catch(() => request.socket.destroy());
    });
  });
  const links = new WebSocketServer({ noServer: true, handleProtocols: () => AGENT_LINK_SUBPROTOCOL });
  server.on('upgrade', (request, socket, head) => {
    const upstream = new WebSocket(
      `${upstreamUrl.replace(/^http/, 'ws')}${request.url ?? '/'}`,
      AGENT_LINK_SUBPROTOCOL,
      {
        headers: { authorization: request.headers.authorization ?? '' },
      },
    );
    upstream.on('error', () => socket.destroy());
    upstream.once('open', () =>
      links.handleUpgrade(request, socket, head, (agent) => {
        const paths = new Map<number, string>();
        agent.on('message', (data) => {
          const frame = JSON.parse(data.toString()) as { id: number; op: string; resource: string };
          paths.set(frame.id, `/v1/leases/${encodeURIComponent(frame.resource)}/${frame.op}`);
          upstream.send(data.toString());
        });
        upstream.on('message', (data) => {
          const reply = JSON.parse(data.toString()) as { id: number };
          const path = paths.get(reply.id) ?? '';
          const rule = rules.find((each) => each.remaining > 0 && each.pattern.test(path));
          if (rule === undefined) {
            agent.send(data.toString());
            return;
          }
          rule.remaining -= 1;
          dropped.push(path);
          agent.terminate();
          upstream.terminate();
        });
        agent.on('close', () => upstream.terminate());
        upstream.on('close', () => agent.terminate());
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropNext(pattern, count = 1) {
      rules.push({ pattern, remaining: count });
    },
    dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const agent of links.clients) agent.terminate();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
