/**
 * The `/v1/stream` WebSocket: a Nest gateway on the `ws` adapter (`websocket/coordinator-ws.adapter.ts`).
 * Before the upgrade, its check ({@link WebSocketUpgrades}) validates the query (`after`, `token`, `batch`)
 * and authenticates a viewer token, so a bad one gets a real HTTP 400 / 401; the stream is
 * server-push only, so the gateway has no message handlers.
 */
import type { IncomingMessage } from 'node:http';
import { type BeforeApplicationShutdown, Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { type OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import { type EventLog, EventLogCorruptError } from '@lease-fence/coordinator-core';
import { queryParamsOf, type StreamFrame, type StreamQuery, StreamQuerySchema } from '@lease-fence/protocol';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { OutcomeCounters } from '../coordinator/outcome-counters.js';
import { EVENT_LOG } from '../event-log/event-log.tokens.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { parseInput } from '../http/invalid-request.error.js';
import { LOGGER } from '../logging/logger.js';
import { WebSocketUpgrades } from '../websocket/websocket-upgrades.js';
import { coalesceWrites } from './coalescing-socket.js';
import { LiveFanout } from './live-fanout.js';
import { PingKeepalive } from './ping-keepalive.js';
import { RepeatLimiter } from './repeat-limiter.js';
import {
  CLOSE_GOING_AWAY,
  CLOSE_INTERNAL_ERROR,
  CLOSE_POLICY_VIOLATION,
  StreamConnection,
} from './stream-connection.js';
import { STREAM_PATH } from './stream-path.js';

/** Largest message a client may send (it has nothing to send; bytes). */
const MAX_CLIENT_MESSAGE_BYTES = 1024;
/** How long a client that was sent `closing` has to complete the close handshake (milliseconds). */
const CLOSE_GRACE_MILLIS = 5_000;
/** Frames the live fan-out keeps for clients that finish catching up (events; ≈ 300 KiB of frames). */
const FANOUT_RETAINED_EVENTS = 1024;
/** Least time between two error logs of the same damaged position by stream clients (milliseconds). */
const CORRUPT_REPEAT_LOG_MILLIS = 60_000;

/**
 * Accepts stream clients, runs one {@link StreamConnection} each, ticks `stats` and heartbeats,
 * and pings every client each `streamPingMillis`, terminating one that did not answer the
 * previous ping ({@link PingKeepalive}). Live clients share one subscription of the log
 * ({@link LiveFanout}), held while at least one client is connected.
 */
@WebSocketGateway({ path: STREAM_PATH, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false })
export class StreamGateway implements OnGatewayConnection, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly connections = new Set<StreamConnection>();
  private readonly keepalive: PingKeepalive;
  private readonly fanout: LiveFanout;
  private ticker: NodeJS.Timeout | undefined;
  private accepting = true;
  /** Every client reconnecting to a damaged record meets it again: logged once a minute per position, with the repeats. */
  private readonly corruptRepeats = new RepeatLimiter<number>({
    intervalMillis: CORRUPT_REPEAT_LOG_MILLIS,
    now: () => performance.now(),
  });

  constructor(
    upgrades: WebSocketUpgrades,
    @Inject(EVENT_LOG) private readonly log: EventLog,
    private readonly host: CoordinatorHost,
    private readonly counters: OutcomeCounters,
    private readonly metrics: CoordinatorMetrics,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    upgrades.register(STREAM_PATH, (request, url) => {
      const query = parseInput(StreamQuerySchema, queryParamsOf(url.searchParams), 'query');
      upgrades.principalOf(request, query.token, 'viewer');
      return query;
    });
    this.keepalive = new PingKeepalive({ pingIntervalMillis: config.streamPingMillis });
    this.fanout = new LiveFanout(log, {
      retainedEvents: FANOUT_RETAINED_EVENTS,
      onFailure: (error) =>
        this.logger.error(
          { err: error, position: this.fanout.position },
          'stream: live fan-out subscription failed; its clients are disconnected',
        ),
    });
  }

  /** Starts the stats ticker and the pings. */
  onApplicationBootstrap(): void {
    this.ticker = setInterval(() => this.tick(), this.config.streamStatsMillis);
    this.ticker.unref();
    this.keepalive.start();
  }

  /**
   * Sends every client `closing` (`shutdown`, with its resume position) and closes the
   * subscriptions and the fan-out; new upgrades are refused by {@link WebSocketUpgrades}, and Nest
   * closes the ws server after this.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.accepting = false;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.keepalive.stop();
    const open = [...this.connections];
    for (const connection of open) connection.disconnect('shutdown', CLOSE_GOING_AWAY);
    await Promise.all(open.map((connection) => connection.stop()));
    await this.fanout.stop();
  }

  /** A client passed the upgrade check: runs its {@link StreamConnection}. */
  handleConnection(client: WebSocket, request: IncomingMessage, query: StreamQuery): void {
    void this.accept(client, request, query.after, query.batch === '1');
  }

  private async accept(client: WebSocket, request: IncomingMessage, after: number, batch: boolean): Promise<void> {
    const { socket } = request;
    const remoteAddress = socket.remoteAddress;
    this.metrics.streamClientDelta(1);
    // The client may leave while the log version is read: the close handler must see the connection made after.
    const current: { connection?: StreamConnection; gone: boolean; releaseFanout?: () => void } = { gone: false };
    // Terminated by the keepalive, the socket closes (no handshake) and the close handler below closes the subscription.
    const unwatch = this.keepalive.watch(client, () => {
      this.metrics.unresponsiveClientTerminated();
      this.logger.info(
        {
          position: current.connection?.lastPosition ?? after,
          pingIntervalMillis: this.config.streamPingMillis,
          remoteAddress,
        },
        'stream: unresponsive client terminated (no pong)',
      );
    });
    client.once('close', () => {
      unwatch();
      current.gone = true;
      this.metrics.streamClientDelta(-1);
      if (current.connection !== undefined) {
        this.connections.delete(current.connection);
        void current.connection.stop();
      }
      current.releaseFanout?.();
    });
    client.on('error', () => client.terminate());
    client.on('message', () => client.close(CLOSE_POLICY_VIOLATION, 'this stream accepts no messages'));
    let head: number;
    try {
      head = await this.log.version();
    } catch (error) {
      this.logger.warn({ err: error }, 'stream: cannot read the log version');
      client.close(CLOSE_INTERNAL_ERROR, 'event log unavailable');
      return;
    }
    if (current.gone) return;
    if (!this.accepting) {
      client.close(CLOSE_GOING_AWAY, 'shutting down');
      return;
    }
    if (after > head) {
      const closing: StreamFrame = { type: 'closing', reason: 'after-beyond-head', position: head };
      client.send(JSON.stringify(closing));
      client.close(CLOSE_POLICY_VIOLATION, 'after is beyond the head of the log');
      return;
    }
    current.releaseFanout = this.fanout.hold();
    const connection = new StreamConnection(
      coalesceWrites(client, socket, { batch }),
      (from) => this.log.subscribe({ after: from }),
      {
        after,
        head,
        maxBufferedBytes: this.config.streamMaxBufferedBytes,
        catchUpHighWaterBytes: Math.min(64 * 1024, Math.floor(this.config.streamMaxBufferedBytes / 4)),
        closeGraceMillis: CLOSE_GRACE_MILLIS,
        now: () => performance.now(),
        fanout: this.fanout,
        onSlowConsumer: (position) => {
          this.metrics.slowConsumerDisconnected();
          this.logger.info(
            { position, maxBufferedBytes: this.config.streamMaxBufferedBytes },
            'stream: slow consumer disconnected',
          );
        },
      },
    );
    current.connection = connection;
    this.connections.add(connection);
    try {
      await connection.run();
    } catch (error) {
      // run() has already sent the client `closing` (error or event-log-corrupt) and closed it.
      const corruptPosition = error instanceof EventLogCorruptError ? error.position : undefined;
      const repeats = corruptPosition === undefined ? 0 : this.corruptRepeats.occurred(corruptPosition);
      if (repeats === undefined) return;
      this.logger.error(
        { err: error, position: connection.lastPosition, ...(repeats > 0 ? { repeatsNotLogged: repeats } : {}) },
        'stream: subscription failed',
      );
    }
  }

  /** Once per `streamStatsMillis`: a `stats` frame to every client, and a heartbeat to those idle for `streamHeartbeatMillis`. */
  private tick(): void {
    if (this.connections.size === 0) return;
    const totals = this.counters.totals();
    const stats: StreamFrame = {
      type: 'stats',
      bootId: this.host.bootId,
      wallMillis: Date.now(),
      denials: totals.denials,
      grants: totals.grants,
      renewals: totals.renewals,
      releases: totals.releases,
      rejections: totals.rejections,
    };
    for (const connection of this.connections) {
      if (connection.isLive && connection.idleMillis() >= this.config.streamHeartbeatMillis) {
        connection.send({
          type: 'heartbeat',
          position: this.host.position() ?? connection.lastPosition,
          wallMillis: Date.now(),
        });
      }
      connection.send(stats);
    }
  }
}
