/**
 * The gate link WebSocket (`/v1/gates/link`): a plain `ws` server on the HTTP server's `upgrade`
 * event, like `/v1/stream` and for the same reason (the gate token is checked before the upgrade,
 * so a bad one gets a real HTTP 401/403). Each link is handed to {@link GateLinks}, which routes
 * fence-first admit requests to it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { GATE_LINK_PATH } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { AuthFailureLog } from '../auth/auth-failure-log.js';
import { authorize } from '../auth/authorize.js';
import type { GatePrincipal } from '../auth/principal.js';
import { TokenRegistry } from '../auth/token-registry.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { refuseUpgrade, refuseUpgradeWith } from '../http/refuse-upgrade.js';
import { LOGGER } from '../logging/logger.js';
import { GateLinks } from './gate-links.js';

/** Largest frame a gate may send (bytes): a `guard` of 256 resource names fits. */
const MAX_GATE_MESSAGE_BYTES = 64 * 1024;
/** WebSocket close code 1001 (going away): the coordinator shuts down. */
const CLOSE_GOING_AWAY = 1001;

/** Accepts gate links and hands each to {@link GateLinks}. */
@Injectable()
export class GateLinkGateway implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MAX_GATE_MESSAGE_BYTES, perMessageDeflate: false });
  private accepting = true;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly tokens: TokenRegistry,
    private readonly links: GateLinks,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly authFailures: AuthFailureLog,
  ) {}

  /** Attaches to the HTTP server's `upgrade` event (requests for other paths are left to their own handlers). */
  onApplicationBootstrap(): void {
    const httpServer = this.adapterHost.httpAdapter.getHttpServer() as { on(event: 'upgrade', listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void): void };
    httpServer.on('upgrade', (request, socket, head) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname === GATE_LINK_PATH) this.upgrade(request, url, socket, head);
    });
  }

  /** Stops accepting and closes every link (going away). */
  async beforeApplicationShutdown(): Promise<void> {
    this.accepting = false;
    for (const client of this.server.clients) client.close(CLOSE_GOING_AWAY, 'shutting down');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(request: IncomingMessage, url: URL, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (!this.accepting) {
      refuseUpgrade(socket, 503, { error: 'closed', message: 'shutting down', retryable: true });
      return;
    }
    let gate: GatePrincipal;
    try {
      const token = url.searchParams.get('token');
      const principal = token === null ? this.tokens.byAuthorization(request.headers.authorization) : this.tokens.byToken(token);
      authorize(principal, 'gate');
      gate = principal as GatePrincipal;
    } catch (error) {
      refuseUpgradeWith(error, { request, path: url.pathname, socket, authFailures: this.authFailures, maxBodyBytes: this.config.maxBodyBytes });
      return;
    }
    this.server.handleUpgrade(request, socket, head, (client) => {
      const handle = this.links.attach({ gate, send: (frame) => client.send(JSON.stringify(frame)) });
      this.logger.info({ gateId: gate.gateId, remoteAddress: request.socket.remoteAddress }, 'gate link: connected');
      client.on('message', (data, isBinary) => {
        if (isBinary) client.send(JSON.stringify({ type: 'error', field: '', message: 'frames must be text (JSON)' }));
        else handle.receive(data.toString());
      });
      client.on('error', () => client.terminate());
      client.once('close', () => {
        handle.detach();
        this.logger.info({ gateId: gate.gateId }, 'gate link: closed');
      });
    });
  }
}
