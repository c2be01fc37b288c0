import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

const filled = (capacity: number, keys: readonly string[]): BoundedMap<string, number> => {
  const map = new BoundedMap<string, number>(capacity);
  keys.forEach((key, index) => map.set(key, index));
  return map;
};

describe('BoundedMap', () => {
  it('keeps at most capacity entries, evicting the oldest first', () => {
    const map = filled(3, ['a', 'b', 'c', 'd', 'e']);

    expect(map.size).toBe(3);
    expect([...map]).toEqual([
      ['c', 2],
      ['d', 3],
      ['e', 4],
    ]);
    expect(map.has('a')).toBe(false);
    expect(map.get('b')).toBeUndefined();
  });

  it('makes a re-inserted key the newest, so it outlives entries set after its first insertion', () => {
    const map = filled(3, ['a', 'b', 'c']);

    map.set('a', 10);
    map.set('d', 11);

    expect([...map.keys()]).toEqual(['c', 'a', 'd']);
    expect(map.get('a')).toBe(10);
  });

  it('does not refresh an entry when it is only read', () => {
    const map = filled(2, ['a', 'b']);

    map.get('a');
    map.set('c', 2);

    expect([...map.keys()]).toEqual(['b', 'c']);
  });

  it('remembers nothing at capacity 0, and forgets a deleted key', () => {
    const empty = filled(0, ['a']);
    const map = filled(2, ['a', 'b']);

    expect(map.delete('a')).toBe(true);
    expect(map.delete('a')).toBe(false);

    expect(empty.size).toBe(0);
    expect([...map.values()]).toEqual([1]);
  });

  it('clones into an independent map with the same capacity and order', () => {
    const map = filled(2, ['a', 'b']);

    const copy = map.clone();
    copy.set('c', 2);

    expect([...map.keys()]).toEqual(['a', 'b']);
    expect([...copy.keys()]).toEqual(['b', 'c']);
    expect(copy.capacity).toBe(2);
  });

  it.each([-1, 1.5, Number.NaN, '3'])('refuses capacity %s, naming the field', (capacity) => {
    expect(() => new BoundedMap(capacity as number)).toThrow(
      /BoundedMap: capacity must be a non-negative safe integer/,
    );
  });

  it('keeps the last capacity keys set, oldest first, for any sequence of sets and deletes (against a list model)', () => {
    const operation = fc.record({
      remove: fc.boolean(),
      key: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      value: fc.nat(),
    });
    fc.assert(
      fc.property(fc.nat({ max: 4 }), fc.array(operation, { maxLength: 40 }), (capacity, operations) => {
        const map = new BoundedMap<string, number>(capacity);
        // The model: [key, value] pairs, oldest first; a set moves its key to the end.
        let model: [string, number][] = [];
        for (const { remove, key, value } of operations) {
          model = model.filter(([kept]) => kept !== key);
          if (remove) map.delete(key);
          else {
            map.set(key, value);
            model.push([key, value]);
            if (model.length > capacity) model.shift();
          }
        }
        expect([...map]).toEqual(model);
        expect(map.size).toBe(model.length);
      }),
      { seed: 18 },
    );
  });
});
