/**
 * TEST DOUBLE — the storage half of the EventStoreDB / KurrentDB wire emulator. Not a database.
 *
 * An in-memory set of streams with the documented KurrentDB semantics that the lease-fence adapter
 * relies on, kept free of gRPC so it can be unit-tested on its own:
 * - stream revisions start at 0; a stream exists once it holds an event;
 * - expected revision on append: a revision, `no_stream`, `any` or `stream_exists`; a mismatch
 *   writes nothing and reports the stream's actual revision (or that it has none);
 * - idempotent retries: re-appending the same event ids right after the same expected revision
 *   succeeds without writing them twice;
 * - every stream `s` has a metadata stream `$$s` that keeps only its latest event; `$maxCount`
 *   and `$tb` (truncate-before) in that JSON hide older events of `s` from reads, while
 *   revisions keep counting from 0;
 * - a global, strictly increasing log position per event (commit = prepare).
 *
 * Not emulated: `$all`, deletes and tombstones, `$maxAge`, ACLs, projections, persistent
 * subscriptions, transaction-file byte positions.
 *
 * @see https://docs.kurrent.io/clients/node/v1.0/appending-events.html (expected revision, idempotence)
 * @see https://docs.kurrent.io/server/v25.0/features/streams.html (metadata, $maxCount, metastreams)
 */
import { EventEmitter } from 'node:events';

/** The expected state of a stream that an append is conditional on (KurrentDB `streamState`). */
export type ExpectedRevision =
  | { readonly kind: 'any' }
  | { readonly kind: 'no_stream' }
  | { readonly kind: 'stream_exists' }
  | { readonly kind: 'revision'; readonly revision: bigint };

/** One event as proposed by a client. */
export interface ProposedEvent {
  /** Client-chosen event id (UUID string); the key of idempotent retries. */
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

/** One event as stored, with the server-assigned revision, position and creation time. */
export interface StoredEvent extends ProposedEvent {
  readonly streamName: string;
  /** 0-based index within its stream. */
  readonly revision: bigint;
  /** Global, strictly increasing log position (commit and prepare positions are equal here). */
  readonly position: bigint;
  /** Server wall time of the append in .NET ticks (100 ns) since the Unix epoch, as the server sends it. */
  readonly createdTicks: bigint;
}

/** Outcome of {@link StreamStore.append}: data, like the server's `AppendResp`. */
export type AppendOutcome =
  | { readonly ok: true; readonly currentRevision: bigint | undefined; readonly position: bigint | undefined }
  | { readonly ok: false; readonly currentRevision: bigint | undefined };

/** Options of {@link StreamStore.read}. */
export interface ReadOptions {
  readonly direction: 'forwards' | 'backwards';
  /** Inclusive start revision; `'start'` / `'end'` as the server's `StreamOptions`. */
  readonly from: bigint | 'start' | 'end';
  /** Maximum number of events returned. */
  readonly maxCount: bigint;
}

const TICKS_PER_MILLISECOND = 10_000n;
const METASTREAM_PREFIX = '$$';

/**
 * The emulator's streams. Synchronous: an append and the notification of its live subscribers
 * happen in one step, so a subscriber that reads and then listens in the same tick misses nothing.
 */
export class StreamStore {
  readonly #streams = new Map<string, StoredEvent[]>();
  readonly #appended = new EventEmitter();
  #lastPosition = 0n;

  /**
   * @param wallMillis - Wall clock for the `created` stamp of events (epoch milliseconds).
   */
  constructor(private readonly wallMillis: () => number = Date.now) {
    this.#appended.setMaxListeners(0);
  }

  /** The last revision of `streamName`, or `undefined` when the stream has no event. */
  lastRevision(streamName: string): bigint | undefined {
    const events = this.#streams.get(streamName);
    return events === undefined || events.length === 0 ? undefined : BigInt(events.length - 1);
  }

