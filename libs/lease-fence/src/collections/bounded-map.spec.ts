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
});
