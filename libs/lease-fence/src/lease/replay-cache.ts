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
 * Remembers the last `capacity` grants of one kind (acquisitions, or renewals) by (holderId,
 * requestId), so a retried request is answered with the grant it already has instead of a
 * second fence or a second renewal. Insertion-ordered (a Map): the oldest entry is evicted
 * first. O(1) per operation.
 *
 * @see docs/design.md § "The library's rules" (Retries are idempotent)
 * @internal
 */
export class ReplayCache {
  private readonly entries = new Map<string, ReplayEntry>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(holderId: string, requestId: string): ReplayEntry | undefined {
    return this.entries.get(keyOf(holderId, requestId));
  }

  /** Remembers `entry` as the newest; evicts the oldest beyond capacity. */
  remember(entry: ReplayEntry): void {
    const key = keyOf(entry.holderId, entry.requestId);
    this.entries.delete(key);
    if (this.capacity === 0) return;
    this.entries.set(key, Object.freeze({ ...entry }));
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  /** Oldest first. */
  values(): IterableIterator<ReplayEntry> {
    return this.entries.values();
  }
}
