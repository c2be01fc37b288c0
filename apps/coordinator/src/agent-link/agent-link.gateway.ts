/**
 * The agent link WebSocket (`/v1/agent`, subprotocol `lease-fence.agent.v1`): one long-lived
 * connection per agent carrying many lease operations at once (frames: `libs/protocol/src/agent-link.ts`).
 * A Nest gateway on the `ws` adapter (`websocket/coordinator-ws.adapter.ts`) like `/v1/stream`
 * and the gate link. Before the upgrade, its check ({@link WebSocketUpgrades}) authenticates an
 * agent token (`Authorization: Bearer`, or `?token=`) exactly as the HTTP routes do, so a bad
 * token gets a real HTTP 401 / 403, and refuses an upgrade that does not offer the subprotocol
 * (400). The authenticated agent is the holder of every operation on the connection.
 * Each connection runs one {@link AgentSession} over {@link LeaseOperations} (the HTTP routes'
 * own code) and is pinged and closed at shutdown like the gate link ({@link LinkLifecycle}).
 */
import type { IncomingMessage } from 'node:http';
import { type BeforeApplicationShutdown, Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { type OnGatewayConnection, WebSocketGateway, WebSocketServer } from '@nestjs/websockets';
import { AGENT_LINK_CLOSE_CODES, AGENT_LINK_PATH, AGENT_LINK_SUBPROTOCOL } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer as WsServer } from 'ws';
import type { AgentPrincipal } from '../auth/principal.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { decideReply } from '../http/api-exception.filter.js';
import { InvalidRequestError } from '../http/invalid-request.error.js';
import { LeaseOperations } from '../leases/lease-operations.js';
import { LOGGER } from '../logging/logger.js';
import { LinkLifecycle } from '../websocket/link-lifecycle.js';
import { WebSocketUpgrades } from '../websocket/websocket-upgrades.js';
import { AgentSession } from './agent-session.js';
import { agentSessionSocketOf } from './agent-session-socket.js';

/** Largest frame an agent may send (bytes); a larger one closes the link with 1009 (`ws`). A lease request is < 1 KiB. */
export const MAX_AGENT_FRAME_BYTES = 64 * 1024;
/** Operations in flight per connection at which the coordinator stops reading it (backpressure). */
export const AGENT_MAX_IN_FLIGHT = 256;
/** Unsent reply bytes per connection above which its reader is slow (bytes). */
export const AGENT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long a reader may stay above {@link AGENT_MAX_BUFFERED_BYTES} before it is closed with 1008 (milliseconds). */
export const AGENT_SLOW_READER_MILLIS = 5_000;

/** Accepts agent links and runs one {@link AgentSession} each. */
@WebSocketGateway({
  path: AGENT_LINK_PATH,
  maxPayload: MAX_AGENT_FRAME_BYTES,
  perMessageDeflate: false,
  // The upgrade check has made sure the subprotocol was offered: select it.
  handleProtocols: () => AGENT_LINK_SUBPROTOCOL,
})
export class AgentLinkGateway implements OnGatewayConnection, OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The ws server Nest created for this gateway. */
  @WebSocketServer() private readonly server!: WsServer;
  private readonly lifecycle: LinkLifecycle;

  constructor(
    upgrades: WebSocketUpgrades,
    private readonly operations: LeaseOperations,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    upgrades.register(AGENT_LINK_PATH, (request, url) => {
      const agent = upgrades.principalOf(request, url.searchParams.get('token'), 'agent');
      const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((name) => name.trim());
      if (!offered.includes(AGENT_LINK_SUBPROTOCOL))
        throw new InvalidRequestError([
          {
            path: 'sec-websocket-protocol',
            message: `must offer ${AGENT_LINK_SUBPROTOCOL}, got ${JSON.stringify(offered.filter(Boolean).join(', '))}`,
          },
        ]);
      return agent;
    });
    this.lifecycle = new LinkLifecycle({ pingIntervalMillis: config.streamPingMillis });
  }

  /** Starts the pings. */
  onApplicationBootstrap(): void {
    this.lifecycle.start();
  }

  /** Stops the pings and closes every link (going away); new upgrades are refused by {@link WebSocketUpgrades}. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle.shutdown(this.server.clients);
  }

  /** An agent passed the upgrade check: runs its session. */
  handleConnection(client: WebSocket, request: IncomingMessage, agent: AgentPrincipal): void {
    const { operations } = this;
    const decideOptions = { maxBodyBytes: this.config.maxBodyBytes };
    const session = new AgentSession(agentSessionSocketOf(client, request.socket), {
      operations: {
        acquire: (resource, body) => operations.acquire(resource, body, agent),
        renew: (resource, body) => operations.renew(resource, body, agent),
        release: (resource, body) => operations.release(resource, body, agent),
      },
      decide: (error) => decideReply(error, decideOptions),
      onBug: (error) => this.logger.error({ err: error, holderId: agent.holderId }, 'agent link: internal error'),
      maxInFlight: AGENT_MAX_IN_FLIGHT,
      maxBufferedBytes: AGENT_MAX_BUFFERED_BYTES,
      slowReaderMillis: AGENT_SLOW_READER_MILLIS,
      onSlowReader: (reason) =>
        this.logger.warn(
          { holderId: agent.holderId, code: AGENT_LINK_CLOSE_CODES.slowReader, reason },
          'agent link: slow reader disconnected',
        ),
    });
    // While the session does not read (backpressure) the agent's pongs cannot be heard: not judged then.
    const unwatch = this.lifecycle.watch(
      client,
      () => this.logger.info({ holderId: agent.holderId }, 'agent link: unresponsive agent terminated (no pong)'),
      () => session.paused,
    );
    client.on('message', (data, isBinary) => {
      if (isBinary) session.receiveBinary();
      else session.receive(data.toString());
    });
    client.on('error', () => client.terminate());
    client.once('close', () => {
      unwatch();
      session.closed();
    });
  }
}
