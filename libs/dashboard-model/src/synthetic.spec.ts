import { RecordedEventSchema } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { foldEvents } from './fold-events.js';
import { synthesizeEvents } from './synthetic.js';

describe('synthesizeEvents', () => {
  it('writes a log every event of which passes the protocol schema, with contiguous positions', () => {
    // Act: a log small enough to parse quickly on a busy CI machine, large enough to hold every
    // event type (asserted below, so the schema check covers each kind the generator writes).
    const events = synthesizeEvents({
      seed: 1,
      resources: 8,
      generations: 120,
      rejections: 20,
      restarts: 2,
      snapshotEvery: 100,
    });

    // Assert
    expect(new Set(events.map((e) => e.event.type))).toEqual(
      new Set([
        'CoordinatorStarted',
        'LeaseGranted',
        'LeaseRenewed',
        'LeaseReleased',
        'LeaseExpired',
        'FenceAdmitted',
        'FenceRejected',
        'CoordinatorCheckpointed',
        'SnapshotTaken',
      ]),
    );
    for (const recorded of events) expect(RecordedEventSchema.safeParse(recorded).success).toBe(true);
    expect(events.map((e) => e.position)).toEqual(events.map((_, i) => i + 1));
  }, 20_000); // CPU-bound (zod parses each event): generous for a busy CI machine

  it('gives the same log for the same seed and a different one for another seed', () => {
    const options = { resources: 10, generations: 100, rejections: 10 };
    expect(synthesizeEvents({ seed: 9, ...options })).toEqual(synthesizeEvents({ seed: 9, ...options }));
    expect(synthesizeEvents({ seed: 10, ...options })).not.toEqual(synthesizeEvents({ seed: 9, ...options }));
  });

  it('produces the requested lanes, generations, rejections and restarts, with leases carried across restarts', () => {
    // Act
    const state = foldEvents(
      synthesizeEvents({ seed: 2, resources: 12, generations: 150, rejections: 24, restarts: 2 }),
    );

    // Assert
    const generations = [...state.lanes.values()].reduce((n, lane) => n + lane.generations.length, 0);
    expect(state.lanes.size).toBe(12);
    expect(generations).toBe(150);
    expect(state.rejections).toHaveLength(24);
    expect(state.restarts).toHaveLength(2); // the first start of the synthetic log is not a restart
    expect(state.restarts.some((r) => r.carriedLeases.length > 0)).toBe(true);
    expect(state.anomalyCount).toBe(0);
  }, 20_000); // CPU-bound, as above

  it('rejects a size that is not an integer, naming the field', () => {
    expect(() => synthesizeEvents({ seed: 1, resources: 2.5 })).toThrow(/resources must be an integer ≥ 1, got 2.5/);
  });
});
