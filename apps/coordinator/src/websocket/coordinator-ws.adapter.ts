/**
 * The WebSocket adapter of the coordinator: `@nestjs/platform-ws`'s `WsAdapter` (the `ws` package),
 * with its upgrade routing replaced by {@link WebSocketUpgrades.route}. The stock adapter upgrades
 * any request on a gateway's path without an HTTP answer for a refused one, and destroys the
 * socket of every other upgrade (which would break `curl --http2` on every route, and give no
 * 404 / 503); a `verifyClient` option could only answer a bare status line, not the API's JSON
 * error naming what is wrong, and gateway options are static, out of reach of the token registry.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { MessageMappingProperties } from '@nestjs/websockets';
import type { Observable } from 'rxjs';
import { WebSocketServer, type ServerOptions } from 'ws';
import type { WebSocketUpgrades } from './websocket-upgrades.js';

/** What a gateway's `@WebSocketGateway` options give the adapter. */
type GatewayOptions = ServerOptions & { readonly path?: string; readonly namespace?: string };

/** `WsAdapter` whose gateways share the HTTP server's port, upgraded through {@link WebSocketUpgrades}. */
export class CoordinatorWsAdapter extends WsAdapter {
  private upgradeListener: ((request: IncomingMessage, socket: Duplex, head: Buffer) => void) | undefined;

  /**
   * @param app - The application (its HTTP server carries the WebSockets).
   * @param upgrades - The upgrade checks the gateways registered.
   */
  constructor(
    app: INestApplicationContext,
    private readonly upgrades: WebSocketUpgrades,
  ) {
    super(app);
  }

  /**
   * Creates the ws server of a gateway on the HTTP server's port (`port` 0, `path` required) and
   * attaches it to its path's check.
   * @throws Error for another port or no path: every WebSocket of the coordinator is on its HTTP port.
   */
  override create(port: number, options: GatewayOptions = {}): WebSocketServer {
    const { path, namespace: _namespace, server: _server, ...wsOptions } = options;
    if (port !== 0 || path === undefined)
      throw new Error('CoordinatorWsAdapter: a gateway needs port 0 (the HTTP server) and a path');
    const httpServer = this.httpServer as Server;
    if (this.upgradeListener === undefined) {
      this.upgradeListener = (request, socket, head) => this.upgrades.route(httpServer, request, socket, head);
      httpServer.on('upgrade', this.upgradeListener);
    }
    const server = new WebSocketServer({ ...wsOptions, noServer: true });
    this.upgrades.attach(path, server);
    return server;
  }

  /**
   * Binds `@SubscribeMessage` handlers, only when a gateway has some. None of ours does (each
   * reads its own frames, checked with the protocol's schemas), and the stock adapter would
   * otherwise JSON-parse every message a second time through an rxjs pipeline, for nothing: on
   * the agent link that is a cost per lease operation.
   */
  override bindMessageHandlers(
    client: unknown,
    handlers: MessageMappingProperties[],
    transform: (data: unknown) => Observable<unknown>,
  ): void {
    if (handlers.length > 0) super.bindMessageHandlers(client, handlers, transform);
  }

  /** Removes the upgrade listener (after Nest closed the gateways' servers). */
  override async dispose(): Promise<void> {
    if (this.upgradeListener !== undefined) (this.httpServer as Server).off('upgrade', this.upgradeListener);
    this.upgradeListener = undefined;
    await super.dispose();
  }
}
