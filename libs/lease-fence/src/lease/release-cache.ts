/** One remembered release: the generation (resource and fence) and the holder that released it. @internal */
export interface ReleaseEntry {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}

/**
 * Remembers the last `capacity` releases by the release's own fields, so a retried release (its
 * reply lost) is answered `ok` instead of `'expired'` (`decideRelease` in `lease-rules.ts`).
 *
 * Keyed by (resource, fence), the release's natural identity: a fence names one generation of one
 * resource, and a generation is released at most once (a release ends it; the fence counter never
 * goes back, so the fence is never granted again). So the last `capacity` releases are always
 * `capacity` distinct keys, and a bounded oldest-first map of them (`BoundedMap`'s rules) is a
 * ring buffer: {@link ReleaseCache.remember} writes three array slots, with no key string, no
 * hash and no object, which is what a replay of a long log (a third of its events releases)
 * needs. Hand-written for that reason rather than kept in a `BoundedMap`.
 * {@link ReleaseCache.get} scans from the newest: it runs only for a release the rules would deny
 * (a retry, or a late or wrong token), never on a replay.
 *
 * @see docs/design.md § "The library's rules" (Retries are idempotent)
 * @internal
 */
export class ReleaseCache {
  // ES-private (`#`) like ReplayCache's buffer: a deep equality of two tables compares
  // `toJSON()`, not these arrays, whose unused slots and start differ between equal caches.
  readonly #resources: string[] = [];
  readonly #holderIds: string[] = [];
  readonly #fences: number[] = [];
  /** The slot the next release is written to; the oldest kept release once the ring is full. */
  #next = 0;
  #count = 0;

  /** @param capacity - Most releases kept: a non-negative safe integer (0 remembers nothing). Checked by the table. */
  constructor(readonly capacity: number) {}

  /** Number of releases kept, at most {@link ReleaseCache.capacity}. */
  get size(): number {
    return this.#count;
  }

  /** Remembers that `holderId` released generation `fence` of `resource`, as the newest; forgets the oldest beyond capacity. */
  remember(resource: string, holderId: string, fence: number): void {
    if (this.capacity === 0) return;
    const at = this.#next;
    this.#resources[at] = resource;
    this.#holderIds[at] = holderId;
    this.#fences[at] = fence;
    this.#next = at + 1 === this.capacity ? 0 : at + 1;
    if (this.#count < this.capacity) this.#count += 1;
  }

  /** The holder that released generation `fence` of `resource`, if that release is among the last `capacity`. */
  get(resource: string, fence: number): string | undefined {
    let at = this.#next;
    for (let left = this.#count; left > 0; left -= 1) {
      at = at === 0 ? this.capacity - 1 : at - 1;
      if (this.#fences[at] === fence && this.#resources[at] === resource) return this.#holderIds[at];
    }
    return undefined;
  }

  /** Each kept release once, oldest first. */
  *values(): IterableIterator<ReleaseEntry> {
    let at = this.#count < this.capacity ? 0 : this.#next;
    for (let left = this.#count; left > 0; left -= 1) {
      yield { resource: this.#resources[at]!, holderId: this.#holderIds[at]!, fence: this.#fences[at]! };
      at = at + 1 === this.capacity ? 0 : at + 1;
    }
  }
}
