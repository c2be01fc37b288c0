/**
 * One agent link connection (`/v1/agent`), without the framework: reads request frames, runs
 * each through the same lease operations the HTTP routes call, and writes each reply once its
 * outcome is durable (the coordinator resolves only after the batch's append), in completion
 * order, tagged with the frame's id. Bad frames are answered with a 400 naming the field and run
 * nothing.
 *
 * Backpressure, both ways, with bounded memory:
 * - a sender faster than the log: at {@link AgentSessionOptions.maxInFlight} operations in
 *   flight the session stops reading the socket (`pause`), so TCP slows the sender; it resumes
 *   when replies bring the count below the bound. Frames already read from the socket when it
 *   paused (at most one socket read, 64 KiB) are still run, so the bound can be exceeded by that.
 * - a slow reader: when the socket's unsent replies (`bufferedAmount`) exceed
 *   {@link AgentSessionOptions.maxBufferedBytes}, the session stops reading too; if they are still
 *   above it after {@link AgentSessionOptions.slowReaderMillis}, the connection is closed with
 *   1008 and a reason ({@link AgentSessionOptions.onSlowReader} is told). The socket is read
 *   again so the peer's close reply can arrive (frames after the close are ignored), and a peer
 *   that has not completed the close after {@link AgentSessionOptions.closeGraceMillis} is
 *   terminated: one that does not read never will, and `ws` would otherwise hold it 30 s.
 *   Operations already in flight still complete in the coordinator; their replies are lost with
 *   the connection and the SDK resends them with the same requestId.
 *
 * One write per turn: the replies of one group commit all resolve in the same turn, so the first
 * reply of a turn corks the socket and the end of the turn (`process.nextTick`, after the turn's
 * promise callbacks) uncorks it, and the turn's replies reach the kernel in one `writev` instead of
 * one each. No reply waits for another operation: each is sent in the turn its outcome became
 * durable, as before. Held bytes count in `bufferedAmount` (Node's writable length), so the
 * slow-reader check sees them.
 */
import { AGENT_LINK_CLOSE_CODES, AgentRequestEnvelopeSchema, type AgentOp } from '@lease-fence/protocol';
import type { DecidedReply } from '../http/api-exception.filter.js';
import { InvalidRequestError, safeParseInput, toInputIssues } from '../http/invalid-request.error.js';

/** WebSocket `readyState` OPEN. */
const OPEN = 1;

/** The parts of a `ws` WebSocket the session uses. */
export interface AgentSessionSocket {
  readonly readyState: number;
  /** Bytes queued for sending, not yet written to the kernel. */
  readonly bufferedAmount: number;
  send(text: string): void;
  /** Stops reading from the socket (TCP then slows the sender). */
  pause(): void;
  resume(): void;
  close(code: number, reason: string): void;
  /** Destroys the connection without a close handshake. */
  terminate(): void;
  /**
   * Holds further writes in the connection's buffer (Node's `Writable.cork` on the TCP socket), still
   * counted in `bufferedAmount`, until the matching {@link AgentSessionSocket.uncork}. Nested calls
   * are counted (ws corks around each frame too).
   */
  cork(): void;
  /** Undoes one {@link AgentSessionSocket.cork}; the outermost writes everything held in one system call. */
  uncork(): void;
}

/** Runs one operation; the same functions the HTTP lease routes call (`leases/lease-operations.ts`). */
export type AgentOperation = (resource: string, body: unknown) => Promise<unknown>;

/** Options of {@link AgentSession}. */
export interface AgentSessionOptions {
  /** The operations, bound to the connection's authenticated agent. */
  readonly operations: Readonly<Record<AgentOp, AgentOperation>>;
  /** The one error mapping (`decideReply`): any thrown value → status and body. */
  readonly decide: (error: unknown) => DecidedReply;
  /** Called with a thrown value the mapping calls a bug (answered 500). */
  readonly onBug: (error: unknown) => void;
  /** Operations in flight at which the session stops reading (a positive integer). */
  readonly maxInFlight: number;
  /** Unsent reply bytes above which the reader is slow (bytes). */
  readonly maxBufferedBytes: number;
  /** How long a reader may stay above `maxBufferedBytes` before it is disconnected (milliseconds). */
  readonly slowReaderMillis: number;
  /** How often a paused slow reader's buffer is checked (milliseconds). @defaultValue 50 */
  readonly drainCheckMillis?: number;
  /** Called once when the session closes a slow reader, with the close reason (for the log). */
  readonly onSlowReader?: (reason: string) => void;
  /**
   * How long a slow reader closed with 1008 has to complete the close handshake before it is
   * terminated (milliseconds). @defaultValue {@link SLOW_READER_CLOSE_GRACE_MILLIS}
   */
  readonly closeGraceMillis?: number;
}

/** Default {@link AgentSessionOptions.closeGraceMillis}: a reader already had `slowReaderMillis` to catch up. */
export const SLOW_READER_CLOSE_GRACE_MILLIS = 1_000;

