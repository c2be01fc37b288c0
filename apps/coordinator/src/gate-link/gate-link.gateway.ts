/**
 * The gate link WebSocket (`/v1/gates/link`): a Nest gateway on the `ws` adapter
 * (`websocket/coordinator-ws.adapter.ts`), like `/v1/stream`. Before the upgrade, its check
 * ({@link WebSocketUpgrades}) authenticates a gate token, so a bad one gets a real HTTP 401 / 403.
 * Each link is handed to {@link GateLinks}, which routes fence-first admit requests to it, and is
 * pinged each `streamPingMillis` like the agent link ({@link LinkLifecycle}): a gate that
 * stopped answering is terminated, so its fence-first admits fail over instead of waiting on a
 * dead link.
 */
import type { IncomingMessage } from 'node:http';
import { type BeforeApplicationShutdown, Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { type OnGatewayConnection, WebSocketGateway, WebSocketServer } from '@nestjs/websockets';
import { GATE_LINK_PATH } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer as WsServer } from 'ws';
import type { GatePrincipal } from '../auth/principal.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { LOGGER } from '../logging/logger.js';
import { LinkLifecycle } from '../websocket/link-lifecycle.js';
import { WebSocketUpgrades } from '../websocket/websocket-upgrades.js';
import { GateLinks } from './gate-links.js';

/** Largest frame a gate may send (bytes): a `guard` of 256 resource names fits. */
const MAX_GATE_MESSAGE_BYTES = 64 * 1024;

/** Accepts gate links, hands each to {@link GateLinks}, and pings them. */
@WebSocketGateway({ path: GATE_LINK_PATH, maxPayload: MAX_GATE_MESSAGE_BYTES, perMessageDeflate: false })
export class GateLinkGateway implements OnGatewayConnection, OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The ws server Nest created for this gateway. */
  @WebSocketServer() private readonly server!: WsServer;
  private readonly lifecycle: LinkLifecycle;

  constructor(
    upgrades: WebSocketUpgrades,
    private readonly links: GateLinks,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    upgrades.register(GATE_LINK_PATH, (request, url) =>
      upgrades.principalOf(request, url.searchParams.get('token'), 'gate'),
    );
    this.lifecycle = new LinkLifecycle({ pingIntervalMillis: config.streamPingMillis });
  }

  /** Starts the pings. */
  onApplicationBootstrap(): void {
    this.lifecycle.start();
  }

  /**
   * Stops the pings and closes every link (going away), waiting for each gate's close handshake
   * for up to `LINK_CLOSE_GRACE_MILLIS` (`../websocket/link-lifecycle.ts`), then terminating it; new upgrades are refused by
   * {@link WebSocketUpgrades}.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle.shutdown(this.server.clients);
  }

  /** A gate passed the upgrade check: attaches its link. */
  handleConnection(client: WebSocket, request: IncomingMessage, gate: GatePrincipal): void {
    const remoteAddress = request.socket.remoteAddress;
    const handle = this.links.attach({ gate, send: (frame) => client.send(JSON.stringify(frame)) });
    this.logger.info({ gateId: gate.gateId, remoteAddress }, 'gate link: connected');
    const unwatch = this.lifecycle.watch(client, () => {
      this.logger.info(
        { gateId: gate.gateId, pingIntervalMillis: this.config.streamPingMillis, remoteAddress },
        'gate link: unresponsive gate terminated (no pong)',
      );
    });
    client.on('message', (data, isBinary) => {
      if (isBinary) client.send(JSON.stringify({ type: 'error', field: '', message: 'frames must be text (JSON)' }));
      else handle.receive(data.toString());
    });
    client.on('error', () => client.terminate());
    client.once('close', () => {
      unwatch();
      handle.detach();
      this.logger.info({ gateId: gate.gateId }, 'gate link: closed');
    });
  }
}
