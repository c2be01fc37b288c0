import { BoundedMap } from '../collections/bounded-map.js';

/**
 * One remembered grant: who asked, with which requestId, and the lease it answered (resource and
 * fence). An acquire's entry is the grant it minted; a renewal's, the lease it renewed. @internal
 */
export interface ReplayEntry {
  readonly holderId: string;
  readonly requestId: string;
  readonly resource: string;
  readonly fence: number;
}

/** Unambiguous key: the holder id's length prefixes it, so no separator can collide. */
const keyOf = (holderId: string, requestId: string): string => `${holderId.length}:${holderId}${requestId}`;

/**
 * Most grants a cache of `capacity` buffers before it folds them in: 2 × capacity. The buffer
 * holds each grant's strings (a replay's request ids are new strings) until the fold, so it is
 * kept short enough that they die in V8's young generation: with 16 × capacity (16 384 grants,
 * about 49 000 events of a replay) they lived through two scavenges, were promoted, and a 1M-event
 * replay promoted about 86 MB that two mark-compacts then collected; with 2 × capacity 1–11 MB in
 * most runs, though about one run in four still promotes ~125 MB for a cause not yet found
 * (BENCHMARKS.md, issue 18 §2, fifth pass). The price is keying about one grant in two instead of
 * one in 16.
 */
const pendingCapacityOf = (capacity: number): number => capacity * 2;

/**
 * Remembers the last `capacity` grants of one kind (acquisitions, or renewals) by (holderId,
 * requestId), so a retried request is answered with the grant it already has instead of a
 * second fence or a second renewal. The rules are those of a {@link BoundedMap} keyed by
 * (holderId, requestId): the oldest entry is evicted first, a key remembered again becomes the
 * newest (its older entry is gone), {@link ReplayCache.values} lists each key once, oldest first.
 *
 * Two modes, the same answers:
 * - **Buffered** (from construction until the first {@link ReplayCache.get}): a replay remembers
 *   every grant of the log (a million for a long log without a snapshot) and looks none up until
 *   it ends. {@link ReplayCache.remember} only writes the four fields into parallel arrays: no key
 *   string, no hashing, no object. When the buffer is full, or something reads the cache, the
 *   buffer is folded into the map: only its newest entries that hold the last `capacity` distinct
 *   keys can survive, so only those are keyed and set (about 1 in 2 grants of a replay, each keyed once).
 * - **Direct** (after the first `get`, i.e. once live requests are answered): every remember goes
 *   straight into the map, as a lookup follows nearly every remember there.
 *
 * Hand-written rather than a library LRU because the buffered mode is the point: an LRU keys and
 * hashes on every insert.
 *
 * @see docs/design.md § "The library's rules" (Retries are idempotent)
 * @internal
 */
export class ReplayCache {
  private readonly entries: BoundedMap<string, ReplayEntry>;
  // The fields below are ES-private (`#`), so a deep equality of two tables (tests compare
  // states with `toEqual`) sees only `entries`: read both (`values()`) first to fold their buffers.
  /** Whether remembers go straight into `entries` (set by the first lookup; never cleared). */
  #direct = false;
  /** Buffered grants, oldest first, `pendingCount` of them: one array per field. */
  readonly #pendingHolderIds: string[] = [];
  readonly #pendingRequestIds: string[] = [];
  readonly #pendingResources: string[] = [];
  readonly #pendingFences: number[] = [];
  #pendingCount = 0;
  readonly #pendingCapacity: number;

  /**
   * @param capacity - Most grants kept: a non-negative safe integer (0 remembers nothing).
   * @throws TypeError / RangeError naming `capacity` when it is not a non-negative safe integer.
   */
  constructor(readonly capacity: number) {
    this.entries = new BoundedMap(capacity);
    this.#pendingCapacity = pendingCapacityOf(capacity);
  }

  /** Number of grants kept (distinct keys), at most {@link ReplayCache.capacity}. */
  get size(): number {
    this.fold();
    return this.entries.size;
  }

  /** The grant remembered for (`holderId`, `requestId`), if it is among the last `capacity`. */
  get(holderId: string, requestId: string): ReplayEntry | undefined {
    if (!this.#direct) {
      this.fold();
      this.#direct = true;
      // The buffer is never used again: let go of the strings it still holds.
      this.#pendingHolderIds.length = 0;
      this.#pendingRequestIds.length = 0;
      this.#pendingResources.length = 0;
      this.#pendingFences.length = 0;
    }
    return this.entries.get(keyOf(holderId, requestId));
  }

  /**
   * Remembers the grant of (`holderId`, `requestId`) on `resource` at `fence` as the newest entry;
   * evicts the oldest beyond capacity. Takes the fields, not an entry: buffered, it makes no object.
   */
  remember(holderId: string, requestId: string, resource: string, fence: number): void {
    if (this.#direct) {
      this.entries.set(keyOf(holderId, requestId), Object.freeze({ holderId, requestId, resource, fence }));
      return;
    }
    if (this.capacity === 0) return; // a BoundedMap of capacity 0 keeps nothing
    if (this.#pendingCount === this.#pendingCapacity) this.fold();
    const at = this.#pendingCount;
    this.#pendingHolderIds[at] = holderId;
    this.#pendingRequestIds[at] = requestId;
    this.#pendingResources[at] = resource;
    this.#pendingFences[at] = fence;
    this.#pendingCount = at + 1;
  }

  /** Each kept grant once, oldest first. */
  values(): IterableIterator<ReplayEntry> {
    this.fold();
    return this.entries.values();
  }

  /**
   * Sets the buffered grants into `entries` in order, skipping those that cannot survive: scanning
   * from the newest, once `capacity` distinct keys are seen every older buffered grant is either
   * one of those keys (set again later, so superseded) or evicted by them. The result is what
   * setting every buffered grant would give. Reads call it; a table restored from a snapshot
   * calls it once, so it is held as a table that was read.
   */
  fold(): void {
    const count = this.#pendingCount;
    if (count === 0) return;
    const holderIds = this.#pendingHolderIds;
    const requestIds = this.#pendingRequestIds;
    // The key of every buffered grant from `first` on, made once: by the scan when there is one.
    const keys: string[] = [];
    let first = 0;
    if (count > this.capacity) {
      const seen = new Set<string>();
      first = count;
      while (first > 0 && seen.size < this.capacity) {
        first -= 1;
        const key = keyOf(holderIds[first]!, requestIds[first]!);
        keys.push(key);
        seen.add(key);
      }
      keys.reverse();
    } else {
      for (let at = 0; at < count; at += 1) keys.push(keyOf(holderIds[at]!, requestIds[at]!));
    }
    for (let at = first; at < count; at += 1) {
      this.entries.set(
        keys[at - first]!,
        Object.freeze({
          holderId: holderIds[at]!,
          requestId: requestIds[at]!,
          resource: this.#pendingResources[at]!,
          fence: this.#pendingFences[at]!,
        }),
      );
    }
    this.#pendingCount = 0;
  }
}
