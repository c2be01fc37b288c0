/**
 * Both holders' generations on one wall-time axis, with the refusal, the floor's admission and
 * any restart (grace window shaded). A small recharts range-bar chart.
 */
import { useContext, type ReactElement } from 'react';
import { Bar, BarChart, CartesianGrid, Cell, ReferenceArea, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import { formatWallTime, type Investigation, investigationColors } from '@lease-fence/dashboard-model';
import { HolderColorContext } from '../app/holder-colors.js';

/** Props of {@link GenerationsChart}. */
export interface GenerationsChartProps {
  readonly investigation: Investigation;
  readonly widthPx: number;
}

/** The investigation's small chart. */
export function GenerationsChart({ investigation, widthPx }: GenerationsChartProps): ReactElement {
  const { rejection, rejected, current, axis, floor, restarts } = investigation;
  // The two bars must never look alike, even for one holder with two fences.
  const colorOf = useContext(HolderColorContext);
  const [refusedColor, floorColor] = investigationColors(
    colorOf,
    rejection.rejected.holderId,
    rejection.current.holderId,
  );
  const rows = [
    {
      name: `refused: ${rejection.rejected.holderId} · f${rejection.rejected.fence}`,
      color: refusedColor,
      range:
        rejected === undefined
          ? null
          : [rejected.startWallMillis, Math.max(rejected.endWallMillis, rejected.startWallMillis + 1)],
    },
    {
      name: `floor: ${rejection.current.holderId} · f${rejection.current.fence}`,
      color: floorColor,
      range:
        current === undefined
          ? null
          : [current.startWallMillis, Math.max(current.endWallMillis, current.startWallMillis + 1)],
    },
  ];
  return (
    <div className="generations-chart" data-testid="generations-chart">
      <BarChart
        layout="vertical"
        width={widthPx}
        height={150}
        data={rows}
        margin={{ top: 20, right: 24, left: 8, bottom: 4 }}
      >
        <CartesianGrid stroke="#eee" />
        <XAxis
          type="number"
          domain={[axis.fromWallMillis, axis.toWallMillis]}
          tickFormatter={(v: number) => formatWallTime(v)}
          allowDataOverflow
        />
        <YAxis type="category" dataKey="name" width={190} />
        <Tooltip
          formatter={(v) => (Array.isArray(v) ? v.map((t) => formatWallTime(Number(t))).join(' – ') : String(v))}
        />
        {restarts.map((r) => (
          <ReferenceArea
            key={`g${r.stamp.position}`}
            x1={r.stamp.wallMillis}
            x2={Math.max(r.graceEndWallMillis, r.stamp.wallMillis + 1)}
            fill="#facc15"
            fillOpacity={0.25}
            ifOverflow="hidden"
          />
        ))}
        {restarts.map((r) => (
          <ReferenceLine
            key={`r${r.stamp.position}`}
            x={r.stamp.wallMillis}
            stroke="#111827"
            strokeDasharray="6 3"
            label={{ value: 'restart', position: 'top', fontSize: 11 }}
          />
        ))}
        {floor.admitted !== undefined && (
          <ReferenceLine
            x={floor.admitted.wallMillis}
            stroke="#0f766e"
            label={{ value: 'floor pushed', position: 'top', fontSize: 11 }}
          />
        )}
        <ReferenceLine
          x={rejection.stamp.wallMillis}
          stroke="#dc2626"
          strokeWidth={2}
          label={{ value: 'refused', position: 'top', fontSize: 11, fill: '#dc2626' }}
        />
        <Bar dataKey="range" isAnimationActive={false} minPointSize={2}>
          {rows.map((row) => (
            <Cell key={row.name} fill={row.color} />
          ))}
        </Bar>
      </BarChart>
    </div>
  );
}
