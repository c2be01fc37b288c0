/**
 * TEST DOUBLE support — a loopback TCP relay in front of the emulator's gRPC port, so a test can
 * cut the network without losing the emulator's streams:
 * - `suspend()` drops every open connection and resets new ones (clients fail fast with
 *   UNAVAILABLE instead of waiting for a deadline);
 * - `stall()` keeps every connection up but stops relaying bytes, and holds new connections
 *   without answering (a server that stopped answering, or a partition TCP has not noticed);
 * - `resume()` lets traffic through again: stalled connections carry on where they stopped.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running relay: `port` is where clients connect. */
export interface ConnectionGate {
  readonly port: number;
  /** Drops open connections and resets new ones until {@link ConnectionGate.resume}. */
  suspend(): void;
  /** Stops relaying bytes on open connections and holds new ones until {@link ConnectionGate.resume}. */
  stall(): void;
  /** Lets connections through again (stalled ones continue). */
  resume(): void;
  /** Closes the listener and every relayed connection. */
  close(): Promise<void>;
}

/** One client connection and, once relayed, its upstream connection. */
interface Relay {
  readonly client: Socket;
  upstream: Socket | undefined;
}

type Mode = 'open' | 'suspended' | 'stalled';

/**
 * Opens a relay on 127.0.0.1, port 0, to `127.0.0.1:upstreamPort`.
 * @throws the listen error, if 127.0.0.1 cannot be bound.
 */
export async function openConnectionGate(upstreamPort: number): Promise<ConnectionGate> {
  const relays = new Set<Relay>();
  let mode: Mode = 'open';

  const settle = (socket: Socket): void => {
    socket.setNoDelay(true); // a relay must not add Nagle delays to gRPC's small frames
    socket.on('error', () => socket.destroy());
  };
  const connectUpstream = (relay: Relay): void => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    settle(upstream);
    relay.upstream = upstream;
    relay.client.pipe(upstream);
    upstream.pipe(relay.client);
    upstream.on('close', () => relay.client.destroy());
    relay.client.resume();
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    settle(client);
    const relay: Relay = { client, upstream: undefined };
    relays.add(relay);
    client.on('close', () => {
      relays.delete(relay);
      relay.upstream?.destroy();
    });
    if (mode === 'suspended') client.resetAndDestroy();
    else if (mode === 'open') connectUpstream(relay);
    // stalled: held, paused, until resume()
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('connection gate: no TCP address after listen');
  return {
    port: address.port,
    suspend() {
      mode = 'suspended';
      for (const relay of relays) {
        relay.client.resetAndDestroy();
        relay.upstream?.destroy();
      }
    },
    stall() {
      mode = 'stalled';
      for (const relay of relays) {
        if (relay.upstream === undefined) continue;
        // Unpipe before pausing, so a pending 'drain' cannot restart the flow; buffered bytes stay buffered.
        relay.client.unpipe(relay.upstream);
        relay.upstream.unpipe(relay.client);
        relay.client.pause();
        relay.upstream.pause();
      }
    },
    resume() {
      mode = 'open';
      for (const relay of relays) {
        if (relay.upstream === undefined) {
          connectUpstream(relay);
        } else if (relay.client.isPaused()) {
          relay.client.pipe(relay.upstream);
          relay.upstream.pipe(relay.client);
        }
      }
    },
    async close() {
      for (const relay of relays) {
        relay.client.destroy();
        relay.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