/** See the module description. */
export class AgentSession {
  /**
   * Ids of the operations in flight (their count is the in-flight count): a second frame with one
   * of them is refused, as its reply could not be told apart.
   */
  readonly #idsInFlight = new Set<number>();
  #paused = false;
  #drainTimer: NodeJS.Timeout | undefined;
  #congestedSinceMillis = 0;
  #closed = false;
  /** Terminates a slow reader that has not completed the close handshake; cleared when the connection closes. */
  #terminateTimer: NodeJS.Timeout | undefined;
  /** Whether this turn's replies are being held, to be written in one go when the turn ends. */
  #corked = false;
  readonly #uncorkAtTurnEnd = (): void => {
    this.#corked = false;
    this.socket.uncork();
  };

  constructor(
    private readonly socket: AgentSessionSocket,
    private readonly options: AgentSessionOptions,
  ) {}

  /** Operations received and not yet answered. */
  get inFlight(): number {
    return this.#idsInFlight.size;
  }

  /** Whether the session has stopped reading the socket (backpressure). */
  get paused(): boolean {
    return this.#paused;
  }

  /** A binary message: refused with 400 naming the frame. */
  receiveBinary(): void {
    if (this.#closed) return;
    this.#refuse(null, new InvalidRequestError([{ path: 'frame', message: 'must be a text message (JSON)' }]));
  }

  /** One text message from the agent; ignored once the session is closed (nothing is run that could not be answered). */
  receive(text: string): void {
    if (this.#closed) return;
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch (error) {
      this.#refuse(
        null,
        new InvalidRequestError([{ path: 'frame', message: `malformed JSON: ${(error as Error).message}` }]),
      );
      return;
    }
    const parsed = safeParseInput(AgentRequestEnvelopeSchema, frame);
    if (!parsed.success) {
      const id = readableId(frame);
      // An id in flight is not this frame's to answer under: its operation's reply is still to come.
      this.#refuse(
        id === null || this.#idsInFlight.has(id) ? null : id,
        new InvalidRequestError(toInputIssues(parsed.error.issues, 'frame', frame)),
      );
      return;
    }
    const { id, op, resource, body } = parsed.data;
    if (this.#idsInFlight.has(id)) {
      // Answered with id null: under id 7, the refusal would be taken for the reply of the
      // operation 7 still in flight, and that operation's own reply would then be dropped.
      this.#refuse(
        null,
        new InvalidRequestError([
          { path: 'frame.id', message: `${id} is already in flight on this connection: use a new id per operation` },
        ]),
      );
      return;
    }
    this.#idsInFlight.add(id);
    if (this.#idsInFlight.size >= this.options.maxInFlight) this.#pause();
    this.options.operations[op](resource, body).then(
      (reply) => this.#answer(id, 200, reply),
      (error: unknown) => {
        const decided = this.options.decide(error);
        if (decided.isBug === true) this.options.onBug(error);
        this.#answer(id, decided.status, decided.body);
      },
    );
  }

  /** The connection closed: stops the drain check; replies still to come are dropped. */
  closed(): void {
    this.#stop();
    clearTimeout(this.#terminateTimer);
    this.#terminateTimer = undefined;
  }

  #stop(): void {
    this.#closed = true;
    if (this.#drainTimer !== undefined) clearInterval(this.#drainTimer);
    this.#drainTimer = undefined;
  }

  #answer(id: number, status: number, body: unknown): void {
    this.#idsInFlight.delete(id);
    this.#send(id, status, body);
    if (this.#paused && this.#drainTimer === undefined && this.#idsInFlight.size < this.options.maxInFlight)
      this.#resume();
  }

  #refuse(id: number | null, error: InvalidRequestError): void {
    const decided = this.options.decide(error);
    this.#send(id, decided.status, decided.body);
  }

  #send(id: number | null, status: number, body: unknown): void {
    if (this.#closed || this.socket.readyState !== OPEN) return;
    if (!this.#corked) {
      this.#corked = true;
      this.socket.cork();
      process.nextTick(this.#uncorkAtTurnEnd);
    }
    this.socket.send(JSON.stringify({ id, status, body }));
    if (this.socket.bufferedAmount > this.options.maxBufferedBytes && this.#drainTimer === undefined)
      this.#watchSlowReader();
  }

  /** The reader fell behind: stop reading until its buffer drains, or disconnect it after `slowReaderMillis`. */
  #watchSlowReader(): void {
    this.#pause();
    this.#congestedSinceMillis = performance.now();
    this.#drainTimer = setInterval(() => {
      if (this.socket.bufferedAmount <= this.options.maxBufferedBytes) {
        clearInterval(this.#drainTimer);
        this.#drainTimer = undefined;
        if (this.#idsInFlight.size < this.options.maxInFlight) this.#resume();
      } else if (performance.now() - this.#congestedSinceMillis >= this.options.slowReaderMillis) {
        this.#closeSlowReader();
      }
    }, this.options.drainCheckMillis ?? 50);
  }

  #closeSlowReader(): void {
    const reason = `slow reader: more than ${this.options.maxBufferedBytes} bytes of replies unread for ${this.options.slowReaderMillis} ms`;
    this.#stop();
    this.options.onSlowReader?.(reason);
    this.socket.close(AGENT_LINK_CLOSE_CODES.slowReader, reason);
    // Read again, so the peer's close reply is seen; its other frames are ignored (#closed).
    this.#paused = false;
    this.socket.resume();
    this.#terminateTimer = setTimeout(
      () => this.socket.terminate(),
      this.options.closeGraceMillis ?? SLOW_READER_CLOSE_GRACE_MILLIS,
    );
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.socket.pause();
  }

  #resume(): void {
    this.#paused = false;
    if (!this.#closed) this.socket.resume();
  }
}

/** The `id` of a frame whose envelope failed, when it is itself valid; else `null`. */
const readableId = (frame: unknown): number | null => {
  if (typeof frame !== 'object' || frame === null || !('id' in frame)) return null;
  const { id } = frame;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : null;
};
