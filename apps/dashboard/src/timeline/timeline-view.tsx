/**
 * The live lease timeline: one lane per resource, wall time across. Lanes are virtualised (only
 * the rows in view are laid out and drawn) and drawn on one canvas, so 500 lanes and 20 000 bars
 * cost what the visible rows cost. An off-screen list mirrors the visible lanes and bars for
 * screen readers and browser tests.
 */
import {
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type PointerEvent as ReactPointerEvent,
  type ReactElement,
} from 'react';
import { formatWallTime, whoHeld, type Lane, type LeaseMatch, type ViewState } from '@lease-fence/dashboard-model';
import { countOf } from '../app/count-words.js';
import { HolderColorContext } from '../app/holder-colors.js';
import { createExposureFills, type ExposureFills } from './draw-exposure.js';
import { drawTimeline, type Canvas2DLike } from './draw-timeline.js';
import { LeaseDetails, RejectionDetails } from './lease-details.js';
import { layoutLane, layoutRestarts, visibleRows, type LaneRowLayout, type MarkerCluster } from './lane-layout.js';
import { commitNeedsRedraw, decideRedraw, snapWindow, type DrawInputs, type DrawnFrame } from './redraw-policy.js';
import { panWindow, wallOfX, xOfWall, type TimeWindow } from './time-scale.js';

/** Row height of a lane, CSS pixels. */
export const ROW_HEIGHT_PX = 22;
const AXIS_HEIGHT_PX = 26;
const LABEL_WIDTH_PX = 190;

/** Props of {@link TimelineView}. */
export interface TimelineViewProps {
  readonly state: ViewState;
  /** Lanes to show (filtered and sorted). */
  readonly lanes: readonly Lane[];
  /** The compiled filter: bars and markers it does not match are drawn dimmed. @defaultValue everything matches */
  readonly match?: LeaseMatch;
  /** The window to draw now; called on every frame (it may follow live time). */
  readonly resolveWindow: () => TimeWindow;
  /** Keep redrawing every animation frame (live: the window follows now). */
  readonly animate: boolean;
  /** Estimated coordinator wall time now; undefined in history views (no now line, no countdown). */
  readonly nowWallMillis: (() => number) | undefined;
  /** The as-of time (history view), drawn as a line. */
  readonly asOfWallMillis: number | undefined;
  readonly cursorWallMillis: number | undefined;
  readonly selectedResource: string | undefined;
  /** Viewport height, CSS pixels. @defaultValue 460 */
  readonly heightPx?: number;
  /** The user zoomed by `factor` (< 1 in) around a wall time. */
  readonly onZoom: (factor: number, anchorWallMillis: number) => void;
  /** The user dragged the window to `window`. */
  readonly onPan: (window: TimeWindow) => void;
  /** The user clicked a lane at a time (pins the shared cursor and selects the lane). */
  readonly onPick: (resource: string, wallMillis: number) => void;
  readonly onSelectRejection: (position: number) => void;
}

interface Hover {
  readonly x: number;
  readonly y: number;
  readonly resource: string;
  readonly wallMillis: number;
  readonly marker: MarkerCluster | undefined;
}

