/**
 * The live part of `/v1/stream`, shared by every viewer at the head of the log: ONE catch-up
 * subscription reads each new event from the log once, decodes it once and serializes its frame
 * once into a `Buffer`, and that same buffer is sent to every live viewer. Before this, each
 * viewer had its own subscription, so with 200 viewers every event was read from SQLite, decoded
 * (zod) and serialized 200 times: most of the server's time in bench:stream (docs/benchmarks-history.md).
 *
 * A viewer still catches up on its own subscription, paced by its socket, and joins the fan-out
 * once its position is within the frames the fan-out retains (the last `retainedEvents`): the
 * frames between its position and the fan-out's are replayed to it from those, in the same turn,
 * so the switch neither skips nor repeats an event. A member that is ahead of the fan-out (its own
 * read saw an event the fan-out has not read yet) is simply not sent events up to its position.
 *
 * @see ./stream-connection.ts (catch-up, then this), docs/design.md § "The event-sourced coordinator"
 */
import type { EventLog, Subscription } from '@lease-fence/coordinator-core';
import { encodeEventFrame } from './event-frame.js';

/** A viewer the fan-out delivers to (a {@link StreamConnection} that joined). */
export interface LiveMember {
  /** The last position this viewer has: the fan-out delivers only the positions after it, in order. */
  readonly lastPosition: number;
  /**
   * Sends the serialized `event` frame at `position` (the same `Buffer` for every member: do not
   * modify it). Returns `false` if the member cannot take it (it was disconnected, e.g. as a slow
   * consumer); the fan-out then drops the member.
   */
  deliver(position: number, frame: Buffer): boolean;
  /**
   * The fan-out stopped delivering: `error` is why its subscription failed (e.g. a corrupt event),
   * or `undefined` when the subscription ended (the log closed) or the fan-out was stopped.
   */
  detach(error: unknown): void;
}

/** Options of {@link LiveFanout}. */
export interface LiveFanoutOptions {
  /**
   * How many of the latest frames to keep for viewers that join: a viewer whose position is at
   * most this many events behind the fan-out can join. Positive integer.
   */
  readonly retainedEvents: number;
  /** Called once each time the shared subscription fails (or the log's version cannot be read at start). */
  readonly onFailure: (error: unknown) => void;
}

/** One retained frame; `bytesThrough` is the running total of frame bytes up to and including it. */
interface Retained {
  readonly position: number;
  readonly frame: Buffer;
  readonly bytesThrough: number;
}

type State = 'stopped' | 'starting' | 'running' | 'stopping';

/**
 * One shared live subscription and the viewers it delivers to. Each connected viewer `hold`s it
 * (the first starts it from the log's version at that time, the last to let go stops it), `join`s
 * once caught up close enough, and the gateway `stop()`s it at shutdown. After a failure it is
 * stopped; the next `start()` (or `hold()`) restarts it from the log's version.
 */
export class LiveFanout {
  private readonly members = new Set<LiveMember>();
  /** Ring of the latest frames: position `p` is in slot `p % retainedEvents`. */
  private readonly retained: (Retained | undefined)[];
  private state: State = 'stopped';
  private subscription: Subscription | undefined;
  private pump: Promise<void> | undefined;
  /** Position of the last event read (the fan-out's head); meaningful once running. */
  private headPosition = 0;
  /** Lowest position still retained. */
  private oldestRetained = 1;
  private bytesSoFar = 0;
  /** Viewers that declared interest ({@link LiveFanout.hold}) and have not let go. */
  private holders = 0;

  /**
   * @param log - The log to follow (its `version` and `subscribe`).
   * @param options - See {@link LiveFanoutOptions}.
   * @throws RangeError when `options.retainedEvents` is not a positive integer.
   */
  constructor(
    private readonly log: Pick<EventLog, 'version' | 'subscribe'>,
    private readonly options: LiveFanoutOptions,
  ) {
    if (!Number.isInteger(options.retainedEvents) || options.retainedEvents < 1) {
      throw new RangeError(
        `LiveFanout: options.retainedEvents must be a positive integer number of events, got ${String(options.retainedEvents)}`,
      );
    }
    this.retained = new Array<Retained | undefined>(options.retainedEvents);
  }

  /** Whether the shared subscription is running (viewers can join). */
  get isRunning(): boolean {
    return this.state === 'running';
  }

