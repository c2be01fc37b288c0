/**
 * The demo's deploy slots as a plain upstream service: an HTTP server that records every deploy
 * step that reaches it and shows them. It checks nothing: fencing is the job of the
 * `lease-fence-gate` sidecar in front of it (one per slot, started by `../gate-process.ts`), so
 * what this server records is exactly what the gates admitted.
 *
 * - `POST /slots/:resource/deploy` `{ step, holderId?, fence? }` → 200 `{ ok: true, deployment }`
 *   (`holderId` and `fence` are what the writer says about itself, recorded for display only);
 *   400 `{ ok: false, reason: 'invalid-request', message }` for a body that is not that shape.
 * - `GET /deploys` → 200 `{ deployments }`, oldest first (the last {@link MAX_KEPT_DEPLOYMENTS}).
 *
 * Written on `node:http` rather than a framework: two routes and no dependencies keep the
 * "service you did not write" as small as the demo needs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';

/** How many recorded deployments the server keeps in memory (older ones are dropped). */
export const MAX_KEPT_DEPLOYMENTS = 1000;
/** Largest request body read, in bytes; longer bodies get 413. */
const MAX_BODY_BYTES = 16 * 1024;

/** One deploy step that reached the upstream. */
export interface Deployment {
  /** 1, 2, … in arrival order. */
  readonly id: number;
  readonly resource: string;
  readonly step: string;
  /** Who the writer said it was (unchecked here: the gate checked its signed token). */
  readonly holderId?: string;
  /** The fence the writer said it held (unchecked here). */
  readonly fence?: number;
  /** When it arrived, epoch milliseconds. */
  readonly receivedAtMillis: number;
}

/** Options of {@link openDeployRecorder}. */
export interface DeployRecorderOptions {
  /** Port on 127.0.0.1; 0 = any free port. */
  readonly port: number;
  /** Logs each recorded deploy; absent: silent. */
  readonly log?: Logger;
}

/** A running deploy recorder. */
export interface DeployRecorder {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** What reached it so far, oldest first. */
  deployments(): readonly Deployment[];
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts the recorder.
 * @throws the listen error (e.g. `EADDRINUSE`) when the port is taken.
 */
export const openDeployRecorder = async (options: DeployRecorderOptions): Promise<DeployRecorder> => {
  const kept: Deployment[] = [];
  let nextId = 1;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const reply = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const invalid = (message: string): void => reply(400, { ok: false, reason: 'invalid-request', message });
    const path = new URL(request.url ?? '/', 'http://recorder').pathname;
    if (request.method === 'GET' && path === '/deploys') return reply(200, { deployments: kept });
    const match = /^\/slots\/([^/]+)\/deploy$/.exec(path);
    if (request.method !== 'POST' || match === null) return reply(404, { ok: false, reason: 'not-found' });
    let resource: string;
    try {
      resource = decodeURIComponent(match[1] as string);
    } catch {
      return invalid('the resource in the path is not valid percent-encoding');
    }
    const text = await readBody(request);
    if (text === undefined)
      return reply(413, { ok: false, reason: 'too-large', message: `body over ${MAX_BODY_BYTES} bytes` });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return invalid('body is not JSON');
    }
    const { step, holderId, fence } = (typeof body === 'object' && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    if (typeof step !== 'string') return invalid('step must be a string');
    if (holderId !== undefined && typeof holderId !== 'string') return invalid('holderId must be a string');
    if (fence !== undefined && !Number.isSafeInteger(fence)) return invalid('fence must be an integer');
    const deployment: Deployment = {
      id: nextId,
      resource,
      step,
      ...(holderId === undefined ? {} : { holderId }),
      ...(fence === undefined ? {} : { fence: fence as number }),
      receivedAtMillis: Date.now(),
    };
    nextId += 1;
    kept.push(deployment);
    if (kept.length > MAX_KEPT_DEPLOYMENTS) kept.shift();
    options.log?.(
      resource,
      `recorded deployment #${deployment.id} "${step}"${holderId === undefined ? '' : ` from ${holderId}`}${fence === undefined ? '' : ` (fence ${String(fence)})`}`,
    );
    return reply(200, { ok: true, deployment });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deployments: () => [...kept],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/** The request body as text, or `undefined` when it is longer than {@link MAX_BODY_BYTES}. */
const readBody = async (request: IncomingMessage): Promise<string | undefined> => {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).length;
    if (length > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
};
