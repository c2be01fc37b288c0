/**
 * The one place a WebSocket upgrade is decided, for both WebSocket paths (`/v1/stream` and the
 * gate link `/v1/gates/link`). Each gateway registers what its path checks before the upgrade
 * (query, token, role); {@link WebSocketUpgrades.route} (the HTTP server's `upgrade` listener,
 * installed by `websocket/coordinator-ws.adapter.ts`) runs that check, so a bad token or query gets
 * a real HTTP reply (401 / 403 / 400 with the API's JSON body, recorded in the auth failure log)
 * and never a WebSocket. Only those two paths upgrade: another path gets 404, an upgrade during
 * shutdown 503, and an upgrade offer that is not a WebSocket (`Upgrade: h2c`) is ignored and the
 * request served as plain HTTP/1.1 by the routes ({@link serveUpgradeAsHttp}).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { WebSocketServer } from 'ws';
import { AuthFailureLog } from '../auth/auth-failure-log.js';
import { authorize } from '../auth/authorize.js';
import type { Principal, RequiredRole } from '../auth/principal.js';
import { TokenRegistry } from '../auth/token-registry.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { refuseUpgrade, refuseUpgradeWith } from '../http/refuse-upgrade.js';
import { isWebSocketUpgrade, serveUpgradeAsHttp } from '../http/serve-upgrade-as-http.js';
import { InvalidRequestError } from '../http/invalid-request.error.js';

/**
 * What a WebSocket path checks before its upgrade: returns what the gateway needs of the accepted
 * connection (its third `handleConnection` argument), or throws to refuse the upgrade
 * (`InvalidRequestError` → 400, `UnauthenticatedError` → 401, `ForbiddenError` → 403).
 */
export type UpgradeCheck = (request: IncomingMessage, url: URL) => unknown;

/** The ws server and the check of one WebSocket path. */
interface UpgradePath {
  readonly check: UpgradeCheck;
  server?: WebSocketServer;
}

/** Upgrade checks and routing of the WebSocket paths; see the module description. */
@Injectable()
export class WebSocketUpgrades implements BeforeApplicationShutdown {
  private readonly paths = new Map<string, UpgradePath>();
  private accepting = true;

  constructor(
    private readonly tokens: TokenRegistry,
    private readonly authFailures: AuthFailureLog,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Registers `path`'s check (a gateway, in its constructor).
   * @throws Error when the path already has one (two gateways on one path is a wiring bug).
   */
  register(path: string, check: UpgradeCheck): void {
    if (this.paths.has(path)) throw new Error(`WebSocketUpgrades: ${path} is registered twice`);
    this.paths.set(path, { check, ...this.paths.get(path) });
  }

  /**
   * Attaches the ws server Nest created for `path` (the adapter, when a gateway on that path
   * starts).
   * @throws Error when no gateway registered a check for `path`: a WebSocket without a check would accept anyone.
   */
  attach(path: string, server: WebSocketServer): void {
    const entry = this.paths.get(path);
    if (entry === undefined) throw new Error(`WebSocketUpgrades: the gateway on ${path} registered no upgrade check`);
    entry.server = server;
  }

  /**
   * The token of an upgrade, authenticated and authorized for `role`: the `token` query
   * parameter (browsers cannot set headers on a WebSocket) or the `Authorization: Bearer` header.
   * Both may be given only with the same token: with two, which one the link would act as is a
   * guess, so neither wins.
   * @throws UnauthenticatedError without a listed token; ForbiddenError for the wrong role;
   *   InvalidRequestError naming `token` when the query and the header carry different tokens.
   */
  principalOf(request: IncomingMessage, queryToken: string | null | undefined, role: RequiredRole): Principal {
    const header = request.headers.authorization;
    const fromQuery = queryToken === null || queryToken === undefined ? undefined : this.tokens.byToken(queryToken);
    const fromHeader =
      fromQuery === undefined || (header !== undefined && header !== '')
        ? this.tokens.byAuthorization(header)
        : undefined;
    if (fromQuery !== undefined && fromHeader !== undefined && fromQuery !== fromHeader)
      throw new InvalidRequestError([
        {
          path: 'token',
          message: 'was given twice, as ?token= and in the Authorization header, with different tokens: send one',
        },
      ]);
    const principal = (fromQuery ?? fromHeader) as Principal;
    authorize(principal, role);
    return principal;
  }

  /** Stops accepting upgrades (503 from now on); open connections are closed by their gateways. */
  beforeApplicationShutdown(): void {
    this.accepting = false;
  }

  /** The HTTP server's `upgrade` listener; see the module description. */
  route(httpServer: Server, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!isWebSocketUpgrade(request)) {
      serveUpgradeAsHttp(httpServer, request, socket, head);
      return;
    }
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'http://localhost');
    const entry = this.paths.get(url.pathname);
    if (!this.accepting) {
      refuseUpgrade(socket, 503, { error: 'closed', message: 'shutting down', retryable: true });
      return;
    }
    if (entry?.server === undefined) {
      refuseUpgrade(socket, 404, {
        error: 'not-found',
        message: `no WebSocket at ${url.pathname}; use ${[...this.paths.keys()].join(' or ')}`,
      });
      return;
    }
    let context: unknown;
    try {
      context = entry.check(request, url);
    } catch (error) {
      refuseUpgradeWith(error, {
        request,
        path: url.pathname,
        socket,
        authFailures: this.authFailures,
        maxBodyBytes: this.config.maxBodyBytes,
      });
      return;
    }
    const server = entry.server;
    server.handleUpgrade(request, socket, head, (client) => server.emit('connection', client, request, context));
  }
}
