/**
 * A TCP front for failover tests: forwards every new connection to the coordinator it currently
 * points at, as an operator's load balancer does once a standby took over. Open connections can be
 * cut (`pointAt`), made silent with the socket kept open (`partitionTo`: a partition, or a frozen
 * peer whose kernel still holds the socket), or made to lose the coordinator's replies while still
 * delivering the requests (`holdReplies`). Listens on 127.0.0.1, port 0.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/** A running front; see {@link startTcpFront}. */
export interface TcpFront {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** New connections reach `url`; the open ones are cut. */
  pointAt(url: string): void;
  /**
   * Every open connection goes silent: kept open, what arrives is read and discarded, nothing is
   * forwarded either way. New ones reach `url`.
   */
  partitionTo(url: string): void;
  /** How many silenced connections their client has not closed yet. */
  readonly silencedOpen: number;
  /** On every open connection, what the client sends still reaches the coordinator; what it answers is discarded. */
  holdReplies(): void;
  close(): Promise<void>;
}

/** Starts a front forwarding to `initialUrl`. */
export async function startTcpFront(initialUrl: string): Promise<TcpFront> {
  let target = new URL(initialUrl);
  /** Forwarding connections, client side → coordinator side. */
  const open = new Map<Socket, Socket>();
  /** Silenced connections, client side → coordinator side: kept open, carrying nothing. */
  const silenced = new Map<Socket, Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    open.set(client, upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      silenced.delete(client);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', () => {
      if (!silenced.has(client)) drop();
    });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const destroyAll = (connections: Map<Socket, Socket>): void => {
    for (const [client, upstream] of connections) {
      client.destroy();
      upstream.destroy();
    }
    connections.clear();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pointAt(url) {
      target = new URL(url);
      destroyAll(open);
    },
    partitionTo(url) {
      target = new URL(url);
      for (const [client, upstream] of open) {
        for (const socket of [client, upstream]) {
          socket.unpipe();
          socket.on('data', () => undefined).resume(); // read, so a close by the client is seen
        }
        silenced.set(client, upstream);
      }
      open.clear();
    },
    get silencedOpen() {
      return silenced.size;
    },
    holdReplies() {
      for (const [client, upstream] of open) {
        upstream.unpipe(client);
        upstream.on('data', () => undefined).resume(); // read and discard, so the coordinator's writes complete
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        destroyAll(open);
        destroyAll(silenced);
        server.close(() => resolve());
      }),
  };
}
