/**
 * A value sampled when a key changes: the dashboard recomputes its costlier figures (rates,
 * hold durations, the tables) at most once per key (once a second, or per rate bin, while live)
 * though it renders with every loaded batch.
 */
import { useMemo } from 'react';

/**
 * `value` as it was when `key` last changed: the same object until `key` changes, then the
 * current `value`.
 *
 * A memo keyed on `key` alone, not state set during render (React's "storing information from
 * previous renders" pattern): that pattern renders the component a second time whenever the key
 * changes, which for the dashboard was a second render of the whole page several times a second
 * while live. Should React drop the memo, the next render takes a new sample: a fresher value,
 * never a wrong one.
 */
export function useSampled<T>(value: T, key: string): T {
  // eslint-disable-next-line react-hooks/exhaustive-deps -- sampled when the key changes, by design
  return useMemo(() => value, [key]);
}
