/**
 * A test client of the coordinator's `/v1/stream` WebSocket: parses every frame with the
 * protocol schema, keeps them in order (the frames of a `batch` message one by one), and lets a
 * test wait for a frame — no sleeps.
 */
import { type StreamFrame, StreamFrameSchema, StreamMessageSchema } from '@lease-fence/protocol';
import WebSocket from 'ws';

/** How the socket closed. */
export interface StreamClose {
  readonly code: number;
  readonly reason: string;
}

/** An open stream. */
export interface StreamClient {
  /** Every frame received so far, in order (a `batch` message's frames unpacked). */
  readonly frames: readonly StreamFrame[];
  /** WebSocket messages received so far (fewer than `frames` once a `batch` arrived). */
  readonly messages: () => number;
  /** Resolves with the first frame (received so far or later) matching `predicate`; rejects on close or after `timeoutMillis`. */
  waitFor<F extends StreamFrame>(predicate: (frame: StreamFrame) => frame is F, timeoutMillis?: number): Promise<F>;
  waitFor(predicate: (frame: StreamFrame) => boolean, timeoutMillis?: number): Promise<StreamFrame>;
  /** Resolves when the socket has closed. */
  readonly closed: Promise<StreamClose>;
  /** Stops reading from the TCP socket (the server's buffer grows), until {@link resume}. */
  pause(): void;
  resume(): void;
  close(): Promise<StreamClose>;
}

/** Options of {@link openStream}. */
export interface OpenStreamOptions {
  /** Resume after this position. Omitted = no `after` parameter (the server's default, 0). */
  readonly after?: number;
  /** Sent as `?token=`. */
  readonly token?: string;
  /** Sent as `Authorization: Bearer`. */
  readonly bearer?: string;
  /** Sent as `?batch=1`: the frames of one server turn come as one `batch` message. */
  readonly batch?: boolean;
}

/**
 * Opens the stream at `${wsUrl}/v1/stream`.
 * @throws with the HTTP status when the upgrade is refused (`unexpected-response`), e.g. "401".
 */
export function openStream(wsUrl: string, options: OpenStreamOptions = {}): Promise<StreamClient> {
  const query = new URLSearchParams();
  if (options.after !== undefined) query.set('after', String(options.after));
  if (options.token !== undefined) query.set('token', options.token);
  if (options.batch === true) query.set('batch', '1');
  const headers = options.bearer === undefined ? undefined : { authorization: `Bearer ${options.bearer}` };
  const socket = new WebSocket(`${wsUrl}/v1/stream${query.size > 0 ? `?${query}` : ''}`, { headers });
  const frames: StreamFrame[] = [];
  const watchers = new Set<(frame: StreamFrame) => void>();
  const closed = new Promise<StreamClose>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  let messages = 0;
  socket.on('message', (data) => {
    messages += 1;
    const message =
      options.batch === true
        ? StreamMessageSchema.parse(JSON.parse(String(data)))
        : StreamFrameSchema.parse(JSON.parse(String(data)));
    for (const frame of message.type === 'batch' ? message.frames : [message]) {
      frames.push(frame);
      for (const watcher of [...watchers]) watcher(frame);
    }
  });
  const waitFor = (predicate: (frame: StreamFrame) => boolean, timeoutMillis = 20_000): Promise<StreamFrame> => {
    const seen = frames.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = (): void => {
        watchers.delete(watcher);
        clearTimeout(timer);
      };
      const watcher = (frame: StreamFrame): void => {
        if (predicate(frame)) {
          done();
          resolve(frame);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`no matching frame within ${timeoutMillis} ms; last frames: ${JSON.stringify(frames.slice(-3))}`),
        );
      }, timeoutMillis);
      watchers.add(watcher);
      void closed.then((close) => {
        if (!watchers.has(watcher)) return;
        done();
        reject(
          new Error(
            `stream closed (${close.code} ${close.reason}) before a matching frame; last frames: ${JSON.stringify(frames.slice(-3))}`,
          ),
        );
      });
    });
  };
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response
        .setEncoding('utf8')
        .on('data', (chunk: string) => {
          body += chunk;
        })
        .on('end', () => {
          reject(
            Object.assign(new Error(`${response.statusCode ?? 0} ${body}`), { status: response.statusCode, body }),
          );
        });
    });
    socket.once('error', reject);
    socket.once('open', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve({
        frames,
        messages: () => messages,
        waitFor: waitFor as StreamClient['waitFor'],
        closed,
        pause: () => socket.pause(),
        resume: () => socket.resume(),
        close: () => {
          if (socket.readyState === WebSocket.CLOSED) return closed;
          socket.close();
          return closed;
        },
      });
    });
  });
}
