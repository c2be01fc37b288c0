/**
 * The fenced resource of the demo: a "deploy slot" per resource, behind a small node:http API.
 * Every write carries the agent's signed grant (`lease.signedToken`), verified before the slot's
 * `FenceGate` compares its fence (floor restored from the slot's own database). Every refused
 * write is made durable in the slot's outbox (same database, one transaction with the raised
 * rejection seq) before the writer is answered 409, and the outbox is drained to the coordinator
 * with the gate token, also after the slot restarts.
 *
 * `POST /slots/:resource/deploy` `{ signedToken, step }` →
 *   200 `{ ok: true, deployment }` | 409 `{ ok: false, error: 'stale-fence' | 'double-grant', rejection }`
 *   | 403 `{ ok: false, error: 'invalid-fence-token', reason }` (not a grant of the coordinator: nothing moved)
 *   | 503 `{ ok: false, error: 'signing-keys-unavailable' }` (the coordinator's keys could not be fetched).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  gateOptionsFrom,
  InvalidFenceTokenError,
  reportRejections,
  SigningKeysUnavailableError,
  type FenceGateClient,
  type FenceTokenVerifier,
  type RejectionReporter,
} from '@lease-fence/client';
import { DoubleGrantError, FenceGate, StaleFenceError } from 'lease-fence';
import type { Logger } from '../log.js';
import type { DeployLedger } from './deploy-ledger.js';

/** Options of {@link openDeploySlotServer}. */
export interface DeploySlotServerOptions {
  /** The slots (resource names) to serve. */
  readonly resources: readonly string[];
  /** The slot's database (floors and deployments). */
  readonly ledger: DeployLedger;
  /** Where refused writes are reported (a gate token's client). */
  readonly gateClient: FenceGateClient;
  /** Checks each write's signed grant against the coordinator's published keys. */
  readonly verifier: FenceTokenVerifier;
  /** Port to listen on (127.0.0.1); 0 = any free port. */
  readonly port: number;
  readonly log: Logger;
}

/** A running deploy slot. */
export interface DeploySlotServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly gates: ReadonlyMap<string, FenceGate>;
  /** Waits until every refusal so far was acknowledged by the coordinator. */
  flushReports(): Promise<void>;
  /** Stops accepting writes and reporting. */
  close(): Promise<void>;
}

/** Starts the deploy slot: restores each gate's floor from the ledger, then listens. */
export const openDeploySlotServer = async (options: DeploySlotServerOptions): Promise<DeploySlotServer> => {
  const { ledger, log } = options;
  const gates = new Map<string, FenceGate>();
  const reporters = new Map<string, RejectionReporter>();
  for (const resource of options.resources) {
    const restored = ledger.gateState(resource);
    const gate = new FenceGate(resource, {
      ...gateOptionsFrom(restored),
      // durable before the refusal is thrown to the writer: outbox row + raised seq, one transaction
      onRejection: (rejection) => ledger.recordRefusal(rejection, Date.now()),
    });
    gates.set(resource, gate);
    reporters.set(
      resource,
      reportRejections(ledger.outbox(resource), options.gateClient, {
        onReported: (rejection) => log(resource, `reported refusal #${rejection.seq} to the coordinator (FenceRejected)`),
        onError: (error, rejection) => log(resource, `could not report refusal #${rejection.seq} yet, will retry: ${describe(error)}`),
      }),
    );
    if (restored?.floor !== undefined) {
      log(resource, `restored floor fence ${restored.floor.fence} (${restored.floor.holderId}) and next refusal #${restored.nextSeq} from the slot's database`);
    }
    const unreported = restored?.outbox ?? [];
    if (unreported.length > 0) {
      log(resource, `${unreported.length} refusal(s) waiting in the outbox (#${unreported.map((entry) => entry.seq).join(', #')}): reporting them`);
    }
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const reply = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const match = /^\/slots\/([^/]+)\/deploy$/.exec(new URL(request.url ?? '/', 'http://slot').pathname);
    let resource: string | undefined;
    try {
      resource = match === null ? undefined : decodeURIComponent(match[1] as string);
    } catch {
      return reply(400, { ok: false, error: 'invalid-request', message: 'the resource in the path is not valid percent-encoding' });
    }
    const gate = resource === undefined ? undefined : gates.get(resource);
    if (request.method !== 'POST' || resource === undefined || gate === undefined) return reply(404, { ok: false, error: 'not-found' });
    let body: { signedToken?: unknown; step?: unknown };
    try {
      body = JSON.parse(await readBody(request)) as typeof body;
    } catch {
      return reply(400, { ok: false, error: 'invalid-request', message: 'body is not JSON' });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return reply(400, { ok: false, error: 'invalid-request', message: 'expected a JSON object { signedToken: string, step: string }' });
    }
    const { signedToken, step } = body;
    if (typeof step !== 'string') return reply(400, { ok: false, error: 'invalid-request', message: 'expected { signedToken: string, step: string }' });
    let token;
    try {
      token = await options.verifier.verify(signedToken, resource);
    } catch (error) {
      if (error instanceof InvalidFenceTokenError) {
        log(resource, `REFUSED "${step}": not a grant of the coordinator (${error.reason}); the floor did not move`);
        return reply(403, { ok: false, error: error.code, reason: error.reason });
      }
      if (error instanceof SigningKeysUnavailableError) return reply(503, { ok: false, error: error.code, message: error.message });
      throw error;
    }
    const { holderId, fence } = token;
    try {
      const deployment = ledger.deploy(gate, token, step, Date.now());
      log(resource, `accepted "${step}" from ${holderId} with fence ${fence} (deployment #${deployment.id})`);
      return reply(200, { ok: true, deployment });
    } catch (error) {
      if (error instanceof StaleFenceError || error instanceof DoubleGrantError) {
        const { rejected, current, seq } = error.rejection;
        log(
          resource,
          `REFUSED "${step}": fence ${rejected.fence} (${rejected.holderId}) ${error instanceof StaleFenceError ? '<' : '='} floor ${current.fence} (${current.holderId}) — refusal #${seq}`,
        );
        return reply(409, { ok: false, error: error.code, rejection: error.rejection });
      }
      if (error instanceof RangeError || error instanceof TypeError) return reply(400, { ok: false, error: 'invalid-request', message: error.message });
      throw error;
    }
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log(undefined, `internal error: ${describe(error)}`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  log(undefined, `deploy slot listening on http://127.0.0.1:${port} (${options.resources.join(', ')})`);

  return {
    url: `http://127.0.0.1:${port}`,
    gates,
    async flushReports() {
      await Promise.all([...reporters.values()].map((reporter) => reporter.flush()));
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all([...reporters.values()].map((reporter) => reporter.close()));
    },
  };
};

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
