import fc from 'fast-check';
import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { cloneViewState } from './clone-view-state.js';
import { summarizeExposures } from './exposure.js';
import { foldEvents } from './fold-events.js';
import { ARBITRARY_RESOURCES, arbitraryLog } from './testing/arbitrary-log.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';
import { nearestRankPercentile } from './testing/nearest-rank.js';

interface NaiveExposure {
  status: 'closed' | 'open' | 'unknown';
  fenceFirst: boolean;
  evidencePosition: number | undefined;
  durationMillis: number | undefined;
}

/**
 * The oracle: for each `LeaseGranted` of `resource`, a fresh scan of the raw log — backwards for
 * an earlier holder, a reservation and the floor before the grant, forwards for the first
 * evidence and for the event that ends the generation. No state is carried between grants.
 */
function naiveExposures(events: readonly RecordedEvent[], resource: string): NaiveExposure[] {
  const result: NaiveExposure[] = [];
  events.forEach((recorded, index) => {
    const { event } = recorded;
    if (event.type !== 'LeaseGranted' || event.data.resource !== resource) return;
    const { fence, holderId } = event.data;
    const before = events.slice(0, index);
    const hadHolder = before.some(({ event: e }) =>
      e.type === 'CoordinatorStarted'
        ? e.data.carriedLeases.some((c) => c.resource === resource)
        : (e.type === 'LeaseGranted' ||
            e.type === 'LeaseRenewed' ||
            e.type === 'LeaseReleased' ||
            e.type === 'LeaseExpired') &&
          e.data.resource === resource,
    );
    if (!hadHolder) return;
    const floorOf = (e: RecordedEvent['event']): number | undefined => {
      if (!('resource' in e.data) || e.data.resource !== resource) return undefined;
      if (e.type === 'FenceAdmitted' || e.type === 'FenceFloorReported') return e.data.fence;
      if (e.type === 'FenceRejected') return e.data.current.fence;
      return undefined;
    };
    let reservation: { fence: number; settled: boolean } | undefined;
    for (const { event: e } of before) {
      if (!('resource' in e.data) || e.data.resource !== resource) continue;
      if (e.type === 'FenceReserved') reservation = { fence: e.data.fence, settled: false };
      else if ((e.type === 'FenceBurned' || e.type === 'LeaseGranted') && e.data.fence === reservation?.fence)
        reservation.settled = true;
    }
    const fenceFirst = reservation !== undefined && reservation.fence === fence && !reservation.settled;
    if (before.some(({ event: e }) => (floorOf(e) ?? 0) >= fence)) {
      result.push({ status: 'closed', fenceFirst, evidencePosition: recorded.position, durationMillis: 0 });
      return;
    }
    let exposure: NaiveExposure = {
      status: 'open',
      fenceFirst,
      evidencePosition: undefined,
      durationMillis: undefined,
    };
    for (const later of events.slice(index + 1)) {
      const e = later.event;
      const ends =
        e.type === 'CoordinatorStarted'
          ? !e.data.carriedLeases.some((c) => c.resource === resource && c.fence === fence && c.holderId === holderId)
          : (e.type === 'LeaseGranted' && e.data.resource === resource) ||
            ((e.type === 'LeaseReleased' || e.type === 'LeaseExpired') &&
              e.data.resource === resource &&
              e.data.fence === fence &&
              e.data.holderId === holderId);
      if (ends) {
        exposure = { ...exposure, status: 'unknown' };
        break;
      }
      if ((floorOf(e) ?? 0) >= fence) {
        const g = event.data;
        const millis = g.bootId === e.data.bootId ? e.data.atMillis - g.atMillis : e.data.wallMillis - g.wallMillis;
        exposure = {
          ...exposure,
          status: 'closed',
          evidencePosition: later.position,
          durationMillis: Math.max(0, millis),
        };
        break;
      }
    }
    result.push(exposure);
  });
  return result;
}

describe('exposure windows (property)', () => {
  it(
    'equal a brute-force scan of the log, at any cut, and survive a clone',
    () => {
      fc.assert(
        fc.property(arbitraryLog(90), fc.double({ min: 0, max: 1, noNaN: true }), (log, cutFraction) => {
          const cut = Math.floor(cutFraction * log.length);
          const prefix = log.slice(0, cut);
          const atCut = foldEvents(prefix);
          const copy = cloneViewState(atCut);
          foldEvents(log.slice(cut), atCut); // the original folds on; the copy must not move
          const head = atCut;
          for (const [state, events] of [
            [copy, prefix],
            [head, log],
          ] as const) {
            for (const resource of ARBITRARY_RESOURCES) {
              const expected = naiveExposures(events, resource);
              const lane = state.lanes.get(resource);
              const actual = (lane?.generations ?? [])
                .filter((g) => g.exposure !== undefined)
                .map((g) => ({
                  status: g.exposure?.status,
                  fenceFirst: g.exposure?.fenceFirst,
                  evidencePosition: g.exposure?.evidence?.position,
                  durationMillis: g.exposure?.durationMillis,
                }));
              expect(actual).toEqual(expected);
              if (lane === undefined) continue;
              const measured = expected.flatMap((e) => (e.durationMillis === undefined ? [] : [e.durationMillis]));
              measured.sort((a, b) => a - b);
              const summary = summarizeExposures(lane);
              expect(summary).toMatchObject({
                handovers: expected.length,
                measured: measured.length,
                unknown: expected.filter((e) => e.status === 'unknown').length,
                open: expected.filter((e) => e.status === 'open').length,
                fenceFirst: expected.filter((e) => e.fenceFirst).length,
                maxMillis: measured.length === 0 ? undefined : Math.max(...measured),
                p50Millis: nearestRankPercentile(measured, 50),
                p99Millis: nearestRankPercentile(measured, 99),
              });
            }
          }
        }),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );
});