/** The canvas lane renderer with virtualisation, hover details, pan, zoom and click-to-investigate. */
export function TimelineView(props: TimelineViewProps): ReactElement {
  const { lanes, heightPx = 460 } = props;
  const containerRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  /** The props of the last committed render, for the animation loop and event handlers. */
  const propsRef = useRef(props);
  const colorOf = useContext(HolderColorContext);
  const [widthPx, setWidthPx] = useState(1_000);
  const [scrollTop, setScrollTop] = useState(0);
  const [hover, setHover] = useState<Hover | undefined>(undefined);
  // The hatch patterns of the exposure bands, made once for the canvas (not per frame).
  const exposureFillsRef = useRef<ExposureFills | undefined>(undefined);
  const shapesRef = useRef(0);
  const frameRef = useRef(0);
  /**
   * The last frame drawn, and a count of the commits that must be drawn at once (see
   * `commitNeedsRedraw`: following now, a commit that only brings new data waits for the data's turn).
   */
  const drawnRef = useRef<DrawnFrame | undefined>(undefined);
  const redrawCountRef = useRef(0);
  const drawInputsRef = useRef<DrawInputs | undefined>(undefined);
  useLayoutEffect(() => {
    propsRef.current = props;
    const inputs: DrawInputs = {
      animate: props.animate,
      state: props.state,
      laneCount: props.lanes.length,
      match: props.match,
      colorOf,
      selectedResource: props.selectedResource,
      cursorWallMillis: props.cursorWallMillis,
      asOfWallMillis: props.asOfWallMillis,
    };
    if (commitNeedsRedraw(drawInputsRef.current, inputs)) redrawCountRef.current += 1;
    drawInputsRef.current = inputs;
  });
  /** While dragging, the window being dragged: drawn directly, committed to the URL on release. */
  const dragWindowRef = useRef<TimeWindow | undefined>(undefined);
  const committedRef = useRef(false);
  const currentWindow = (): TimeWindow => dragWindowRef.current ?? propsRef.current.resolveWindow();
  const plotWidth = Math.max(50, widthPx - LABEL_WIDTH_PX);
  const viewportRows = heightPx - AXIS_HEIGHT_PX;
  const rows = visibleRows(scrollTop, viewportRows, ROW_HEIGHT_PX, lanes.length);

  useLayoutEffect(() => {
    const el = containerRef.current;
    if (el === null || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w !== undefined && w > 0) setWidthPx(Math.floor(w));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const draw = useCallback((): void => {
    const canvas = canvasRef.current;
    const p = propsRef.current;
    if (canvas === null) return;
    const dpr = typeof window === 'undefined' ? 1 : window.devicePixelRatio || 1;
    const top = scrollRef.current?.scrollTop ?? 0;
    const drawStarted = performance.now();
    const requested = dragWindowRef.current ?? p.resolveWindow();
    // Skip frames that would repaint the same pixels (live, the window moves ~0.2 px per frame).
    const decision = decideRedraw(drawnRef.current, {
      window: requested,
      plotWidthPx: plotWidth,
      layoutKey: `${widthPx}x${heightPx}@${dpr}:${top}:${redrawCountRef.current}`,
      position: p.state.position,
      atMillis: drawStarted,
    });
    if (!decision.draw) return;
    const ctx = canvas.getContext('2d');
    if (ctx === null) return;
    exposureFillsRef.current ??= createExposureFills(ctx);
    drawnRef.current = decision.frame;
    if (canvas.width !== Math.floor(widthPx * dpr) || canvas.height !== Math.floor(heightPx * dpr)) {
      canvas.width = Math.floor(widthPx * dpr);
      canvas.height = Math.floor(heightPx * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const win = snapWindow(requested, plotWidth).window;
    const range = visibleRows(top, viewportRows, ROW_HEIGHT_PX, p.lanes.length, 1);
    const drawRows = [];
    for (let i = range.first; i < range.last; i += 1) {
      const lane = p.lanes[i];
      if (lane === undefined) continue;
      drawRows.push({
        y: AXIS_HEIGHT_PX + i * ROW_HEIGHT_PX - top,
        layout: layoutLane(lane, { window: win, widthPx: plotWidth, match: p.match }),
        highlighted: lane.resource === p.selectedResource,
      });
    }
    const at = (wall: number | undefined): number | undefined =>
      wall === undefined ? undefined : xOfWall(win, plotWidth, wall);
    shapesRef.current = drawTimeline(ctx as unknown as Canvas2DLike, drawRows, {
      widthPx,
      heightPx,
      rowHeightPx: ROW_HEIGHT_PX,
      labelWidthPx: LABEL_WIDTH_PX,
      axisHeightPx: AXIS_HEIGHT_PX,
      window: win,
      restarts: layoutRestarts(p.state.restarts, { window: win, widthPx: plotWidth }),
      colorOf,
      nowX: at(p.nowWallMillis?.()),
      asOfX: at(p.asOfWallMillis),
      cursorX: at(p.cursorWallMillis),
      exposureFills: exposureFillsRef.current,
    });
    canvas.dataset['shapes'] = String(shapesRef.current);
    // For benchmarks: the log position this frame shows, and what drawing it cost (layout + canvas calls).
    canvas.dataset['position'] = String(p.state.position);
    canvas.dataset['drawMillis'] = (performance.now() - drawStarted).toFixed(2);
  }, [widthPx, heightPx, plotWidth, viewportRows, colorOf]);

  // After a committed drag, the new window arrives in props: stop overriding it.
  useLayoutEffect(() => {
    if (committedRef.current) {
      committedRef.current = false;
      dragWindowRef.current = undefined;
    }
  });

  // Redraw after every render; keep drawing every frame while live.
  useEffect(() => {
    if (typeof requestAnimationFrame === 'undefined') return undefined;
    let cancelled = false;
    const loop = (): void => {
      if (cancelled) return;
      draw();
      if (propsRef.current.animate) frameRef.current = requestAnimationFrame(loop);
    };
    frameRef.current = requestAnimationFrame(loop);
    return () => {
      cancelled = true;
      cancelAnimationFrame(frameRef.current);
    };
  });

  // Bring the selected lane into view when the selection changes (search hit, link).
  const hasLanes = lanes.length > 0;
  useEffect(() => {
    const el = scrollRef.current;
    const index =
      props.selectedResource === undefined
        ? -1
        : propsRef.current.lanes.findIndex((l) => l.resource === props.selectedResource);
    if (el === null || index < 0) return;
    const top = index * ROW_HEIGHT_PX;
    if (top < el.scrollTop || top + ROW_HEIGHT_PX > el.scrollTop + viewportRows)
      el.scrollTop = Math.max(0, top - viewportRows / 3);
  }, [props.selectedResource, viewportRows, hasLanes]);

  // Wheel: ctrl/⌘ zooms around the pointer, shift or horizontal scrolling pans; plain wheel scrolls lanes.
  useEffect(() => {
    const el = canvasRef.current;
    if (el === null) return undefined;
    const onWheel = (event: WheelEvent): void => {
      const p = propsRef.current;
      const win = p.resolveWindow();
      const x = event.offsetX - LABEL_WIDTH_PX;
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();
        p.onZoom(Math.exp(event.deltaY * 0.0025), wallOfX(win, plotWidth, Math.max(0, x)));
      } else if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
        event.preventDefault();
        const dx = event.shiftKey ? event.deltaY : event.deltaX;
        p.onPan(panWindow(win, (dx / plotWidth) * (win.toWallMillis - win.fromWallMillis)));
      }
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [plotWidth]);

  const drag = useRef<{ startX: number; window: TimeWindow; moved: boolean } | undefined>(undefined);

  /** Where the pointer last was over the canvas (client pixels), to re-read the hover when anything scrolls under it. */
  const pointerRef = useRef<{ clientX: number; clientY: number } | undefined>(undefined);
  const locate = (event: { clientX: number; clientY: number }): Hover | undefined => {
    const canvas = canvasRef.current;
    if (canvas === null) return undefined;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - LABEL_WIDTH_PX;
    const y = event.clientY - rect.top;
    if (x < 0 || y < AXIS_HEIGHT_PX || y > rect.height || x > rect.width - LABEL_WIDTH_PX) return undefined;
    const index = Math.floor((y - AXIS_HEIGHT_PX + (scrollRef.current?.scrollTop ?? 0)) / ROW_HEIGHT_PX);
    const lane = propsRef.current.lanes[index];
    if (lane === undefined) return undefined;
    const win = currentWindow();
    const layout = layoutLane(lane, { window: win, widthPx: plotWidth });
    const marker = layout.rejections.find((m) => Math.abs(m.x - x) <= (m.count > 1 ? 8 : 6));
    return { x: event.clientX - rect.left, y, resource: lane.resource, wallMillis: wallOfX(win, plotWidth, x), marker };
  };

  // Something scrolled under a still pointer: the lanes' own scroll, the page (keys, the scrollbar)
  // or any other ancestor. A capturing listener on the window sees every one of them (a scroll event
  // does not bubble, but it is captured), so the tooltip names the lane now under the pointer, or goes.
  const locateRef = useRef(locate);
  useLayoutEffect(() => {
    locateRef.current = locate;
  });
  useEffect(() => {
    const onScroll = (): void => {
      if (pointerRef.current !== undefined) setHover(locateRef.current(pointerRef.current));
    };
    window.addEventListener('scroll', onScroll, { capture: true, passive: true });
    return () => window.removeEventListener('scroll', onScroll, { capture: true });
  }, []);

  const onPointerDown = (event: ReactPointerEvent<HTMLCanvasElement>): void => {
    drag.current = { startX: event.clientX, window: currentWindow(), moved: false };
    event.currentTarget.setPointerCapture?.(event.pointerId);
  };
  const onPointerMove = (event: ReactPointerEvent<HTMLCanvasElement>): void => {
    const d = drag.current;
    if (d !== undefined && (event.buttons & 1) === 1) {
      const dx = event.clientX - d.startX;
      if (Math.abs(dx) >= 3) d.moved = true;
      if (d.moved) {
        const span = d.window.toWallMillis - d.window.fromWallMillis;
        dragWindowRef.current = panWindow(d.window, (-dx / plotWidth) * span);
        cancelAnimationFrame(frameRef.current);
        frameRef.current = requestAnimationFrame(draw); // pan is canvas-only until release
        return;
      }
    }
    pointerRef.current = { clientX: event.clientX, clientY: event.clientY };
    setHover(locate(event));
  };
  const onPointerUp = (event: ReactPointerEvent<HTMLCanvasElement>): void => {
    const d = drag.current;
    drag.current = undefined;
    if (d?.moved === true) {
      if (dragWindowRef.current !== undefined) {
        committedRef.current = true;
        propsRef.current.onPan(dragWindowRef.current);
      }
      return;
    }
    const h = locate(event);
    if (h === undefined) return;
    if (h.marker !== undefined) propsRef.current.onSelectRejection(h.marker.first.stamp.position);
    else propsRef.current.onPick(h.resource, h.wallMillis);
  };

  const totalHeight = AXIS_HEIGHT_PX + lanes.length * ROW_HEIGHT_PX;
  const mirror = mirrorRows(lanes, rows.first, rows.last, props.resolveWindow(), plotWidth, props.match);

  return (
    <div className="timeline" ref={containerRef} data-testid="timeline" data-lanes={lanes.length}>
      <div
        className="timeline-scroll"
        ref={scrollRef}
        style={{ height: heightPx }}
        onScroll={(e) => {
          setScrollTop(e.currentTarget.scrollTop);
          draw(); // (the tooltip follows in the window's scroll listener, which sees this scroll too)
        }}
      >
        <div style={{ height: Math.max(heightPx, totalHeight), position: 'relative' }}>
          <canvas
            ref={canvasRef}
            className="timeline-canvas"
            data-testid="lanes-canvas"
            role="img"
            aria-label={`Lease timeline: ${countOf(lanes.length, 'lane')}; rows ${rows.first + 1} to ${rows.last} in view`}
            style={{
              width: widthPx,
              height: heightPx,
              position: 'sticky',
              top: 0,
              display: 'block',
              touchAction: 'none',
            }}
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={onPointerUp}
            onPointerLeave={() => {
              pointerRef.current = undefined;
              setHover(undefined);
            }}
          />
        </div>
      </div>
      {hover !== undefined && (
        <div
          className="timeline-tooltip"
          data-testid="lane-tooltip"
          data-resource={hover.resource}
          style={{ left: Math.min(hover.x + 14, Math.max(0, widthPx - 440)), top: hover.y + 14 }}
        >
          {hover.marker !== undefined ? (
            <RejectionDetails cluster={hover.marker} />
          ) : (
            <LeaseDetails
              answer={whoHeld(props.state, hover.resource, hover.wallMillis)}
              nowWallMillis={props.nowWallMillis}
            />
          )}
        </div>
      )}
      <ul className="sr-only" data-testid="lane-mirror" aria-label="Visible lanes">
        {mirror.map((row) => (
          <li
            key={row.resource}
            data-testid="lane-row"
            data-resource={row.resource}
            data-bars={row.bars.length}
            data-matching-bars={row.bars.filter((b) => b.matches).length}
            data-rejections={row.rejections.reduce((n, c) => n + c.count, 0)}
          >
            {row.resource}:{' '}
            {row.bars.length === 0
              ? 'no lease in view'
              : row.bars
                  .slice(0, 20)
                  .map(
                    (b) =>
                      `${b.generation.holderId} fence ${b.generation.fence} ${formatWallTime(b.generation.startWallMillis)}–${formatWallTime(b.generation.endWallMillis)} ${b.end}${b.reassigned ? ' (reassigned)' : ''}${b.matches ? '' : ' (dimmed: no filter match)'}`,
                  )
                  .join('; ')}
            {row.bars.length > 20 && `; and ${row.bars.length - 20} more`}
            {row.rejections.length > 0 && ` · ${row.rejections.reduce((n, c) => n + c.count, 0)} rejections`}
          </li>
        ))}
      </ul>
    </div>
  );
}

function mirrorRows(
  lanes: readonly Lane[],
  first: number,
  last: number,
  window: TimeWindow,
  widthPx: number,
  match: LeaseMatch | undefined,
): LaneRowLayout[] {
  const rows: LaneRowLayout[] = [];
  for (let i = first; i < last; i += 1) {
    const lane = lanes[i];
    if (lane !== undefined) rows.push(layoutLane(lane, { window, widthPx, match }));
  }
  return rows;
}
