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
 * Most grants a cache of `capacity` buffers: 4 × capacity. When the buffer is full it is
 * compacted to the newest grants that hold its last `capacity` distinct keys (usually the last
 * `capacity` grants), so a replay's grant stays referenced for `capacity` to 4 × capacity grants
 * and is then let go, whether or not it will be answerable. A compaction scans `capacity` grants
 * (a set operation each) and makes room for 3 × capacity: a third of a set operation per grant,
 * where a 2 × capacity buffer paid one (the fold alone, `evolve` over a 1M-event log's decoded
 * events: about 30 % less CPU). Strings held through two scavenges of V8's young generation are
 * promoted and die old: folding into the map at 16 × capacity promoted about 86 MB per 1M-event
 * replay; folding at 2 × capacity (a kept grant then lived on in the map until the next fold, up to
 * 4 × capacity grants) 6 MB with a 16 MB young generation but up to 30 and 73 MB with one capped
 * at 8 and 4 MB, where compacting at 2 × capacity promoted 7 and 16 (BENCHMARKS.md, issue 18 §2,
 * sixth pass); compacting at 4 × capacity promotes 7 MB at the default young generation, as at
 * 2 ×, and more with a capped one (BENCHMARKS.md, 2026-12-03, the replay cache's compaction).
 */
const pendingCapacityOf = (capacity: number): number => capacity * 4;

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
 *   string, no hashing, no object. When the buffer is full it is compacted: the grants older than
 *   the newest ones holding `capacity` distinct keys can never be answered (evicted, or superseded
 *   by the same key later), so they are dropped, and so is everything already in the map. Only a
 *   read (or a buffer whose `capacity` newest distinct keys span more than the buffer, i.e. many
 *   repeated keys) folds the buffer into the map, keying each surviving grant once.
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
  /** Replaced (not cleared) when a compaction finds all of it superseded: see {@link ReplayCache.compact}. */
  private entries: BoundedMap<string, ReplayEntry>;
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
    if (this.#pendingCount === this.#pendingCapacity) this.compact();
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
   * Makes room in a full buffer without keying anything, when its newest grants hold `capacity`
   * distinct keys: scanning from the newest until they are found, every older buffered grant and
   * every entry of the map is either one of those keys (set again later) or evicted by them, so
   * they are dropped and the newest grants moved to the front, in order. Distinct keys are counted
   * by requestId, comparing holder ids only when a requestId repeats, so no key string is made.
   * Otherwise (many repeated keys, so nothing can be dropped) the buffer is folded into the map.
   * The answers are those of setting every buffered grant into the map ({@link ReplayCache.fold}).
   */
  private compact(): void {
    const count = this.#pendingCount;
    const first = this.firstOfDistinctRequestIds() ?? this.firstOfDistinctKeys();
    if (first === undefined) {
      // Nothing can be dropped without keying: fold (which empties the buffer).
      this.fold();
      return;
    }
    if (this.entries.size > 0) this.entries = new BoundedMap(this.capacity);
    const kept = count - first;
    this.#pendingHolderIds.copyWithin(0, first, count);
    this.#pendingRequestIds.copyWithin(0, first, count);
    this.#pendingResources.copyWithin(0, first, count);
    this.#pendingFences.copyWithin(0, first, count);
    // The slots past the kept grants are overwritten by the next remembers before they are read.
    this.#pendingCount = kept;
  }

  /**
   * {@link ReplayCache.firstOfDistinctKeys} for a buffer whose newest `capacity` grants have
   * `capacity` different requestIds (so different keys, whatever their holders): what a replay
   * nearly always finds, checked with one set of requestIds, one hash operation per grant instead
   * of a lookup and a store. `undefined` when a requestId repeats among them (a retry, or two
   * holders with the same requestId), or when the buffer holds no more than `capacity` grants:
   * then count keys.
   */
  private firstOfDistinctRequestIds(): number | undefined {
    const count = this.#pendingCount;
    if (count <= this.capacity) return undefined;
    const requestIds = this.#pendingRequestIds;
    const seen = new Set<string>();
    const first = count - this.capacity;
    for (let at = count - 1; at >= first; at -= 1) seen.add(requestIds[at]!);
    return seen.size === this.capacity ? first : undefined;
  }

  /**
   * Where the newest grants that hold `capacity` distinct keys begin in the buffer (the index of
   * the oldest of them), scanning from the newest; `undefined` when the whole buffer holds fewer
   * (or exactly its first grant completes them: nothing to drop). Distinct keys are counted by
   * requestId, comparing holder ids only when a requestId repeats, so no key string is made.
   */
  private firstOfDistinctKeys(): number | undefined {
    const count = this.#pendingCount;
    const holderIds = this.#pendingHolderIds;
    const requestIds = this.#pendingRequestIds;
    /** requestId → the holder ids seen with it (one, unless two holders used the same requestId). */
    const seen = new Map<string, string | string[]>();
    let distinct = 0;
    let first = count;
    while (first > 0 && distinct < this.capacity) {
      first -= 1;
      const holderId = holderIds[first]!;
      const requestId = requestIds[first]!;
      const holders = seen.get(requestId);
      if (holders === undefined) seen.set(requestId, holderId);
      else if (holders === holderId || (typeof holders !== 'string' && holders.includes(holderId))) continue;
      else if (typeof holders === 'string') seen.set(requestId, [holders, holderId]);
      else holders.push(holderId);
      distinct += 1;
    }
    return distinct < this.capacity || first === 0 ? undefined : first;
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
