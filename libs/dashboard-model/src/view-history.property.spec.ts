import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { synthesizeEvents } from './synthetic.js';
import { arbitraryLog } from './testing/arbitrary-log.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';
import { foldEvents } from './fold-events.js';
import { ViewHistory } from './view-history.js';

describe('ViewHistory', () => {
  it(
    'folds the same events live (one at a time, with checkpoints) and by replay into equal states',
    () => {
      fc.assert(
        fc.property(arbitraryLog(), fc.integer({ min: 1, max: 7 }), (events, checkpointEvery) => {
          // Arrange
          const live = new ViewHistory({ checkpointEvery });

          // Act
          for (const recorded of events) {
            live.append(recorded);
            live.stateAt(Math.max(0, recorded.position - 3)); // interleave jumps with live folding
          }

          // Assert
          expect(live.head).toEqual(foldEvents(events));
        }),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it(
    'rebuilds any earlier position from the nearest checkpoint exactly as a replay of the prefix',
    () => {
      fc.assert(
        fc.property(
          arbitraryLog(),
          fc.integer({ min: 1, max: 9 }),
          fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
          (events, checkpointEvery, probes) => {
            // Arrange
            const history = new ViewHistory({ checkpointEvery });
            for (const recorded of events) history.append(recorded);
            const last = history.position;

            for (const probe of probes) {
              const position = last === 0 ? 0 : probe % (last + 2);
              // Act
              const state = history.stateAt(position);
              // Assert
              expect(state).toEqual(foldEvents(events.filter((e) => e.position <= position)));
            }
          },
        ),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('does not let later live folding change a state it returned for an earlier position', () => {
    // Arrange
    const events = synthesizeEvents({ seed: 7, resources: 20, generations: 200, rejections: 20, restarts: 2 });
    const history = new ViewHistory({ checkpointEvery: 50 });
    const half = Math.floor(events.length / 2);
    events.slice(0, half).forEach((e) => history.append(e));
    const earlier = history.stateAt(half - 30);
    const snapshot = structuredClone(earlier);

    // Act
    events.slice(half).forEach((e) => history.append(e));

    // Assert
    expect(earlier).toEqual(snapshot);
    expect(history.stateAt(half - 30)).toEqual(foldEvents(events.slice(0, half - 30)));
  });

  it('answers the position as of a wall time with the last event at or before it', () => {
    // Arrange
    const events = synthesizeEvents({ seed: 3, resources: 5, generations: 30, rejections: 3, restarts: 1 });
    const history = new ViewHistory();
    events.forEach((e) => history.append(e));
    const target = events[40]!;

    // Act
    const position = history.positionAtWall(target.event.data.wallMillis);

    // Assert
    expect(position).toBeGreaterThanOrEqual(target.position);
    expect(history.index.at(position)?.event.data.wallMillis).toBe(target.event.data.wallMillis);
    expect(history.positionAtWall(events[0]!.event.data.wallMillis - 1)).toBe(0);
  });

  it('rejects an option that is not a positive integer, naming the field and unit', () => {
    expect(() => new ViewHistory({ checkpointEvery: 0 })).toThrow(
      /checkpointEvery must be a positive integer \(positions\), got 0/,
    );
  });
});
