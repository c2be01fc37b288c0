import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { foldEvents } from './fold-events.js';
import { logRates } from './rates.js';
import { ViewHistory } from './view-history.js';

describe("a fresh log's first start", () => {
  // Arrange: a fresh log (start, a grant), then one real restart
  const log = new LogBuilder({ wallMillis: 1_780_000_000_000 });
  const start = log.started();
  log.advance(100).granted('slot', 'agent-a', 1);
  const restart = log.advance(1_500).restart('boot-b', { downMillis: 0, recoveredFence: 1 });
  const history = new ViewHistory();
  log.events.forEach((e) => history.append(e));

  it('is a start in the fold, not a restart: only the later boot is listed', () => {
    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(state.restarts.map((r) => r.stamp.position)).toEqual([restart.position]);
    expect(state.counts.CoordinatorStarted).toBe(2);
  });

  it('is not a marker that n / p jump to', () => {
    expect(history.index.nextMarker(0, 1)).toBe(restart.position);
    expect(history.index.nextMarker(restart.position, -1)).toBeUndefined();
    expect(history.index.markers().map((m) => m.position)).not.toContain(start.position);
  });

  it('is not counted in the restart rate', () => {
    // Act
    const rates = logRates(history.index, {
      asOfPosition: restart.position,
      fromWallMillis: 1_780_000_000_000,
      toWallMillis: 1_780_000_002_000,
      maxBins: 2,
    });

    // Assert: one restart, in the second bin
    expect(rates.bins.map((b) => b.restarts)).toEqual([0, 1]);
  });
});
