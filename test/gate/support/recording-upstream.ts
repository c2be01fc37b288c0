/**
 * The service behind the sidecar in the gate's black-box tests: a plain node:http server on
 * 127.0.0.1 that records every request that reaches it (method, path, headers, body) and answers
 * 200 — or, for paths under `/hang/` and `/reset/`, never answers or destroys the connection.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the upstream received it. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A running recording upstream. */
export interface RecordingUpstream {
  readonly url: string;
  /** Every request that reached it, in arrival order (recorded when its body ended). */
  readonly received: readonly ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts the upstream on an ephemeral loopback port. */
export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '/';
      received.push({
        method: request.method ?? '',
        url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      if (url.startsWith('/hang/')) return;
      if (url.startsWith('/reset/')) {
        request.socket.destroy();
        return;
      }
      response.writeHead(200, {
        'content-type': 'text/plain',
        'x-upstream': 'recording',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
      });
      response.end(`${request.method} ${url} ${Buffer.concat(chunks).length}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A proxy in front of `targetUrl` (the coordinator, or a gate) that forwards everything but holds
 * requests whose path matches `hold` unanswered (a coordinator that never acknowledges, a write
 * stalled on its way) until `release()`, which forwards them too; `close()` drops any still held.
 * Forwards the `headers` named (lower case), the method and the body.
 */
export async function startHoldingProxy(
  targetUrl: string,
  hold: RegExp,
  headers: readonly string[] = ['authorization', 'content-type'],
): Promise<{ readonly url: string; readonly held: number; release(): void; close(): Promise<void> }> {
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const holding = hold.test(path);
      if (holding) held += 1;
      void (holding ? released : Promise.resolve())
        .then(() =>
          fetch(`${targetUrl}${path}`, {
            method: request.method ?? 'GET',
            headers: Object.fromEntries(
              headers.flatMap((name) =>
                typeof request.headers[name] === 'string' ? [[name, request.headers[name]]] : [],
              ),
            ),
            ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
          }),
        )
        .then(async (reply) =>
          response
            .writeHead(reply.status, { 'content-type': reply.headers.get('content-type') ?? 'application/json' })
            .end(await reply.text()),
        )
        .catch(() => request.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return held;
    },
    release: () => release(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
