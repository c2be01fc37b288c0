import { createManualClock, FenceGate } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { reportFloors, type FloorSink } from './floor-reporter.js';
import { createManualTimers } from './testing/manual-timers.js';

/** A sink that records each report and answers `raised` for fences above `known`. */
const recordingSink = (known = 0): FloorSink & { readonly reports: string[]; failNext?: Error } => {
  const sink = {
    reports: [] as string[],
    failNext: undefined as Error | undefined,
    reportFloor: (resource: string, floor: { fence: number; holderId: string }) => {
      sink.reports.push(`${resource}:${floor.fence}:${floor.holderId}`);
      if (sink.failNext !== undefined) {
        const error = sink.failNext;
        sink.failNext = undefined;
        return Promise.reject(error);
      }
      return Promise.resolve({ raised: floor.fence > known, fenceCounter: Math.max(known, floor.fence) });
    },
  };
  return sink;
};

describe('reportFloors', () => {
  it('reports every gate that has a floor at once, then again each interval with the floor as it stands', async () => {
    // Arrange
    const timers = createManualTimers(createManualClock('timers'));
    const slotA = new FenceGate('slot-a', { initialFloor: { fence: 7, holderId: 'agent-a' } });
    const slotB = new FenceGate('slot-b'); // no floor yet: nothing to report
    const sink = recordingSink(7);
    const raised: string[] = [];
    // Act
    const reporter = reportFloors([slotA, slotB], sink, {
      everyMillis: 1000,
      timers,
      onRaised: (resource, counter) => raised.push(`${resource}@${counter}`),
    });
    await timers.waitForSleepers(1);
    slotA.admit({ resource: 'slot-a', holderId: 'agent-b', fence: 9 });
    slotB.admit({ resource: 'slot-b', holderId: 'agent-c', fence: 4 });
    await timers.advance(1000);
    await timers.waitForSleepers(1);
    await reporter.stop();
    // Assert
    expect(sink.reports).toEqual(['slot-a:7:agent-a', 'slot-a:9:agent-b', 'slot-b:4:agent-c']);
    expect(raised).toEqual(['slot-a@9']);
    expect(reporter.rounds).toBe(2);
  });

  it('passes a failed report to onError and tries again next round', async () => {
    // Arrange
    const timers = createManualTimers(createManualClock('timers'));
    const gate = new FenceGate('slot', { initialFloor: 3 });
    const sink = recordingSink();
    const failure = new Error('coordinator down');
    sink.failNext = failure;
    const errors: unknown[] = [];
    // Act
    const reporter = reportFloors([gate], sink, { everyMillis: 50, timers, onError: (error) => errors.push(error) });
    await timers.waitForSleepers(1);
    await timers.advance(50);
    await timers.waitForSleepers(1);
    await reporter.stop();
    // Assert: the unknown holder of a bare-number floor is reported as such
    expect(errors).toEqual([failure]);
    expect(sink.reports).toEqual(['slot:3:(unknown)', 'slot:3:(unknown)']);
  });

  it('refuses an interval that is not a positive integer, naming it', () => {
    expect(() => reportFloors([], recordingSink(), { everyMillis: 0 })).toThrow(/reportFloors: everyMillis/);
  });
});
