import fc from 'fast-check';
import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { synthesizeEvents } from './synthetic.js';
import { ARBITRARY_RESOURCES, arbitraryLog } from './testing/arbitrary-log.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';
import { ViewHistory } from './view-history.js';
import { whoHeld } from './who-held.js';

/**
 * The oracle: a deliberately naive scan of the whole log for one resource, re-deriving every
 * generation's bar from the raw events (no incremental state, no checkpoints, no lookups).
 */
function naiveHolder(
  events: readonly RecordedEvent[],
  resource: string,
  wallMillis: number,
): { holderId: string; fence: number } | undefined {
  interface G {
    holderId: string;
    fence: number;
    start: number;
    expiry: number | undefined;
    end: { kind: string; wall: number } | undefined;
  }
  const gens: G[] = [];
  const open = (): G | undefined => {
    const last = gens[gens.length - 1];
    return last !== undefined && last.end === undefined ? last : undefined;
  };
  for (const { event } of events) {
    const d = event.data;
    const project = (expiresAtMillis: number): number => d.wallMillis + (expiresAtMillis - d.atMillis);
    if (event.type === 'CoordinatorStarted') {
      const carried = event.data.carriedLeases.find((c) => c.resource === resource);
      const o = open();
      if (o !== undefined && !(carried !== undefined && carried.fence === o.fence && carried.holderId === o.holderId))
        o.end = { kind: 'not-carried', wall: d.wallMillis };
      if (carried !== undefined) {
        const o2 = open();
        if (o2 !== undefined && o2.fence === carried.fence && o2.holderId === carried.holderId)
          o2.expiry = project(carried.expiresAtMillis);
        else if (o2 === undefined && !gens.some((g) => g.fence === carried.fence))
          gens.push({
            holderId: carried.holderId,
            fence: carried.fence,
            start: d.wallMillis,
            expiry: project(carried.expiresAtMillis),
            end: undefined,
          });
      }
      continue;
    }
    if (!('resource' in event.data) || event.data.resource !== resource) continue;
    const o = open();
    if (event.type === 'LeaseGranted') {
      if (o !== undefined) o.end = { kind: 'superseded', wall: d.wallMillis };
      gens.push({
        holderId: event.data.holderId,
        fence: event.data.fence,
        start: d.wallMillis,
        expiry: project(event.data.expiresAtMillis),
        end: undefined,
      });
    } else if (event.type === 'LeaseRenewed') {
      if (o !== undefined && o.fence === event.data.fence && o.holderId === event.data.holderId)
        o.expiry = project(event.data.expiresAtMillis);
      else if (o === undefined && !gens.some((g) => g.fence === event.data.fence))
        gens.push({
          holderId: event.data.holderId,
          fence: event.data.fence,
          start: d.wallMillis,
          expiry: project(event.data.expiresAtMillis),
          end: undefined,
        });
    } else if (event.type === 'LeaseReleased' || event.type === 'LeaseExpired') {
      const kind = event.type === 'LeaseReleased' ? 'released' : 'expired';
      if (o !== undefined && o.fence === event.data.fence && o.holderId === event.data.holderId)
        o.end = { kind, wall: d.wallMillis };
      else if (o === undefined && !gens.some((g) => g.fence === event.data.fence))
        gens.push({
          holderId: event.data.holderId,
          fence: event.data.fence,
          start: d.wallMillis,
          expiry: undefined,
          end: { kind, wall: d.wallMillis },
        });
    }
  }
  for (let i = gens.length - 1; i >= 0; i -= 1) {
    const g = gens[i]!;
    let end: number;
    if (g.end === undefined) end = g.expiry ?? g.start;
    else if (g.end.kind === 'released' || g.expiry === undefined) end = g.end.wall;
    else end = Math.min(g.expiry, g.end.wall);
    if (g.start <= wallMillis && wallMillis < Math.max(g.start, end)) return { holderId: g.holderId, fence: g.fence };
  }
  return undefined;
}

function answerOf(
  history: ViewHistory,
  position: number,
  resource: string,
  wallMillis: number,
): { holderId: string; fence: number } | undefined {
  const answer = whoHeld(history.stateAt(position), resource, wallMillis);
  return answer.held ? { holderId: answer.generation.holderId, fence: answer.generation.fence } : undefined;
}

describe('whoHeld', () => {
  it(
    'matches a naive scan of the log for random (resource, time, as-of position) probes on unruly logs',
    () => {
      fc.assert(
        fc.property(
          arbitraryLog(),
          fc.array(
            fc.record({
              resource: fc.constantFrom(...ARBITRARY_RESOURCES),
              t: fc.double({ min: 0, max: 1, noNaN: true }),
              p: fc.double({ min: 0, max: 1, noNaN: true }),
            }),
            { minLength: 1, maxLength: 10 },
          ),
          (events, probes) => {
            // Arrange
            const history = new ViewHistory({ checkpointEvery: 4 });
            events.forEach((e) => history.append(e));
            const walls = events.map((e) => e.event.data.wallMillis);
            const lo = Math.min(...walls) - 1_000;
            const hi = Math.max(...walls) + 20_000;
            for (const probe of probes) {
              const wallMillis = Math.round(lo + probe.t * (hi - lo));
              const position = Math.round(probe.p * history.position);
              const prefix = events.filter((e) => e.position <= position);
              // Act
              const actual = answerOf(history, position, probe.resource, wallMillis);
              // Assert
              expect(actual).toEqual(naiveHolder(prefix, probe.resource, wallMillis));
            }
          },
        ),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it(
    'matches a naive scan on a realistic synthetic log with restarts',
    () => {
      // Arrange
      const events = synthesizeEvents({ seed: 11, resources: 12, generations: 300, rejections: 30, restarts: 3 });
      const history = new ViewHistory({ checkpointEvery: 200 });
      events.forEach((e) => history.append(e));
      const resources = [...history.head.lanes.keys()];
      const lo = Math.ceil(events[0]!.event.data.wallMillis);
      const hi = Math.floor(events[events.length - 1]!.event.data.wallMillis);

      fc.assert(
        fc.property(fc.constantFrom(...resources), fc.integer({ min: lo, max: hi }), (resource, wallMillis) => {
          // Act
          const actual = answerOf(history, history.position, resource, wallMillis);
          // Assert
          expect(actual).toEqual(naiveHolder(events, resource, wallMillis));
        }),
        fcParameters(500),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('names the neighbours when nobody held the resource, and says when the resource is unknown', () => {
    // Arrange
    const events = synthesizeEvents({ seed: 5, resources: 1, generations: 10, rejections: 0, restarts: 0 });
    const history = new ViewHistory();
    events.forEach((e) => history.append(e));
    const [first, second] = history.head.lanes.values().next().value!.generations;

    // Act
    const gap = whoHeld(history.head, first!.resource, first!.endWallMillis);
    const unknown = whoHeld(history.head, 'nope', first!.startWallMillis);

    // Assert
    if (gap.held) expect(gap.generation.fence).toBe(second!.fence);
    else expect(gap).toMatchObject({ reason: 'free', previous: { fence: first!.fence } });
    expect(unknown).toMatchObject({ held: false, reason: 'unknown-resource' });
  });
});
