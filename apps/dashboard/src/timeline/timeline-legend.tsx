/**
 * The legend next to the lanes: a "Legend" toggle that opens what the colours and shapes mean —
 * the holders in view with their colours, how a bar ends, renewal ticks, restarts and grace,
 * fence-first handover strips, exposure bands, rejection markers, and what dimmed means. Every swatch is drawn by
 * the lanes' own drawing code (`legend-swatches.ts`), so the legend shows what the lanes show.
 */
import { useContext, useLayoutEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import type { Lane } from '@lease-fence/dashboard-model';
import { HolderColorContext } from '../app/holder-colors.js';
import { createExposureFills } from './draw-exposure.js';
import type { Canvas2DLike } from './draw-timeline.js';
import { barInWindow } from './lane-layout.js';
import { drawLegendSwatch, SWATCH_HEIGHT_PX, SWATCH_WIDTH_PX, type LegendSwatch } from './legend-swatches.js';
import type { TimeWindow } from './time-scale.js';

/** Holders listed by name; the rest are counted. */
const MAX_HOLDERS_LISTED = 24;

/** The shapes the lanes draw, each with what it means, in the order the legend lists them. */
export const LEGEND_SHAPES: readonly { readonly swatch: LegendSwatch; readonly text: string }[] = [
  { swatch: { kind: 'end', end: 'released' }, text: 'released (black end)' },
  { swatch: { kind: 'end', end: 'expired' }, text: 'expired: its TTL ran out (red end)' },
  {
    swatch: { kind: 'end', end: 'superseded', reassigned: true },
    text: 'reassigned: the next holder was granted then (orange end)',
  },
  { swatch: { kind: 'end', end: 'not-carried' }, text: 'not carried across a restart (purple end)' },
  { swatch: { kind: 'end', end: 'open' }, text: 'still held (dashed end)' },
  { swatch: { kind: 'renewals' }, text: 'renewals (ticks)' },
  { swatch: { kind: 'carried' }, text: 'carried across a coordinator restart (dark strip)' },
  { swatch: { kind: 'unknown-grant' }, text: 'grant not in the loaded events (faded)' },
  { swatch: { kind: 'restart' }, text: 'coordinator restart' },
  { swatch: { kind: 'grace' }, text: 'grace window after a restart (shaded)' },
  { swatch: { kind: 'handover', phase: 'pending' }, text: 'fence-first handover: fence reserved, a gate is asked' },
  { swatch: { kind: 'handover', phase: 'admitted' }, text: 'handover: a gate admitted the fence' },
  { swatch: { kind: 'handover', phase: 'active' }, text: 'handover: the lease is active' },
  { swatch: { kind: 'handover', phase: 'burned' }, text: 'handover: fence burned' },
  {
    swatch: { kind: 'exposure', status: 'closed' },
    text: 'exposure: from a grant until a gate’s floor reached its fence, an old holder could still write (amber hatch)',
  },
  {
    swatch: { kind: 'exposure', status: 'unknown' },
    text: 'exposure not measured: no gate evidence yet, or the lease ended without it (grey hatch, dashed end)',
  },
  { swatch: { kind: 'rejection', count: 1, doubleGrant: false }, text: 'a refused stale write (click to investigate)' },
  { swatch: { kind: 'rejection', count: 3, doubleGrant: false }, text: 'refusals close together, with their count' },
  {
    swatch: { kind: 'rejection', count: 1, doubleGrant: true },
    text: 'a double grant refused (same fence, another holder)',
  },
  {
    swatch: { kind: 'rejection', count: 1, doubleGrant: false, reportedLate: true },
    text: 'a refusal its gate reported late (kept in its outbox while the coordinator was down): drawn when recorded; the gate’s own time is in its details',
  },
  {
    swatch: { kind: 'dimmed' },
    text: 'dimmed: the holder and fence filters do not match it (a marker: neither its refused nor its floor side)',
  },
];

/** Props of {@link TimelineLegend}. */
export interface TimelineLegendProps {
  /** The lanes shown; their holders with a bar in `window` are listed with their colours. */
  readonly lanes: readonly Lane[];
  readonly window: TimeWindow;
  /** Open at first. @defaultValue false */
  readonly defaultOpen?: boolean;
}

/** The "Legend" toggle and, when open, the legend. */
export function TimelineLegend({ lanes, window, defaultOpen = false }: TimelineLegendProps): ReactElement {
  const [open, setOpen] = useState(defaultOpen);
  return (
    <div className="timeline-legend" data-testid="legend-panel">
      <button
        type="button"
        className="link"
        aria-expanded={open}
        aria-controls="timeline-legend"
        onClick={() => setOpen(!open)}
        data-testid="legend-toggle"
      >
        {open ? 'Hide the legend' : 'Legend: what the colours and shapes mean'}
      </button>
      {open && <LegendBody lanes={lanes} window={window} />}
    </div>
  );
}

function LegendBody({ lanes, window }: { readonly lanes: readonly Lane[]; readonly window: TimeWindow }): ReactElement {
  const holders = useMemo(() => holdersInView(lanes, window), [lanes, window]);
  return (
    <div className="legend panel" id="timeline-legend" data-testid="legend" aria-label="Legend">
      <h4>Holders in view ({holders.length})</h4>
      {holders.length === 0 ? (
        <p className="muted">No lease in this window.</p>
      ) : (
        <ul className="legend-holders">
          {holders.slice(0, MAX_HOLDERS_LISTED).map((holderId) => (
            <li key={holderId} data-testid="legend-holder" data-holder={holderId}>
              <Swatch swatch={{ kind: 'holder', holderId }} /> {holderId}
            </li>
          ))}
          {holders.length > MAX_HOLDERS_LISTED && (
            <li className="muted">and {holders.length - MAX_HOLDERS_LISTED} more</li>
          )}
        </ul>
      )}
      <h4>Bars, ticks and markers</h4>
      <ul className="legend-shapes">
        {LEGEND_SHAPES.map(({ swatch, text }) => (
          <li key={text} data-testid="legend-shape" data-kind={swatch.kind}>
            <Swatch swatch={swatch} /> {text}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Swatch({ swatch }: { readonly swatch: LegendSwatch }): ReactElement {
  const ref = useRef<HTMLCanvasElement>(null);
  const colorOf = useContext(HolderColorContext);
  useLayoutEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (canvas == null || ctx == null) return;
    const dpr = typeof globalThis.devicePixelRatio === 'number' ? globalThis.devicePixelRatio : 1;
    canvas.width = Math.floor(SWATCH_WIDTH_PX * dpr);
    canvas.height = Math.floor(SWATCH_HEIGHT_PX * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fills = swatch.kind === 'exposure' ? createExposureFills(ctx) : undefined;
    drawLegendSwatch(ctx as unknown as Canvas2DLike, swatch, colorOf, fills);
  }, [swatch, colorOf]);
  return (
    <canvas
      ref={ref}
      className="legend-swatch"
      aria-hidden="true"
      style={{ width: SWATCH_WIDTH_PX, height: SWATCH_HEIGHT_PX }}
    />
  );
}

/**
 * The holders with a bar in `window` on `lanes`, in order of first appearance there.
 *
 * @returns Holder ids, without repeats.
 */
export function holdersInView(lanes: readonly Lane[], window: TimeWindow): string[] {
  const seen = new Set<string>();
  for (const lane of lanes) {
    for (const g of lane.generations) {
      if (barInWindow(g, window)) seen.add(g.holderId);
    }
  }
  return [...seen];
}
