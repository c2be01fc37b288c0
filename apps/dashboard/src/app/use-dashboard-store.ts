/**
 * Reading the {@link DashboardStore} from React: its immutable snapshots through
 * `useSyncExternalStore`, narrowed by a selector so a component re-renders only when the part
 * it reads changes.
 */
import { useSyncExternalStore } from 'react';
import type { DashboardSnapshot, DashboardStore } from './dashboard-store.js';

/**
 * The part of the store's current snapshot that `select` picks.
 *
 * @param select - Pure; returns a primitive or a value held by the snapshot (never a new object
 *   per call, which would re-render forever).
 */
export function useDashboardStore<T>(store: DashboardStore, select: (snapshot: DashboardSnapshot) => T): T {
  return useSyncExternalStore(
    store.subscribe,
    () => select(store.getSnapshot()),
    () => select(store.getSnapshot()),
  );
}

/** Selects the whole snapshot: for a component that shows figures which change with every loaded event. */
export const wholeSnapshot = (snapshot: DashboardSnapshot): DashboardSnapshot => snapshot;
