import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  foldEvents,
  type ExposureView,
  type GenerationEndKind,
  type HandoverPhase,
} from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { recordingCanvas } from '../testing/recording-canvas.js';
import { EXPOSURE_COLORS } from './draw-exposure.js';
import { DIMMED_ALPHA, TIMELINE_COLORS } from './draw-timeline.js';
import { drawLegendSwatch } from './legend-swatches.js';
import { holdersInView, LEGEND_SHAPES, TimelineLegend } from './timeline-legend.js';

describe('the legend', () => {
  it('has a swatch for every way a bar ends and every handover phase the lanes draw', () => {
    const ends = new Set(LEGEND_SHAPES.flatMap(({ swatch }) => (swatch.kind === 'end' ? [swatch.end] : [])));
    const phases = new Set(LEGEND_SHAPES.flatMap(({ swatch }) => (swatch.kind === 'handover' ? [swatch.phase] : [])));
    const allEnds: (GenerationEndKind | 'open')[] = ['released', 'expired', 'superseded', 'not-carried', 'open'];
    const allPhases: HandoverPhase[] = ['pending', 'admitted', 'active', 'burned'];

    expect([...ends].sort()).toEqual([...allEnds].sort());
    expect([...phases].sort()).toEqual([...allPhases].sort());
  });

  it('has a swatch for the exposure band, measured and not, drawn as the lanes draw it', () => {
    // Given: the statuses a band is drawn in (closed: amber; open and unknown: grey, one look)
    const statuses = new Set(
      LEGEND_SHAPES.flatMap(({ swatch }) => (swatch.kind === 'exposure' ? [swatch.status] : [])),
    );
    const drawn: ExposureView['status'][] = ['closed', 'unknown'];
    expect([...statuses].sort()).toEqual(drawn.sort());
    // Then: each swatch fills the band in the lanes' colour (no DOM here: the plain fills), under the bar
    const fillsOf = (status: ExposureView['status']) => {
      const ctx = recordingCanvas();
      drawLegendSwatch(ctx, { kind: 'exposure', status }, () => 'holder');
      return ctx.rects.map((r) => r.fill);
    };
    expect(fillsOf('closed')[0]).toBe(EXPOSURE_COLORS.measured);
    expect(fillsOf('unknown')[0]).toBe(EXPOSURE_COLORS.unknown);
  });

  it("draws its swatches with the lanes' colours and alphas: the holder's colour, the end marks, dimmed", () => {
    const draw = (swatch: Parameters<typeof drawLegendSwatch>[1]) => {
      const ctx = recordingCanvas();
      drawLegendSwatch(ctx, swatch, (holderId) => `colour-of-${holderId}`);
      // Rectangles and path fills, in the order the swatch draws its kinds of shape.
      return [...ctx.rects, ...ctx.pathFills].map(({ fill, alpha }) => ({ style: fill, alpha }));
    };

    expect(draw({ kind: 'holder', holderId: 'agent-2' })).toEqual([{ style: 'colour-of-agent-2', alpha: 1 }]);
    expect(draw({ kind: 'end', end: 'released' }).map((f) => f.style)).toContain(TIMELINE_COLORS.released);
    expect(draw({ kind: 'end', end: 'expired' }).map((f) => f.style)).toContain(TIMELINE_COLORS.expired);
    expect(draw({ kind: 'end', end: 'superseded', reassigned: true }).map((f) => f.style)).toContain(
      TIMELINE_COLORS.reassigned,
    );
    expect(draw({ kind: 'dimmed' })[0]?.alpha).toBe(DIMMED_ALPHA);
    expect(draw({ kind: 'rejection', count: 1, doubleGrant: false })[0]).toEqual({
      style: TIMELINE_COLORS.rejection,
      alpha: 1,
    });
  });

  it('lists the holders with a bar in the window, when opened', () => {
    const log = new LogBuilder();
    log.granted('slot-a', 'agent-1', 1);
    log.advance(60_000);
    log.granted('slot-b', 'agent-2', 2);
    const lanes = [...foldEvents(log.events).lanes.values()];
    const late = lanes[1]!.generations[0]!.startWallMillis;
    const window = { fromWallMillis: late, toWallMillis: late + 1_000 };

    const closed = renderToString(<TimelineLegend lanes={lanes} window={window} />);
    const open = renderToString(<TimelineLegend lanes={lanes} window={window} defaultOpen />);

    expect(holdersInView(lanes, window)).toEqual(['agent-2']);
    expect(closed).toContain('data-testid="legend-toggle"');
    expect(closed).not.toContain('data-testid="legend"');
    expect(open).toContain('data-holder="agent-2"');
    expect(open).not.toContain('data-holder="agent-1"');
    expect(open.split('data-testid="legend-shape"').length - 1).toBe(LEGEND_SHAPES.length);
  });
});
