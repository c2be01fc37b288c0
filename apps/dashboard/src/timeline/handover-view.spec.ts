import { describe, expect, it } from 'vitest';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { cloneViewState, evolveView, foldEvents } from '@lease-fence/dashboard-model';
import { recordingCanvas } from '../testing/recording-canvas.js';
import { drawTimeline, TIMELINE_COLORS } from './draw-timeline.js';
import { layoutLane } from './lane-layout.js';

describe('fence-first handovers on the lane', () => {
  it('go pending → admitted → active, and the grant of the reserved fence is no anomaly', () => {
    // Arrange
    const log = new LogBuilder();
    log.started();
    const reserved = log.advance(10).reserved('deploy', 'agent-b', 1);
    log.advance(20);
    const pending = foldEvents(log.events);
    const admitted = log.admitted('deploy', 'agent-b', 1, 'gate-7');
    log.granted('deploy', 'agent-b', 1);

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(pending.lanes.get('deploy')?.handovers).toEqual([
      expect.objectContaining({
        phase: 'pending',
        fence: 1,
        reserved: expect.objectContaining({ position: reserved.position }),
      }),
    ]);
    expect(state.lanes.get('deploy')?.handovers).toEqual([
      expect.objectContaining({
        phase: 'active',
        fence: 1,
        holderId: 'agent-b',
        gateId: 'gate-7',
        settled: expect.objectContaining({ position: admitted.position + 1 }),
      }),
    ]);
    expect(state.anomalies).toEqual([]);
    expect(state.lanes.get('deploy')?.generations).toHaveLength(1);
  });

  it('end burned when no gate admitted the fence, and the next grant is above it', () => {
    const log = new LogBuilder();
    log.started();
    log.reserved('deploy', 'agent-b', 1);
    log.advance(2_000).burned('deploy', 'agent-b', 1);
    log.reserved('deploy', 'agent-b', 2);
    log.admitted('deploy', 'agent-b', 2);
    log.granted('deploy', 'agent-b', 2);

    const state = foldEvents(log.events);

    expect(state.lanes.get('deploy')?.handovers.map((h) => [h.fence, h.phase, h.burnReason])).toEqual([
      [1, 'burned', 'fence-unavailable'],
      [2, 'active', undefined],
    ]);
    expect(state.fenceCounter).toBe(2);
    expect(state.anomalies).toEqual([]);
  });

  it('a clone keeps its pending handover when the original folds on', () => {
    const log = new LogBuilder();
    log.started();
    log.reserved('deploy', 'agent-b', 1);
    const state = foldEvents(log.events);
    const copy = cloneViewState(state);
    evolveView(state, log.burned('deploy', 'agent-b', 1, 'coordinator-restarted'));
    expect(copy.lanes.get('deploy')?.handovers[0]?.phase).toBe('pending');
    expect(state.lanes.get('deploy')?.handovers[0]?.phase).toBe('burned');
  });

  it('are laid out from the reservation to what settled them, or to the deadline while pending', () => {
    const log = new LogBuilder({ wallMillis: 1_000_000 });
    log.started();
    log.reserved('deploy', 'agent-b', 1, { timeoutMillis: 400 });
    const lane = foldEvents(log.events).lanes.get('deploy')!;
    const row = layoutLane(lane, { window: { fromWallMillis: 1_000_000, toWallMillis: 1_001_000 }, widthPx: 1_000 });
    expect(row.handovers).toEqual([expect.objectContaining({ x: 0, width: 400 })]);
  });

  it('are drawn as a strip on the lane in the colour of their phase', () => {
    const log = new LogBuilder({ wallMillis: 1_000_000 });
    log.started();
    log.reserved('deploy', 'agent-b', 1);
    log.advance(300).burned('deploy', 'agent-b', 1);
    const lane = foldEvents(log.events).lanes.get('deploy')!;
    const window = { fromWallMillis: 1_000_000, toWallMillis: 1_001_000 };
    const ctx = recordingCanvas();

    drawTimeline(ctx, [{ y: 24, layout: layoutLane(lane, { window, widthPx: 1_000 }), highlighted: false }], {
      widthPx: 1_100,
      heightPx: 60,
      rowHeightPx: 22,
      labelWidthPx: 100,
      axisHeightPx: 24,
      window,
      restarts: [],
      colorOf: () => '#888',
    });

    expect(ctx.rects).toContainEqual({ fill: TIMELINE_COLORS.handoverBurned, x: 100, y: 25, w: 300, h: 3, alpha: 1 });
  });
});
