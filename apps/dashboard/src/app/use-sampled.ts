/**
 * A value sampled when a key changes: the dashboard recomputes its costlier figures (rates,
 * hold durations) at most once per key (once a second while live) though it renders every frame.
 */
import { useState } from 'react';

/**
 * `value` as it was when `key` last changed: the same object until `key` changes, then the
 * current `value` (React's "storing information from previous renders" pattern: the state is
 * adjusted during render, never in an effect).
 */
export function useSampled<T>(value: T, key: string): T {
  const [sample, setSample] = useState(() => ({ key, value }));
  if (sample.key !== key) {
    setSample({ key, value });
    return value;
  }
  return sample.value;
}
