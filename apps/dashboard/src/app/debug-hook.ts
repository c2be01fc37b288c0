/**
 * Installs `window.__leaseFence` (its contract, {@link DebugHook}, lives in
 * `@lease-fence/dashboard-model` so the browser end-to-end tests read the same types).
 */
import type { DashboardConnectionStatus, DebugHook } from '@lease-fence/dashboard-model';
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