  /**
   * Appends `events` atomically if the stream is in the `expected` state; otherwise writes nothing
   * and reports the actual revision. An empty `events` only checks the expected state.
   */
  append(streamName: string, expected: ExpectedRevision, events: readonly ProposedEvent[]): AppendOutcome {
    const stored = this.#streams.get(streamName) ?? [];
    const current = stored.length === 0 ? undefined : BigInt(stored.length - 1);
    const retried = this.#idempotentRetry(stored, expected, events);
    if (retried !== undefined) return retried;
    if (!matches(expected, current)) return { ok: false, currentRevision: current };
    if (events.length === 0) return { ok: true, currentRevision: current, position: undefined };
    const createdTicks = BigInt(Math.trunc(this.wallMillis())) * TICKS_PER_MILLISECOND;
    const written = events.map((event, index): StoredEvent => {
      this.#lastPosition += 1n;
      return {
        ...event,
        streamName,
        revision: BigInt(stored.length + index),
        position: this.#lastPosition,
        createdTicks,
      };
    });
    stored.push(...written);
    this.#streams.set(streamName, stored);
    for (const event of written) this.#appended.emit(streamName, event);
    return { ok: true, currentRevision: BigInt(stored.length - 1), position: this.#lastPosition };
  }

  /**
   * Reads visible events of a stream (events hidden by `$maxCount` / `$tb` are skipped).
   * @returns `undefined` when the stream does not exist (the server's `StreamNotFound`).
   */
  read(streamName: string, options: ReadOptions): StoredEvent[] | undefined {
    const events = this.#streams.get(streamName);
    if (events === undefined || events.length === 0) return undefined;
    const visible = this.#visible(streamName, events);
    const first = visible[0]?.revision ?? 0n;
    const last = events.at(-1)!.revision;
    const out: StoredEvent[] = [];
    if (options.direction === 'forwards') {
      const from = options.from === 'start' ? first : options.from === 'end' ? last + 1n : options.from;
      for (const event of visible) {
        if (BigInt(out.length) >= options.maxCount) break;
        if (event.revision >= from) out.push(event);
      }
    } else {
      const from = options.from === 'end' ? last : options.from === 'start' ? 0n : options.from;
      for (let i = visible.length - 1; i >= 0 && BigInt(out.length) < options.maxCount; i -= 1) {
        const event = visible[i]!;
        if (event.revision <= from) out.push(event);
      }
    }
    return out;
  }

  /**
   * Catch-up then live, as a stream subscription: `onEvent` receives every visible event with a
   * revision above `after` (`undefined` = from the start), first the stored ones, then each new
   * one as it is appended. Returns the function that ends the subscription.
   */
  subscribe(streamName: string, after: bigint | 'end' | undefined, onEvent: (event: StoredEvent) => void): () => void {
    const from = after === 'end' ? (this.lastRevision(streamName) ?? -1n) + 1n : after === undefined ? 0n : after + 1n;
    for (const event of this.read(streamName, {
      direction: 'forwards',
      from,
      maxCount: BigInt(Number.MAX_SAFE_INTEGER),
    }) ?? [])
      onEvent(event);
    this.#appended.on(streamName, onEvent);
    return () => {
      this.#appended.off(streamName, onEvent);
    };
  }

  #idempotentRetry(
    stored: readonly StoredEvent[],
    expected: ExpectedRevision,
    events: readonly ProposedEvent[],
  ): AppendOutcome | undefined {
    if (events.length === 0) return undefined;
    const start =
      expected.kind === 'revision' ? Number(expected.revision) + 1 : expected.kind === 'no_stream' ? 0 : undefined;
    if (start === undefined || start + events.length > stored.length) return undefined;
    const same = events.every((event, index) => stored[start + index]?.id === event.id);
    if (!same) return undefined;
    const lastWritten = stored[start + events.length - 1]!;
    return { ok: true, currentRevision: lastWritten.revision, position: lastWritten.position };
  }

  #visible(streamName: string, events: readonly StoredEvent[]): readonly StoredEvent[] {
    const metadata: Record<string, unknown> = isMetastream(streamName)
      ? { $maxCount: 1 }
      : this.#metadataOf(streamName); // metastreams keep their latest event
    const last = events.at(-1)!.revision;
    let lowest = 0n;
    if (typeof metadata['$maxCount'] === 'number' && metadata['$maxCount'] > 0)
      lowest = last + 1n - BigInt(metadata['$maxCount']);
    if (typeof metadata['$tb'] === 'number' && BigInt(metadata['$tb']) > lowest) lowest = BigInt(metadata['$tb']);
    return lowest <= 0n ? events : events.filter((event) => event.revision >= lowest);
  }

  #metadataOf(streamName: string): Record<string, unknown> {
    const latest = this.#streams.get(METASTREAM_PREFIX + streamName)?.at(-1);
    if (latest === undefined) return {};
    try {
      const parsed: unknown = JSON.parse(Buffer.from(latest.data).toString('utf8'));
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
}

function matches(expected: ExpectedRevision, current: bigint | undefined): boolean {
  switch (expected.kind) {
    case 'any':
      return true;
    case 'no_stream':
      return current === undefined;
    case 'stream_exists':
      return current !== undefined;
    case 'revision':
      return current === expected.revision;
  }
}

function isMetastream(streamName: string): boolean {
  return streamName.startsWith(METASTREAM_PREFIX);
}
