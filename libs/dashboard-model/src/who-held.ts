/**
 * "Who held X at T": the generation of a resource whose bar covers a wall time.
 *
 * @see docs/design.md § "The library's rules" (Fence = generation of ownership)
 */
import type { Generation, ViewState } from './view-state.js';

/**
 * The answer for one resource at one wall time.
 * - `held: true`: `generation` covered the time (`startWallMillis <= T < endWallMillis`);
 *   `ordinal` is its 1-based number among the lane's loaded generations.
 * - `held: false`, `reason: 'free'`: nobody held it; `previous` / `next` are the neighbours.
 * - `held: false`, `reason: 'unknown-resource'`: the state has no event about that resource.
 */
export type HoldingAnswer =
  | {
      readonly held: true;
      readonly resource: string;
      readonly wallMillis: number;
      readonly generation: Generation;
      readonly ordinal: number;
    }
  | {
      readonly held: false;
      readonly reason: 'free' | 'unknown-resource';
      readonly resource: string;
      readonly wallMillis: number;
      readonly previous: Generation | undefined;
      readonly next: Generation | undefined;
    };

/**
 * Who held `resource` at coordinator wall time `wallMillis`, according to `state`.
 * When bars overlap (a wall clock that stepped), the latest generation in log order wins.
 *
 * @param state - A view state (e.g. {@link ViewHistory.stateAt} the position of interest).
 * @param resource - The resource id.
 * @param wallMillis - Coordinator wall-clock epoch milliseconds.
 * @returns See {@link HoldingAnswer}; never throws.
 */
export function whoHeld(state: ViewState, resource: string, wallMillis: number): HoldingAnswer {
  const lane = state.lanes.get(resource);
  if (lane === undefined)
    return { held: false, reason: 'unknown-resource', resource, wallMillis, previous: undefined, next: undefined };
  const gens = lane.generations;
  let previous: Generation | undefined;
  let next: Generation | undefined;
  for (let i = gens.length - 1; i >= 0; i -= 1) {
    const g = gens[i];
    if (g === undefined) continue;
    if (g.startWallMillis <= wallMillis && wallMillis < g.endWallMillis) {
      return { held: true, resource, wallMillis, generation: g, ordinal: i + 1 };
    }
    if (g.endWallMillis <= wallMillis && (previous === undefined || g.endWallMillis > previous.endWallMillis))
      previous = g;
    if (g.startWallMillis > wallMillis && (next === undefined || g.startWallMillis < next.startWallMillis)) next = g;
  }
  return { held: false, reason: 'free', resource, wallMillis, previous, next };
}
