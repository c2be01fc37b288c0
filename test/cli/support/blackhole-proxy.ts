/**
 * A TCP proxy to the coordinator that can be cut off like a network partition: after
 * `blackhole()`, open connections stop carrying bytes and new ones are accepted but never
 * answered, so requests through it time out (nothing is refused, nothing is reset).
 */
import { createServer, connect, type Socket } from 'node:net';

/** A running proxy. */
export interface BlackholeProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** From now on nothing passes, in either direction. */
  blackhole(): void;
  close(): Promise<void>;
}

/** Starts a proxy on an ephemeral loopback port to `targetUrl`'s host and port. */
export async function startBlackholeProxy(targetUrl: string): Promise<BlackholeProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const upstreams = new Set<Socket>();
  let holed = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.once('close', () => sockets.delete(client));
    if (holed) return; // accepted, never answered
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    upstreams.add(upstream);
    upstream.on('error', () => client.destroy());
    upstream.once('close', () => upstreams.delete(upstream));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy: no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    blackhole: () => {
      holed = true;
      for (const upstream of upstreams) {
        upstream.unpipe();
        upstream.removeAllListeners('error');
        upstream.on('error', () => undefined);
        upstream.destroy();
      }
      for (const client of sockets) client.unpipe();
    },
    close: async () => {
      for (const socket of [...sockets, ...upstreams]) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
