/**
 * The fenced resource of the demo: a "deploy slot" per resource, behind a small node:http API.
 * Every write carries the agent's signed grant (`lease.signedToken`), verified before the slot's
 * `FenceGate` compares its fence (floor restored from the slot's own database). Every refused
 * write is made durable in the slot's outbox (same database, one transaction with the raised
 * rejection seq) before the writer is answered 409, and the outbox is drained to the coordinator
 * with the gate token, also after the slot restarts.
 *
 * Given the coordinator's URL and the gate token ({@link DeploySlotServerOptions.coordinator}),
 * the slot also holds the gate link open (fence-first handover: the coordinator asks it to admit
 * a new holder's fence, saved in the slot's database, before the grant becomes active), and
 * reports its floors now and then (`reportFloors`: a coordinator that lost its whole log raises
 * its fence counter above them before granting these slots again).
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
  openGateLink,
  reportFloors,
  reportRejections,
  SigningKeysUnavailableError,
  type FenceGateClient,
  type FenceTokenVerifier,
  type FloorReporter,
  type GateLink,
  type GateLinkEvent,
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
  /**
   * The coordinator to hold the gate link to and report floors to (the same gate token as
   * `gateClient`'s). Absent: neither (the slot still checks writes and reports refusals).
   */
  readonly coordinator?: {
    /** The coordinator's base URL, e.g. `http://127.0.0.1:3000`. */
    readonly baseUrl: string;
    /** A gate token covering every slot. */
    readonly token: string;
    /** Milliseconds between two rounds of floor reports. @defaultValue 5000 (`reportFloors`' default) */
    readonly floorReportEveryMillis?: number;
  };
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
        onReported: (rejection) =>
          log(resource, `reported refusal #${rejection.seq} to the coordinator (FenceRejected)`),
        onError: (error, rejection) =>
          log(resource, `could not report refusal #${rejection.seq} yet, will retry: ${describe(error)}`),
      }),
    );
    if (restored?.floor !== undefined) {
      log(
        resource,
        `restored floor fence ${restored.floor.fence} (${restored.floor.holderId}) and next refusal #${restored.nextSeq} from the slot's database`,
      );
    }
    const unreported = restored?.outbox ?? [];
    if (unreported.length > 0) {
      log(
        resource,
        `${unreported.length} refusal(s) waiting in the outbox (#${unreported.map((entry) => entry.seq).join(', #')}): reporting them`,
      );
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
      return reply(400, {
        ok: false,
        error: 'invalid-request',
        message: 'the resource in the path is not valid percent-encoding',
      });
    }
    const gate = resource === undefined ? undefined : gates.get(resource);
    if (request.method !== 'POST' || resource === undefined || gate === undefined)
      return reply(404, { ok: false, error: 'not-found' });
    let body: { signedToken?: unknown; step?: unknown };
    try {
      body = JSON.parse(await readBody(request)) as typeof body;
    } catch {
      return reply(400, { ok: false, error: 'invalid-request', message: 'body is not JSON' });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return reply(400, {
        ok: false,
        error: 'invalid-request',
        message: 'expected a JSON object { signedToken: string, step: string }',
      });
    }
    const { signedToken, step } = body;
    if (typeof step !== 'string')
      return reply(400, {
        ok: false,
        error: 'invalid-request',
        message: 'expected { signedToken: string, step: string }',
      });
    let token;
    try {
      token = await options.verifier.verify(signedToken, resource);
    } catch (error) {
      if (error instanceof InvalidFenceTokenError) {
        log(resource, `REFUSED "${step}": not a grant of the coordinator (${error.reason}); the floor did not move`);
        return reply(403, { ok: false, error: error.code, reason: error.reason });
      }
      if (error instanceof SigningKeysUnavailableError)
        return reply(503, { ok: false, error: error.code, message: error.message });
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
      if (error instanceof RangeError || error instanceof TypeError)
        return reply(400, { ok: false, error: 'invalid-request', message: error.message });
      throw error;
    }
  };

  let link: GateLink | undefined;
  let floors: FloorReporter | undefined;
  if (options.coordinator !== undefined) {
    const { baseUrl, token, floorReportEveryMillis } = options.coordinator;
    link = openGateLink({
      baseUrl,
      token,
      guards: [...gates.values()].map((gate) => ({ gate, store: ledger.floorStore(gate.resource) })),
      onEvent: logGateLinkEvent(log),
    });
    floors = reportFloors([...gates.values()], options.gateClient, {
      ...(floorReportEveryMillis === undefined ? {} : { everyMillis: floorReportEveryMillis }),
      onRaised: (resource, fenceCounter) =>
        log(
          resource,
          `reported floor ${gates.get(resource)?.floor?.fence ?? '?'}: the coordinator had lost it and raised its fence counter to ${fenceCounter}`,
        ),
      onError: (error, resource) => log(resource, `could not report the floor yet, will retry: ${describe(error)}`),
    });
  }

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
      await Promise.all([
        link?.close(),
        floors?.stop(),
        ...[...reporters.values()].map((reporter) => reporter.close()),
      ]);
    },
  };
};

/** Logs the gate link's events: connections, admitted fences and what went wrong (a reconnect loop logs once until it succeeds). */
const logGateLinkEvent = (log: Logger): ((event: GateLinkEvent) => void) => {
  let disconnected = false;
  return (event) => {
    switch (event.type) {
      case 'guarding':
        disconnected = false;
        log(
          undefined,
          `gate link open: the coordinator asks this slot to admit new fences of ${event.resources.join(', ')} before granting them`,
        );
        return;
      case 'admitted':
        log(
          event.resource,
          `admitted fence ${event.fence} (${event.holderId}) before its grant: older fences are refused from now on`,
        );
        return;
      case 'admit-failed':
        log(
          event.resource,
          `could not admit fence ${event.fence}: ${describe(event.error)} (the coordinator burns it)`,
        );
        return;
      case 'refused':
        log(undefined, `the coordinator refused a gate link frame (${event.field}): ${event.message}`);
        return;
      case 'disconnected':
        if (!disconnected) log(undefined, `gate link down; reconnecting (next try in ${event.retryInMillis} ms)`);
        disconnected = true;
        return;
    }
  };
};

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
