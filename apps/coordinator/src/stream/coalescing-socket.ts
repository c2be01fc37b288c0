/**
 * Coalesces the frames a stream client is sent in one turn of the event loop into one write to
 * the kernel. Without it, every frame is its own `writev` system call: with 200 viewers and a
 * group commit of a few events, that is most of the server's time (bench:stream's profile, see
 * docs/benchmarks-history.md). The first send of a turn corks the client's TCP socket; the socket is uncorked
 * on the next `setImmediate`, after every frame of that turn has been queued, or at once by
 * `close` / `terminate` (so a `closing` frame is never lost with the socket). Order, content and
 * `bufferedAmount` (the slow-consumer bound) are unchanged: corked bytes count as buffered.
 *
 * A client that asked for `batch=1` gets the frames of one turn as one WebSocket message instead:
 * `{"type":"batch","frames":[…]}` (libs/protocol/src/stream.ts `BatchFrameSchema`), spliced from the
 * frames' JSON texts as they are (no parse, no re-encoding), so its browser handles one message
 * per group commit instead of one per event.
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

/** Options of {@link coalesceWrites}. */
export interface CoalesceOptions {
  /** Send the frames of one turn as one `batch` message (the client asked for `batch=1`). @defaultValue false */
  readonly batch?: boolean;
}

/**
 * Wraps `client` so that sends made in the same turn reach `socket` (the client's underlying
 * TCP socket) as one write, and with `batch` as one message. Every send is a text frame, whether
 * given as a string or as the UTF-8 bytes of one (the fan-out's shared `Buffer`, sent as is).
 * @param client - The client's WebSocket.
 * @param socket - The socket `client` was upgraded from.
 * @param options - See {@link CoalesceOptions}.
 */
export function coalesceWrites(client: TextFrameClient, socket: Corkable, options: CoalesceOptions = {}): StreamSocket {
  if (options.batch === true) return batchWrites(client);
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

const BATCH_OPEN = Buffer.from('{"type":"batch","frames":[');
const BATCH_SEPARATOR = Buffer.from(',');
const BATCH_CLOSE = Buffer.from(']}');

/**
 * The `batch` variant of {@link coalesceWrites}: the frames of a turn are held and sent on the next
 * `setImmediate` (or at once by `close` / `terminate`) as one message, a lone frame as itself.
 * Held bytes count in `bufferedAmount`, so the slow-consumer bound and catch-up pacing see them;
 * each send's callback runs once the message holding its frame was written.
 */
function batchWrites(client: TextFrameClient): StreamSocket {
  let held: (string | Buffer)[] = [];
  let heldBytes = 0;
  let callbacks: ((error?: Error) => void)[] = [];
  const flush = (): void => {
    if (held.length === 0) return;
    const frames = held;
    const waiting = callbacks;
    held = [];
    heldBytes = 0;
    callbacks = [];
    let data: string | Buffer;
    if (frames.length === 1) data = frames[0] as string | Buffer;
    else {
      const parts: Buffer[] = [BATCH_OPEN];
      for (const [i, frame] of frames.entries()) {
        if (i > 0) parts.push(BATCH_SEPARATOR);
        parts.push(typeof frame === 'string' ? Buffer.from(frame) : frame);
      }
      parts.push(BATCH_CLOSE);
      data = Buffer.concat(parts);
    }
    client.send(
      data,
      TEXT_FRAME,
      waiting.length === 0 ? undefined : (error) => waiting.forEach((callback) => callback(error)),
    );
  };
  return {
    get bufferedAmount() {
      return client.bufferedAmount + heldBytes;
    },
    get readyState() {
      return client.readyState;
    },
    send(data, callback) {
      if (held.length === 0) setImmediate(flush);
      held.push(data);
      heldBytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      if (callback !== undefined) callbacks.push(callback);
    },
    close(code, reason) {
      flush(); // what was sent before the close goes before it
      client.close(code, reason);
    },
    terminate() {
      flush(); // terminate destroys the socket: write the frames already sent (e.g. `closing`) first
      client.terminate();
    },
  };
}
