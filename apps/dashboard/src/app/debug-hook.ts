/**
 * Installs `window.__leaseFence` (its contract, {@link DebugHook}, lives in
 * `@lease-fence/dashboard-model` so the browser end-to-end tests read the same types).
 */
import { useEffect, useEffectEvent } from 'react';
import type {
  DashboardConnectionStatus,
  DashboardSummary,
  DebugHook,
  HoldingAnswer,
} from '@lease-fence/dashboard-model';
import type { ConnectionState } from '../stream/stream-client.js';

/** Compiles only while the hook's status list and the stream client's states are the same set. */
type SameSet<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const STATUS_LISTS_MATCH: SameSet<ConnectionState['status'], DashboardConnectionStatus> = true;
void STATUS_LISTS_MATCH;

/**
 * Installs the hook as `target.__leaseFence`.
 *
 * @returns The uninstall function.
 */
export function installDebugHook(target: Record<string, unknown> | undefined, hook: DebugHook): () => void {
  if (target === undefined) return () => undefined;
  target['__leaseFence'] = hook;
  return () => {
    if (target['__leaseFence'] === hook) delete target['__leaseFence'];
  };
}

/**
 * Installs the hook on `target` for the component's lifetime. `summarize` and `whoHeldAt` are
 * called when the hook is read and see the latest committed render (its view state and store
 * snapshot), never a state that was not shown.
 */
export function useDebugHook(
  target: Record<string, unknown> | undefined,
  summarize: () => DashboardSummary,
  whoHeldAt: (resource: string, wallMillis: number) => HoldingAnswer,
): void {
  const summary = useEffectEvent(summarize);
  const probe = useEffectEvent(whoHeldAt);
  useEffect(
    () =>
      installDebugHook(target, {
        summary: () => summary(),
        whoHeld: (resource, wallMillis) =>
          probe(resource, typeof wallMillis === 'string' ? Date.parse(wallMillis) : wallMillis),
      }),
    [target],
  );
}
