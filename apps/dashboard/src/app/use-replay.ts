/**
 * Replay: the as-of position moves forward at a chosen speed of coordinator wall time while the
 * stream loads ahead. The clock starts once the starting position is loaded (its wall time is
 * known) and stops at the head, where the view turns live.
 */
import { useEffect, useEffectEvent } from 'react';
import type { ViewHistory } from '@lease-fence/dashboard-model';
import type { DashboardStore } from './dashboard-store.js';
import type { DashboardEnvironment } from './environment.js';
import { replayStep } from './navigation.js';
import { liveView, type ViewUrlState } from './url-state.js';

/** Options of {@link useReplay}. */
export interface ReplayOptions {
  readonly env: DashboardEnvironment;
  readonly store: DashboardStore;
  readonly history: ViewHistory;
  /** The view; its `speed` is read at every tick. */
  readonly view: ViewUrlState;
  /** Where replay starts: the as-of position. */
  readonly fromPosition: number;
  /** Wall time of the starting position, epoch ms; undefined while not replaying or not yet loaded. */
  readonly fromWallMillis: number | undefined;
  readonly updateView: (next: ViewUrlState) => void;
}

/** Milliseconds between replay steps. */
const REPLAY_TICK_MILLIS = 100;

/**
 * Runs the replay clock while `fromWallMillis` is defined. Each tick reads the store as it is
 * now (not as of the last render) and the latest view (its speed may change mid-replay).
 */
export function useReplay({
  env,
  store,
  history,
  view,
  fromPosition,
  fromWallMillis,
  updateView,
}: ReplayOptions): void {
  const replaying = fromWallMillis !== undefined;
  const latestView = useEffectEvent(() => view);
  const start = useEffectEvent(() => ({ wall: fromWallMillis ?? 0, position: fromPosition }));
  useEffect(() => {
    if (!replaying) return undefined;
    let { wall, position } = start();
    let last = env.now();
    let handle: unknown;
    const tick = (): void => {
      const now = env.now();
      const current = latestView();
      wall += (now - last) * current.speed;
      last = now;
      const next = replayStep(history, position, wall, store.headPosition, store.caughtUp);
      if (next.kind === 'live') {
        updateView(liveView(current));
        return;
      }
      if (next.kind === 'seek') {
        position = next.position;
        updateView({ ...current, at: { kind: 'position', position } });
      }
      handle = env.timers.setTimeout(tick, REPLAY_TICK_MILLIS);
    };
    handle = env.timers.setTimeout(tick, REPLAY_TICK_MILLIS);
    return () => env.timers.clearTimeout(handle);
  }, [replaying, env, history, store, updateView]);
}
