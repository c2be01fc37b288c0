/**
 * recharts panels: grants, renewals, releases, expiries and rejections per second (from the log),
 * denials per second (from the stream's stats frames: denials are not logged), and hold
 * durations. The shared time cursor is drawn on each chart; clicking a chart moves it.
 *
 * While the panel is off screen (below the fold at first) the charts keep their last drawing and
 * are brought up to date when it comes near the viewport (`../app/use-near-viewport.ts`): each
 * update of these charts is one of the page's longest tasks, and off screen it shows nothing.
 */
import { memo, useRef, type ReactElement, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import { formatDuration, formatWallTime, type HoldDurationBin, type RateBin } from '@lease-fence/dashboard-model';
import type { StatsSample } from '../stream/stats-history.js';
import { useHeldWhileAway, useNearViewport } from '../app/use-near-viewport.js';

/** Props of {@link RatePanels}. */
export interface RatePanelsProps {
  readonly bins: readonly RateBin[];
  readonly binWidthMillis: number;
  /** Denial rates in the same window; empty in history views older than the stats kept. */
  readonly denials: readonly StatsSample[];
  readonly holdBins: readonly HoldDurationBin[];
  readonly holdP50Millis: number | undefined;
  readonly holdP95Millis: number | undefined;
  readonly cursorWallMillis: number | undefined;
  readonly onCursor: (wallMillis: number) => void;
  /** Width of each chart, CSS pixels. */
  readonly widthPx: number;
}

interface Row extends RateBin {
  readonly denials: number | null;
}

/** Most labelled ticks on a rate chart's time axis. */
const MAX_TIME_TICKS = 6;

/**
 * The time axis' ticks: every k-th bin start, at most {@link MAX_TIME_TICKS}. Given with
 * `interval={0}`, recharts shows them as they are instead of measuring each label in the DOM to
 * drop overlapping ones (a forced layout of the whole page per chart update).
 */
function timeTicks(bins: readonly RateBin[]): number[] {
  const every = Math.max(1, Math.ceil(bins.length / MAX_TIME_TICKS));
  return bins.filter((_, i) => i % every === 0).map((b) => b.wallMillis);
}

/** What recharts passes a tick renderer (the fields {@link plainTick} reads; see its `BaseTickContentProps`). */
interface TickContent {
  readonly x: number | string;
  readonly y: number | string;
  readonly textAnchor: 'start' | 'middle' | 'end' | 'inherit';
  readonly verticalAnchor: 'start' | 'middle' | 'end';
  readonly fill: string | undefined;
  readonly className?: string;
  readonly index: number;
  readonly payload: { readonly value: unknown };
  readonly tickFormatter: ((value: never, index: number) => string) | undefined;
}

/** Baseline shift of a tick label per vertical anchor (what recharts' own `Text` applies). */
const TICK_DY = { start: '0.71em', middle: '0.355em', end: '0' } as const;

/**
 * An axis label as a plain SVG `text`. Recharts' default tick is its `Text`, which measures every
 * word in the DOM to wrap it to the axis' width: a forced layout of the whole page per label and
 * chart update, the largest native cost of the live page. Labels here are short and never wrap.
 */
function plainTick(props: TickContent): ReactNode {
  const { value } = props.payload;
  const label = props.tickFormatter === undefined ? String(value) : props.tickFormatter(value as never, props.index);
  return (
    <text
      x={props.x}
      y={props.y}
      dy={TICK_DY[props.verticalAnchor]}
      textAnchor={props.textAnchor}
      fill={props.fill ?? '#666'}
      className={props.className}
    >
      {label}
    </text>
  );
}

/**
 * What both rate line charts share, as recharts children: grid, time axis ({@link timeTicks},
 * {@link plainTick}), value axis, tooltip and legend. An array of elements rather than a wrapper
 * component: recharts finds its axes among a chart's direct children by element type.
 * @param ticks - the time axis' ticks, bin starts (epoch milliseconds, wall clock).
 */
function timeChartFrame(ticks: number[]): ReactElement[] {
  return [
    <CartesianGrid key="grid" stroke="#eee" />,
    <XAxis
      key="x"
      dataKey="wallMillis"
      type="number"
      domain={['dataMin', 'dataMax']}
      tickFormatter={(v: number) => formatWallTime(v).slice(0, 8)}
      scale="time"
      ticks={ticks}
      interval={0}
      tick={plainTick}
    />,
    <YAxis key="y" width={40} interval={0} tick={plainTick} />,
    <Tooltip
      key="tooltip"
      labelFormatter={(v) => `${formatWallTime(Number(v))} wall`}
      formatter={(v) => (typeof v === 'number' ? v.toFixed(2) : String(v))}
    />,
    <Legend key="legend" />,
  ];
}

/** How far below (or above) the viewport the rate charts are still kept up to date, CSS pixels. */
const NEAR_VIEWPORT_MARGIN_PX = 400;

/**
 * The rate charts: up to date while on screen or within {@link NEAR_VIEWPORT_MARGIN_PX} of it,
 * otherwise showing the inputs of the last render that was (`data-held="true"` on the panel).
 */
export const RatePanels = memo(function RatePanels(props: RatePanelsProps): ReactElement {
  const sectionRef = useRef<HTMLElement>(null);
  const near = useNearViewport(sectionRef, NEAR_VIEWPORT_MARGIN_PX);
  const shown = useHeldWhileAway(props, near);
  return (
    <section
      ref={sectionRef}
      className="panel rates"
      aria-label="Rates"
      data-testid="rates"
      data-held={shown === props ? undefined : 'true'}
    >
      <RateCharts {...shown} />
    </section>
  );
});

/** The panel's content: the charts (re-rendered only when their inputs change). */
const RateCharts = memo(function RateCharts(props: RatePanelsProps): ReactElement {
  const { bins, binWidthMillis, denials, widthPx } = props;
  const rows: Row[] = bins.map((b) => {
    const inBin = denials.filter((d) => d.wallMillis >= b.wallMillis && d.wallMillis < b.wallMillis + binWidthMillis);
    return {
      ...b,
      denials: inBin.length === 0 ? null : inBin.reduce((n, d) => n + d.denialsPerSecond, 0) / inBin.length,
    };
  });
  const cursor =
    props.cursorWallMillis === undefined
      ? undefined
      : Math.floor(props.cursorWallMillis / binWidthMillis) * binWidthMillis;
  const onClick = (state: unknown): void => {
    const label = (state as { activeLabel?: unknown } | null)?.activeLabel;
    if (typeof label === 'number') props.onCursor(label + binWidthMillis / 2);
  };
  const half = Math.max(260, Math.floor((widthPx - 48) / 2));
  const ticks = timeTicks(bins);
  return (
    <>
      <h3>
        Rates per second{' '}
        <span className="muted">
          (bins of {formatDuration(binWidthMillis)}; denials from stats frames, not the log)
        </span>
      </h3>
      <div className="charts">
        <LineChart width={half} height={200} data={rows} onClick={onClick} data-testid="rate-chart">
          {timeChartFrame(ticks)}
          <Line type="stepAfter" dataKey="grants" stroke="#2563eb" dot={false} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="renewals" stroke="#16a34a" dot={false} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="releases" stroke="#1f2937" dot={false} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="expiries" stroke="#b91c1c" dot={false} isAnimationActive={false} />
          <Line
            type="stepAfter"
            dataKey="denials"
            stroke="#d97706"
            dot={false}
            isAnimationActive={false}
            connectNulls={false}
          />
          {cursor !== undefined && <ReferenceLine x={cursor} stroke="#6b7280" strokeDasharray="3 3" />}
        </LineChart>
        <LineChart width={half} height={200} data={rows} onClick={onClick} data-testid="rejection-chart">
          {timeChartFrame(ticks)}
          <Line type="stepAfter" dataKey="rejections" stroke="#dc2626" dot={false} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="restarts" stroke="#111827" dot={false} isAnimationActive={false} />
          {cursor !== undefined && <ReferenceLine x={cursor} stroke="#6b7280" strokeDasharray="3 3" />}
        </LineChart>
        <figure className="hold-durations">
          <figcaption data-testid="hold-title">
            <h4>Hold durations</h4>
            <span className="muted">ended generations per bin, grant to end (wall)</span>
          </figcaption>
          <BarChart width={half} height={200} data={[...props.holdBins]} data-testid="hold-chart">
            <CartesianGrid stroke="#eee" />
            <XAxis dataKey="label" interval={0} tick={plainTick} />
            <YAxis width={40} allowDecimals={false} interval={0} tick={plainTick} />
            <Tooltip />
            <Bar dataKey="count" name="ended generations" fill="#6366f1" isAnimationActive={false} />
          </BarChart>
        </figure>
        <p className="muted hold-summary">
          Hold durations (grant to end, wall): median{' '}
          {props.holdP50Millis === undefined ? '—' : formatDuration(props.holdP50Millis)}, p95{' '}
          {props.holdP95Millis === undefined ? '—' : formatDuration(props.holdP95Millis)}
        </p>
      </div>
    </>
  );
});
