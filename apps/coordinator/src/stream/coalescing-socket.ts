/**
 * Coalesces the frames a stream client is sent in one turn of the event loop into one write to
 * the kernel. Without it, every frame is its own `writev` system call: with 200 viewers and a
 * group commit of a few events, that is most of the server's time (bench:stream's profile, see
 * docs/benchmarks-history.md). The first send of a turn corks the client's TCP socket; the socket is uncorked
 * on the next `setImmediate`, after every frame of that turn has been queued, or at once by
 * `close` / `terminate` (so a `closing` frame is never lost with the socket). Order, content and
 * `bufferedAmount` (the slow-consumer bound) are unchanged: corked bytes count as buffered.
 */
import type { StreamSocket } from './stream-connection.js';

/** The parts of a `ws` WebSocket this uses (its documented `send(data, options, callback)`). */
export interface TextFrameClient extends Omit<StreamSocket, 'send'> {
  send(data: string | Buffer, options: { readonly binary: boolean }, callback?: (error?: Error) => void): void;
}

/** `ws` send options: a text frame even when the data is a `Buffer` (the UTF-8 bytes of a JSON frame). */
const TEXT_FRAME = { binary: false } as const;

/** The part of a `net.Socket` this uses. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Wraps `client` so that sends made in the same turn reach `socket` (the client's underlying
 * TCP socket) as one write. Every send is a text frame, whether given as a string or as the
 * UTF-8 bytes of one (the fan-out's shared `Buffer`, sent as is).
 * @param client - The client's WebSocket.
 * @param socket - The socket `client` was upgraded from.
 */
export function coalesceWrites(client: TextFrameClient, socket: Corkable): StreamSocket {
  let corked = false;
  const uncork = (): void => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  return {
    get bufferedAmount() {
      return client.bufferedAmount;
    },
    get readyState() {
      return client.readyState;
    },
    send(data, callback) {
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(uncork);
      }
      client.send(data, TEXT_FRAME, callback);
    },
    close(code, reason) {
      uncork(); // what was sent before the close must reach the kernel before it
      client.close(code, reason);
    },
    terminate() {
      uncork(); // terminate destroys the socket: flush the frames already sent (e.g. `closing`)
      client.terminate();
    },
  };
}
