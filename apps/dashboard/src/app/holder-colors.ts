/**
 * Holder colours for one dashboard: assigned in order of first appearance in the loaded log, so a
 * given log gives the same colours live, in history and in replay. Provided through context to
 * the timeline and the investigation chart.
 */
import { createContext, useMemo } from 'react';
import { HolderColors, holderColor } from '@lease-fence/dashboard-model';

/** Holder id → CSS colour. Outside a provider: the page-wide registry of the model library. */
export const HolderColorContext = createContext<(holderId: string) => string>(holderColor);

/**
 * A colour function for the holders of a log, in their order of first appearance.
 *
 * @param holderIds - The log's holders in order of first appearance (an append-only list).
 * @param count - How many of them are loaded; a new function is made when it grows.
 */
export function useHolderColors(holderIds: readonly string[], count: number): (holderId: string) => string {
  return useMemo(() => {
    const colors = new HolderColors();
    colors.register(holderIds.slice(0, count));
    return colors.colorOf;
  }, [holderIds, count]);
}
