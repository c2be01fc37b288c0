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
 * Remembers the last `capacity` grants of one kind (acquisitions, or renewals) by (holderId,
 * requestId), so a retried request is answered with the grant it already has instead of a
 * second fence or a second renewal. A {@link BoundedMap}: the oldest entry is evicted first.
 * O(1) per operation.
 *
 * @see docs/design.md § "The library's rules" (Retries are idempotent)
 * @internal
 */
export class ReplayCache {
  private readonly entries: BoundedMap<string, ReplayEntry>;

  constructor(readonly capacity: number) {
    this.entries = new BoundedMap(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get(holderId: string, requestId: string): ReplayEntry | undefined {
    return this.entries.get(keyOf(holderId, requestId));
  }

  /**
   * Remembers the grant of (`holderId`, `requestId`) on `resource` at `fence` as the newest entry;
   * evicts the oldest beyond capacity. Takes the fields, not an entry, so the one frozen entry it
   * keeps is the only object made (a replay remembers every grant of the log).
   */
  remember(holderId: string, requestId: string, resource: string, fence: number): void {
    this.entries.set(keyOf(holderId, requestId), Object.freeze({ holderId, requestId, resource, fence }));
  }

  /** Oldest first. */
  values(): IterableIterator<ReplayEntry> {
    return this.entries.values();
  }
}
