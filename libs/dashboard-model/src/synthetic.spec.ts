import { RecordedEventSchema } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { foldEvents } from './fold-events.js';
import { synthesizeEvents } from './synthetic.js';

describe('synthesizeEvents', () => {
  it('writes a log every event of which passes the protocol schema, with contiguous positions', () => {
    // Act
    const events = synthesizeEvents({
      seed: 1,
      resources: 30,
      generations: 600,
      rejections: 60,
      restarts: 2,
      snapshotEvery: 500,
    });

    // Assert
    for (const recorded of events) expect(RecordedEventSchema.safeParse(recorded).success).toBe(true);
    expect(events.map((e) => e.position)).toEqual(events.map((_, i) => i + 1));
  });

  it('gives the same log for the same seed and a different one for another seed', () => {
    const options = { resources: 10, generations: 100, rejections: 10 };
    expect(synthesizeEvents({ seed: 9, ...options })).toEqual(synthesizeEvents({ seed: 9, ...options }));
    expect(synthesizeEvents({ seed: 10, ...options })).not.toEqual(synthesizeEvents({ seed: 9, ...options }));
  });

  it('produces the requested lanes, generations, rejections and restarts, with leases carried across restarts', () => {
    // Act
    const state = foldEvents(
      synthesizeEvents({ seed: 2, resources: 40, generations: 800, rejections: 80, restarts: 2 }),
    );

    // Assert
    const generations = [...state.lanes.values()].reduce((n, lane) => n + lane.generations.length, 0);
    expect(state.lanes.size).toBe(40);
    expect(generations).toBe(800);
    expect(state.rejections).toHaveLength(80);
    expect(state.restarts).toHaveLength(2); // the first start of the synthetic log is not a restart
    expect(state.restarts.some((r) => r.carriedLeases.length > 0)).toBe(true);
    expect(state.anomalyCount).toBe(0);
  });

  it('rejects a size that is not an integer, naming the field', () => {
    expect(() => synthesizeEvents({ seed: 1, resources: 2.5 })).toThrow(/resources must be an integer ≥ 1, got 2.5/);
  });
});