  /** The position of the last event the fan-out read (0 before it runs). */
  get position(): number {
    return this.state === 'running' ? this.headPosition : 0;
  }

  /** Number of viewers joined. */
  get size(): number {
    return this.members.size;
  }

  /**
   * Declares one viewer's interest for as long as it is connected: the first holder starts the
   * shared subscription (see {@link LiveFanout.start}), and when the last one lets go it is
   * stopped, so an unwatched log is not read, decoded and encoded for nobody. A holder that
   * arrives while it is stopping gets it started again.
   * @returns the function that lets go (idempotent).
   */
  hold(): () => void {
    this.holders += 1;
    this.start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders -= 1;
      if (this.holders === 0) void this.stopWhileUnheld();
    };
  }

  /** Subscribes after the log's current version, unless already started. Never rejects: a failure goes to `onFailure`. */
  start(): void {
    if (this.state !== 'stopped') return;
    this.state = 'starting';
    this.pump = this.follow();
  }

  /** Ends the shared subscription and detaches every member (`detach(undefined)`). Idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopping';
    await this.subscription?.close();
    await this.pump;
  }

  /**
   * Joins `member` if the fan-out runs and retains every frame after `member.lastPosition`, and
   * sends it those frames (at most `maxReplayBytes` of them) at once. From then on the member gets
   * every later event, in order, until it leaves or `deliver` returns `false`.
   * @param member - The viewer; its `lastPosition` is read once, here.
   * @param maxReplayBytes - Largest total size of the frames to replay (bytes); more → not joined now.
   * @returns Whether it joined. `false` changes nothing: keep catching up and try again later.
   */
  join(member: LiveMember, maxReplayBytes: number): boolean {
    if (this.state !== 'running') return false;
    const after = member.lastPosition;
    if (after < this.headPosition) {
      if (after + 1 < this.oldestRetained) return false;
      const first = this.at(after + 1);
      const replayBytes = this.at(this.headPosition).bytesThrough - (first.bytesThrough - first.frame.length);
      if (replayBytes > maxReplayBytes) return false;
      for (let position = after + 1; position <= this.headPosition; position += 1) {
        if (!this.deliverTo(member, position, this.at(position).frame)) return true; // joined, and already gone
      }
    }
    this.members.add(member);
    return true;
  }

  /** Stops delivering to `member`. Idempotent. */
  leave(member: LiveMember): void {
    this.members.delete(member);
  }

  private async stopWhileUnheld(): Promise<void> {
    await this.stop();
    if (this.holders > 0) this.start();
  }

  private async follow(): Promise<void> {
    let failure: unknown;
    try {
      const version = await this.log.version();
      if (this.state !== 'starting') return;
      this.headPosition = version;
      this.oldestRetained = version + 1;
      this.retained.fill(undefined);
      this.subscription = this.log.subscribe({ after: version });
      this.state = 'running';
      for await (const recorded of this.subscription) {
        if (this.state !== 'running') break;
        this.broadcast(recorded.position, Buffer.from(encodeEventFrame(recorded)));
      }
    } catch (error) {
      failure = error;
      this.options.onFailure(error);
    } finally {
      const members = [...this.members];
      this.members.clear();
      this.subscription = undefined;
      this.state = 'stopped';
      for (const member of members) member.detach(failure);
    }
  }

  private broadcast(position: number, frame: Buffer): void {
    const capacity = this.options.retainedEvents;
    this.bytesSoFar += frame.length;
    this.retained[position % capacity] = { position, frame, bytesThrough: this.bytesSoFar };
    this.headPosition = position;
    this.oldestRetained = Math.max(this.oldestRetained, position - capacity + 1);
    for (const member of this.members) {
      if (!this.deliverTo(member, position, frame)) this.members.delete(member);
    }
  }

  /**
   * Delivers one frame to one member. A member whose `deliver` throws (a bug in that viewer) is
   * detached with the error on its own, so it cannot end the shared subscription for the others.
   * @returns whether the member is still to be delivered to.
   */
  private deliverTo(member: LiveMember, position: number, frame: Buffer): boolean {
    try {
      return member.deliver(position, frame);
    } catch (error) {
      this.members.delete(member);
      member.detach(error);
      return false;
    }
  }

  private at(position: number): Retained {
    const entry = this.retained[position % this.options.retainedEvents];
    if (entry?.position !== position) throw new Error(`LiveFanout: position ${position} is not retained (bug)`);
    return entry;
  }
}
