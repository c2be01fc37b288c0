/**
 * An in-page probe for `bench-dashboard`, installed with `page.addInitScript` before the dashboard
 * loads. It watches, without changing the app:
 * - every `event` frame the WebSocket delivers, alone or inside a `batch` message: its position and
 *   `recordedAtMillis` (the coordinator's wall clock at the append; same machine, so comparable with
 *   the page's `Date.now()`);
 * - every animation frame: the gap since the previous one, and the log position the lanes canvas
 *   last drew (`data-position` of `[data-testid="lanes-canvas"]`, set by the dashboard per drawn frame).
 *
 * Event to pixel = page wall clock at the first animation frame that finds the event's position
 * drawn − the event's `recordedAtMillis`: append, delivery, parse, fold and draw, plus up to one frame
 * (the probe may run before the draw in the same frame), so it errs high.
 * Event to page = page wall clock when the frame arrived − the event's `recordedAtMillis`: the part
 * of event to pixel spent before the page (append to send, the socket, the browser's network
 * process), so the rest is the page's own.
 * First paint = page clock at the first frame with something drawn − arrival of the first event frame.
 *
 * Written as a plain script (this project has no DOM types); read it back with {@link readProbe}.
 */

/** What the page accumulates; reset by {@link resetProbeScript}. */
export interface ProbeReadout {
  /** Animation-frame gaps, milliseconds, since the last reset. */
  readonly frameGapsMillis: number[];
  /** Event-to-pixel latencies, milliseconds, since the last reset. */
  readonly eventToPixelMillis: number[];
  /** Event-to-page latencies (arrival of the event frame), milliseconds, since the last reset; same events as `eventToPixelMillis`. */
  readonly eventToPageMillis: number[];
  /** `performance.now()` at the first event frame, or null. */
  readonly firstEventAtMillis: number | null;
  /** `performance.now()` at the first frame showing a drawn position > 0, or null. */
  readonly firstPaintAtMillis: number | null;
  /** Long tasks (PerformanceObserver `longtask`) since the last reset: count and longest, milliseconds. */
  readonly longTasks: number;
  readonly longestTaskMillis: number;
}

/** The init script (a string: it runs in the page). */
export const DASHBOARD_PROBE_SCRIPT = `(() => {
  const recordedAt = new Map();
  const probe = {
    frameGapsMillis: [], eventToPixelMillis: [], eventToPageMillis: [], firstEventAtMillis: null, firstPaintAtMillis: null, longTasks: 0, longestTaskMillis: 0,
    recordingEvents: true,
    // While paused the dashboard drops event frames (nothing is drawn), so their stamps would only pile up here.
    stopRecordingEvents: () => { probe.recordingEvents = false; recordedAt.clear(); },
  };
  let drawnUpTo = 0;
  window.__leaseFenceBenchProbe = probe;
  const Native = window.WebSocket;
  const pattern = /\\{"type":"event","position":(\\d+),"recordedAtMillis":([\\d.]+)/g;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (message) => {
        if (typeof message.data !== 'string') return;
        for (const m of message.data.matchAll(pattern)) {
          if (probe.firstEventAtMillis === null) probe.firstEventAtMillis = performance.now();
          if (probe.recordingEvents) recordedAt.set(Number(m[1]), [Number(m[2]), Date.now()]);
        }
      });
    }
  };
  try {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) { probe.longTasks += 1; probe.longestTaskMillis = Math.max(probe.longestTaskMillis, e.duration); } }).observe({ type: 'longtask' });
  } catch {}
  let last = performance.now();
  const frame = (now) => {
    probe.frameGapsMillis.push(now - last);
    last = now;
    const canvas = document.querySelector('[data-testid="lanes-canvas"]');
    const drawn = Number(canvas?.dataset.position ?? 0);
    if (drawn > 0 && probe.firstPaintAtMillis === null) probe.firstPaintAtMillis = performance.now();
    if (drawn > drawnUpTo) {
      const wall = Date.now();
      for (const [position, [at, arrivedAt]] of recordedAt) {
        if (position > drawn) continue;
        probe.eventToPixelMillis.push(wall - at);
        probe.eventToPageMillis.push(arrivedAt - at);
        recordedAt.delete(position);
      }
      drawnUpTo = drawn;
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();`;

/** Clears the accumulated samples (not the first-event / first-paint marks); evaluate in the page. */
export const resetProbeScript = `(() => { const p = window.__leaseFenceBenchProbe; p.frameGapsMillis.length = 0; p.eventToPixelMillis.length = 0; p.eventToPageMillis.length = 0; p.longTasks = 0; p.longestTaskMillis = 0; })()`;

/** Stops keeping event stamps (before pausing the view, whose dropped frames are never drawn); evaluate in the page. */
export const stopRecordingEventsScript = `(() => { window.__leaseFenceBenchProbe.stopRecordingEvents(); })()`;

/** Reads the probe; evaluate in the page. */
export const readProbeScript = `(() => { const { stopRecordingEvents, ...p } = window.__leaseFenceBenchProbe; return { ...p, frameGapsMillis: [...p.frameGapsMillis], eventToPixelMillis: [...p.eventToPixelMillis], eventToPageMillis: [...p.eventToPageMillis] }; })()`;

/**
 * Reads and parses the probe from a page.
 *
 * @param evaluate - The page's `evaluate` (playwright), bound.
 */
export async function readProbe(evaluate: (script: string) => Promise<unknown>): Promise<ProbeReadout> {
  return (await evaluate(readProbeScript)) as ProbeReadout;
}

/** The q-quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))] as number;
}
