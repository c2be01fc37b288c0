/**
 * The contract of `window.__leaseFence`: a read-only summary of what the dashboard shows, for
 * browser end-to-end tests and for operators in the console. The dashboard installs it
 * (apps/dashboard/src/app/debug-hook.ts); it reports and never changes the view.
 */
import type { HoldingAnswer } from './who-held.js';

/** The stream connection's status as the summary reports it (the dashboard's stream client states). */
export type DashboardConnectionStatus =
  'connecting' | 'catching-up' | 'live' | 'reconnecting' | 'log-damaged' | 'unauthorized' | 'diverged' | 'closed';

/** What `__leaseFence.summary()` returns. */
export interface DashboardSummary {
  readonly connection: DashboardConnectionStatus;
  readonly live: boolean;
  /** Position the view is folded to. */
  readonly position: number;
  /**
   * Last loaded position when the view was rendered (like every figure here). A view as of an
   * earlier position whose summary says more is loaded is a rebuilt state that no longer changes.
   */
  readonly loadedPosition: number;
  readonly headPosition: number;
  /** Events in the log beyond the view (the "N new since" of a paused view). */
  readonly newSince: number;
  readonly lanes: number;
  readonly shownLanes: number;
  readonly generations: number;
  readonly rejections: number;
  readonly restarts: number;
  readonly fenceCounter: number;
  readonly anomalies: number;
  /** Shapes drawn on the lanes canvas in the last frame. */
  readonly shapesDrawn: number;
  readonly investigation: number | undefined;
  readonly search: string;
  /**
   * What the filters match as of `position` (the counts beside them): leases (bars), rejections,
   * events, and kept lanes with a match; undefined when no filter is set.
   */
  readonly matches:
    | {
        readonly leases: number;
        readonly rejections: number;
        readonly events: number;
        readonly lanesWithMatch: number;
      }
    | undefined;
}

/** The hook's surface. */
export interface DebugHook {
  summary(): DashboardSummary;
  /** Who held `resource` at `wallMillis` (epoch ms or ISO string), as of the view. */
  whoHeld(resource: string, wallMillis: number | string): HoldingAnswer;
}
