/**
 * The one bounded, oldest-first map of the workspace: the lease table's replay caches and the
 * coordinator's rejection idempotency keys both keep their last `capacity` entries in it.
 * Written once because its second hand-written copy once evicted nothing (it deleted by value,
 * not by key).
 */
import { requireCount } from '../validate.js';

/**
 * A `Map` that keeps at most `capacity` entries and evicts the oldest first. "Oldest" is by the
 * last {@link BoundedMap.set}: setting a key that is present makes it the newest again. O(1) per
 * operation (a JavaScript `Map` iterates in insertion order). Iteration is oldest first.
 *
 * A capacity of 0 remembers nothing: every `set` is a no-op after removing the key.
 *
 * @typeParam K - The key type (compared as a `Map` compares keys).
 * @typeParam V - The value type.
 */
export class BoundedMap<K, V> implements Iterable<[K, V]> {
  private readonly entries = new Map<K, V>();

  /**
   * @param capacity - Most entries kept: a non-negative safe integer.
   * @throws TypeError / RangeError naming `capacity` when it is not a non-negative safe integer.
   */
  constructor(readonly capacity: number) {
    requireCount('BoundedMap', 'capacity', capacity);
  }

  /** Number of entries, at most {@link BoundedMap.capacity}. */
  get size(): number {
    return this.entries.size;
  }

  /** The value of `key`, or `undefined`. Reading does not refresh an entry's age. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Whether `key` is kept. */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  /**
   * Sets `key` to `value` as the newest entry (re-inserting a present key moves it to the newest
   * place), then evicts the oldest entry if there are more than `capacity`.
   */
  set(key: K, value: V): this {
    // One lookup by `key` in the usual case (a new key): `Map.set` itself says, through the size,
    // whether the key was present. Only a present key, which `Map.set` leaves in its old place,
    // takes a second lookup to move it to the newest place. A replay remembers every grant of the
    // log through here, so the lookups by a fresh key were a measurable part of recovery.
    const entries = this.entries;
    const sizeBefore = entries.size;
    entries.set(key, value);
    if (entries.size === sizeBefore) {
      entries.delete(key);
      entries.set(key, value);
    } else if (entries.size > this.capacity) {
      // Evict by the oldest *key*: the first key in insertion order (at capacity 0, `key` itself).
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
    return this;
  }

  /** Removes `key`; `true` if it was kept. */
  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Keys, oldest first. */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  /** Values, oldest first. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  /** `[key, value]` pairs, oldest first. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries.entries();
  }

  /** A copy with the same capacity and the same entries in the same order. */
  clone(): BoundedMap<K, V> {
    const copy = new BoundedMap<K, V>(this.capacity);
    for (const [key, value] of this.entries) copy.entries.set(key, value);
    return copy;
  }
}
