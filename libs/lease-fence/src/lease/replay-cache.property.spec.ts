import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../collections/bounded-map.js';
import { ReplayCache, type ReplayEntry } from './replay-cache.js';

/**
 * The model: the cache as it was before it buffered grants — a BoundedMap keyed by
 * (holderId, requestId) whose every remember is a `set`.
 */
class ModelCache {
  private readonly entries: BoundedMap<string, ReplayEntry>;
  constructor(capacity: number) {
    this.entries = new BoundedMap(capacity);
  }
  get size(): number {
    return this.entries.size;
  }
  get(holderId: string, requestId: string): ReplayEntry | undefined {
    return this.entries.get(JSON.stringify([holderId, requestId]));
  }
  remember(holderId: string, requestId: string, resource: string, fence: number): void {
    this.entries.set(JSON.stringify([holderId, requestId]), { holderId, requestId, resource, fence });
  }
  values(): ReplayEntry[] {
    return [...this.entries.values()];
  }
}

type Command =
  | { readonly kind: 'remember'; readonly holderId: string; readonly requestId: string; readonly fence: number }
  | { readonly kind: 'get'; readonly holderId: string; readonly requestId: string }
  | { readonly kind: 'values' }
  | { readonly kind: 'size' };

// Few ids, so keys repeat; 'a'+'bc' and 'ab'+'c' would collide under a key without the length prefix.
const holderId = fc.constantFrom('a', 'ab', 'b');
const requestId = fc.constantFrom('bc', 'c', 'r1', 'r2', 'r3');
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant('remember' as const),
      holderId,
      requestId,
      fence: fc.integer({ min: 1, max: 1000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('get' as const), holderId, requestId }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'values' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'size' as const }) },
);

/** Runs `commands` on a cache and the model, comparing every answer. */
function compare(capacity: number, commands: readonly Command[]): void {
  const cache = new ReplayCache(capacity);
  const model = new ModelCache(capacity);
  for (const [step, cmd] of commands.entries()) {
    switch (cmd.kind) {
      case 'remember':
        cache.remember(cmd.holderId, cmd.requestId, `res-${cmd.fence}`, cmd.fence);
        model.remember(cmd.holderId, cmd.requestId, `res-${cmd.fence}`, cmd.fence);
        break;
      case 'get':
        expect(cache.get(cmd.holderId, cmd.requestId), `step ${step}`).toEqual(model.get(cmd.holderId, cmd.requestId));
        break;
      case 'values':
        expect([...cache.values()], `step ${step}`).toEqual(model.values());
        break;
      case 'size':
        expect(cache.size, `step ${step}`).toBe(model.size);
        break;
    }
  }
  expect([...cache.values()]).toEqual(model.values());
  expect(cache.size).toBe(model.size);
}

describe('ReplayCache', () => {
  it('answers as a BoundedMap of (holderId, requestId) on any sequence, repeated keys included', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 6 }), fc.array(command, { maxLength: 400 }), compare), {
      numRuns: 400,
    });
  });

  it('answers as the model at capacity 0 and 1 over long runs of remembers (the buffer fills and folds)', () => {
    for (const capacity of [0, 1]) {
      fc.assert(
        fc.property(fc.array(command, { minLength: 50, maxLength: 200 }), (commands) => compare(capacity, commands)),
        { numRuns: 200 },
      );
    }
  });

  it('answers as the model after long replays that look nothing up until they end (the buffer fills and is compacted)', () => {
    // A replay: remembers (and the odd `values`/`size`, which fold), every lookup after it. Holders
    // share requestIds here, so the compaction's count of distinct keys must compare holder ids.
    const replayed = fc.array(
      command.filter((cmd) => cmd.kind !== 'get'),
      { minLength: 20, maxLength: 300 },
    );
    const lookups: Command[] = ['a', 'ab', 'b'].flatMap((holder) =>
      ['bc', 'c', 'r1', 'r2', 'r3'].map((request) => ({ kind: 'get' as const, holderId: holder, requestId: request })),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), replayed, (capacity, commands) =>
        compare(capacity, [...commands, ...lookups]),
      ),
      { numRuns: 400 },
    );
  });

  it('answers as the model after long replays of many requestIds (the compaction counts them by a set when they differ)', () => {
    // Sixteen requestIds, sent by three holders: the newest `capacity` grants often have as many
    // different requestIds (the set's shortcut) and often repeat one (the count by holder), and a
    // compaction that trusted the shortcut without checking its count drops grants still answerable.
    const remember: fc.Arbitrary<Command> = fc.record({
      kind: fc.constant('remember' as const),
      holderId,
      requestId: fc.integer({ min: 0, max: 15 }).map((n) => `q${n}`),
      fence: fc.integer({ min: 1, max: 1000 }),
    });
    const lookups: Command[] = ['a', 'ab', 'b'].flatMap((holder) =>
      Array.from({ length: 16 }, (_, n) => ({ kind: 'get' as const, holderId: holder, requestId: `q${n}` })),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(remember, { minLength: 20, maxLength: 300 }),
        (capacity, commands) => compare(capacity, [...commands, ...lookups]),
      ),
      { numRuns: 400 },
    );
  });

  it('keeps a grant remembered before a long replay only while it is among the last capacity distinct keys', () => {
    const capacity = 4;
    const cache = new ReplayCache(capacity);
    cache.remember('h', 'kept', 'r', 1);
    // Many more grants than the buffer holds, all one of three keys: 'kept' stays the 4th distinct.
    for (let fence = 2; fence < 1000; fence += 1) cache.remember('h', `x${fence % 3}`, 'r', fence);
    expect(cache.get('h', 'kept')).toEqual({ holderId: 'h', requestId: 'kept', resource: 'r', fence: 1 });
    expect(cache.size).toBe(4);
    cache.remember('h', 'new', 'r', 1000);
    expect(cache.get('h', 'kept')).toBeUndefined();
    expect([...cache.values()].map((entry) => entry.requestId)).toEqual(['x1', 'x2', 'x0', 'new']);
  });
});
