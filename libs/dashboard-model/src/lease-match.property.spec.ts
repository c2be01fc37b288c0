import fc from 'fast-check';
import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { foldEvents } from './fold-events.js';
import type { LaneFilter } from './lane-filter.js';
import { compileLeaseMatch, countMatches, filterLanes, MatchingEvents, matchingRejections } from './lease-match.js';
import { arbitraryLog } from './testing/arbitrary-log.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';

/** Each field absent half the time, so every mix of fields (a lane-only filter alone, too) is drawn often. */
const half = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.option(arbitrary, { nil: undefined, freq: 2 });
const filter: fc.Arbitrary<LaneFilter> = fc
  .record({
    resource: half(fc.constantFrom('slot', 'db:*', 'LEADER', 'x')),
    holder: half(fc.constantFrom('agent-a', 'AGENT-B', 'c', 'nobody')),
    hasRejections: half(fc.constant(true as const)),
    fenceMin: half(fc.integer({ min: 0, max: 8 })),
    fenceMax: half(fc.integer({ min: 0, max: 12 })),
    hideUnmatchedLanes: half(fc.constant(true as const)),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as LaneFilter);

/** The oracle's reading of one filter, written out plainly (no shared helper with the code under test). */
function naive(f: LaneFilter) {
  const holderOk = (id: string) => f.holder === undefined || id.toLowerCase().includes(f.holder.toLowerCase());
  const fenceOk = (fence: number) =>
    (f.fenceMin === undefined || fence >= f.fenceMin) && (f.fenceMax === undefined || fence <= f.fenceMax);
  const resourceOk = (resource: string) =>
    f.resource === undefined ||
    (f.resource.includes('*')
      ? new RegExp(`^${f.resource.replace('*', '.*')}$`, 'i').test(resource)
      : resource.toLowerCase().includes(f.resource.toLowerCase()));
  const side = (hf: { holderId: string; fence: number }) => holderOk(hf.holderId) && fenceOk(hf.fence);
  return { holderOk, fenceOk, resourceOk, side };
}

describe('the filters count what a brute-force filter of the fold finds', () => {
  it(
    'leases, rejections and lanes with a match, for any log and filter',
    () => {
      fc.assert(
        fc.property(arbitraryLog(60), filter, (events, f) => {
          // Arrange
          const state = foldEvents(events);
          const { side, resourceOk } = naive(f);
          const byLease = f.holder !== undefined || f.fenceMin !== undefined || f.fenceMax !== undefined;
          const kept = [...state.lanes.values()].filter(
            (lane) =>
              resourceOk(lane.resource) &&
              (f.hasRejections !== true || lane.rejections.length > 0) &&
              (f.hideUnmatchedLanes !== true ||
                !byLease ||
                lane.generations.some(side) ||
                lane.rejections.some((r) => side(r.rejected) || side(r.current))),
          );
          const leases = kept.flatMap((lane) => lane.generations).filter((g) => !byLease || side(g));
          const rejections = state.rejections.filter(
            (r) =>
              kept.some((lane) => lane.resource === r.resource) && (!byLease || side(r.rejected) || side(r.current)),
          );

          // Act
          const match = compileLeaseMatch(f);
          const lanes = filterLanes(state, match).lanes;
          const counts = countMatches(lanes, match);

          // Assert
          expect(lanes.map((l) => l.resource).sort()).toEqual(kept.map((l) => l.resource).sort());
          expect(counts.leases).toBe(leases.length);
          expect(counts.rejections).toBe(rejections.length);
          expect(matchingRejections(state, match)).toEqual(rejections);
        }),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it(
    'matching events as of any position, found incrementally while the log grows, equal a scan of the log',
    () => {
      fc.assert(
        fc.property(
          arbitraryLog(60),
          filter,
          fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
          fc.nat(),
          (events, f, cuts, focusSeed) => {
            const { side, resourceOk } = naive(f);
            const byLease = f.holder !== undefined || f.fenceMin !== undefined || f.fenceMax !== undefined;
            const active = byLease || f.resource !== undefined; // "with rejections" and "hide" alone only keep lanes
            const oracle = (recorded: RecordedEvent): boolean => {
              const d = recorded.event.data as Partial<{
                resource: string;
                holderId: string;
                fence: number;
                rejected: { holderId: string; fence: number };
                current: { holderId: string; fence: number };
              }>;
              if (d.resource === undefined) return !active;
              if (!resourceOk(d.resource)) return false;
              if (!byLease) return true;
              if (d.rejected !== undefined && d.current !== undefined) return side(d.rejected) || side(d.current);
              return (
                d.holderId !== undefined && d.fence !== undefined && side({ holderId: d.holderId, fence: d.fence })
              );
            };
            const matching = new MatchingEvents(compileLeaseMatch(f));
            for (const cut of [...cuts.map((c) => c % (events.length + 1)), events.length].sort((a, b) => a - b)) {
              matching.update(events.slice(0, cut));
              const seen = events.slice(0, cut);
              const asOf = seen[seen.length - 1]?.position ?? 0;
              const expected = seen.filter(oracle).map((e) => e.position);
              expect(matching.countUpTo(asOf)).toBe(expected.length);
              const focus = (seen[focusSeed % Math.max(1, seen.length)]?.position ?? 0) + 0;
              const before = expected.filter((p) => p < focus).slice(-3);
              const after = expected.filter((p) => p >= focus).slice(0, 4);
              expect(matching.around(focus, 3, asOf)).toEqual([...before, ...after]);
            }
          },
        ),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );
});
