import fc from 'fast-check';
import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import {
  currentHolders,
  DEFAULT_HOLDER_SORT,
  filterHolderRows,
  HOLDER_SORT_KEYS,
  sortHolderRows,
  type HolderRow,
} from './current-holders.js';
import { foldEvents } from './fold-events.js';
import { arbitraryLog } from './testing/arbitrary-log.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';
import { LogBuilder } from './testing/log-builder.js';
import { ViewHistory } from './view-history.js';

interface NaiveRow {
  holderId: string;
  fence: number;
  heldForMillis: number;
  expiresInMillis: number | undefined;
  renewals: number;
}

/**
 * The oracle: a brute-force scan of the raw events, per resource, keeping only a list of
 * generations (no lanes, no checkpoints, no in-place state), then the open last one of each.
 */
function naiveCurrentHolders(events: readonly RecordedEvent[], asOfWallMillis: number): Map<string, NaiveRow> {
  interface G {
    holderId: string;
    fence: number;
    start: number;
    expiry: number | undefined;
    renewals: number;
    ended: boolean;
  }
  const gens = new Map<string, G[]>();
  const listOf = (resource: string): G[] => {
    let list = gens.get(resource);
    if (list === undefined) gens.set(resource, (list = []));
    return list;
  };
  const openOf = (resource: string): G | undefined => {
    const list = listOf(resource);
    const last = list[list.length - 1];
    return last !== undefined && !last.ended ? last : undefined;
  };
  for (const { event } of events) {
    const d = event.data;
    const project = (expiresAtMillis: number): number => d.wallMillis + (expiresAtMillis - d.atMillis);
    if (event.type === 'CoordinatorStarted') {
      for (const [resource] of gens) {
        const o = openOf(resource);
        const carried = event.data.carriedLeases.find((c) => c.resource === resource);
        if (o !== undefined && !(carried !== undefined && carried.fence === o.fence && carried.holderId === o.holderId))
          o.ended = true;
      }
      for (const c of event.data.carriedLeases) {
        const o = openOf(c.resource);
        if (o !== undefined && o.fence === c.fence && o.holderId === c.holderId) o.expiry = project(c.expiresAtMillis);
        else if (o === undefined && !listOf(c.resource).some((g) => g.fence === c.fence))
          listOf(c.resource).push({
            holderId: c.holderId,
            fence: c.fence,
            start: d.wallMillis,
            expiry: project(c.expiresAtMillis),
            renewals: 0,
            ended: false,
          });
      }
      continue;
    }
    if (!('resource' in event.data)) continue;
    const resource = event.data.resource;
    const o = openOf(resource);
    const known = (fence: number): boolean => listOf(resource).some((g) => g.fence === fence);
    if (event.type === 'LeaseGranted') {
      if (o !== undefined) o.ended = true;
      listOf(resource).push({
        holderId: event.data.holderId,
        fence: event.data.fence,
        start: d.wallMillis,
        expiry: project(event.data.expiresAtMillis),
        renewals: 0,
        ended: false,
      });
    } else if (event.type === 'LeaseRenewed') {
      if (o !== undefined && o.fence === event.data.fence && o.holderId === event.data.holderId) {
        o.expiry = project(event.data.expiresAtMillis);
        o.renewals += 1;
      } else if (o === undefined && !known(event.data.fence))
        listOf(resource).push({
          holderId: event.data.holderId,
          fence: event.data.fence,
          start: d.wallMillis,
          expiry: project(event.data.expiresAtMillis),
          renewals: 1,
          ended: false,
        });
    } else if (event.type === 'LeaseReleased' || event.type === 'LeaseExpired') {
      if (o !== undefined && o.fence === event.data.fence && o.holderId === event.data.holderId) o.ended = true;
      // The end of a generation whose grant is not in the log still names its fence as used.
      else if (o === undefined && !known(event.data.fence))
        listOf(resource).push({
          holderId: event.data.holderId,
          fence: event.data.fence,
          start: d.wallMillis,
          expiry: undefined,
          renewals: 0,
          ended: true,
        });
    }
  }
  const rows = new Map<string, NaiveRow>();
  for (const [resource] of gens) {
    const o = openOf(resource);
    if (o === undefined) continue;
    rows.set(resource, {
      holderId: o.holderId,
      fence: o.fence,
      heldForMillis: asOfWallMillis - o.start,
      expiresInMillis: o.expiry === undefined ? undefined : o.expiry - asOfWallMillis,
      renewals: o.renewals,
    });
  }
  return rows;
}

const essentials = (rows: readonly HolderRow[]): Map<string, NaiveRow> =>
  new Map(
    rows.map((r) => [
      r.resource,
      {
        holderId: r.holderId,
        fence: r.fence,
        heldForMillis: r.heldForMillis,
        expiresInMillis: r.expiresInMillis,
        renewals: r.renewals,
      },
    ]),
  );

describe('currentHolders', () => {
  it(
    'equals a brute-force scan of the events up to the position, at random positions and as-of times of unruly logs',
    () => {
      fc.assert(
        fc.property(
          arbitraryLog(),
          fc.array(
            fc.record({ p: fc.double({ min: 0, max: 1, noNaN: true }), dt: fc.integer({ min: -5_000, max: 60_000 }) }),
            {
              minLength: 1,
              maxLength: 8,
            },
          ),
          (events, probes) => {
            // Arrange
            const history = new ViewHistory({ checkpointEvery: 5 });
            events.forEach((e) => history.append(e));
            for (const probe of probes) {
              const position = Math.round(probe.p * history.position);
              const prefix = events.filter((e) => e.position <= position);
              const asOf = (prefix[prefix.length - 1]?.event.data.wallMillis ?? 0) + probe.dt;
              // Act
              const rows = currentHolders(history.stateAt(position), asOf);
              // Assert
              expect(essentials(rows)).toEqual(naiveCurrentHolders(prefix, asOf));
            }
          },
        ),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('says whether the projected expiry is ahead of the as-of time or already passed without a LeaseExpired in the log', () => {
    // Arrange: one grant with a 10 s TTL, renewed once; a second resource granted and released.
    const log = new LogBuilder();
    log.started();
    log.granted('slot-a', 'agent-1', 1, { ttlMillis: 10_000 });
    log.advance(4_000);
    log.renewed('slot-a', 'agent-1', 1, { ttlMillis: 10_000 });
    log.granted('slot-b', 'agent-2', 2, { ttlMillis: 10_000 });
    log.released('slot-b', 'agent-2', 2);
    const state = foldEvents(log.events);
    const renewedAt = log.events[2]!.event.data.wallMillis;

    // Act
    const ahead = currentHolders(state, renewedAt + 3_000);
    const passed = currentHolders(state, renewedAt + 12_000);

    // Assert
    expect(ahead).toEqual([
      expect.objectContaining({
        resource: 'slot-a',
        holderId: 'agent-1',
        renewals: 1,
        heldForMillis: 7_000,
        expiryKind: 'ahead',
        expiresInMillis: 7_000,
        expirySource: 'renewed',
      }),
    ]);
    expect(passed[0]).toMatchObject({
      expiryKind: 'passed',
      expiresInMillis: -2_000,
      expiresAtWallMillis: renewedAt + 10_000,
    });
  });
});

describe('sortHolderRows and filterHolderRows', () => {
  const row = (resource: string, holderId: string, fence: number, extra: Partial<HolderRow> = {}): HolderRow => ({
    resource,
    holderId,
    fence,
    grantPosition: fence,
    heldSinceWallMillis: 0,
    heldForMillis: fence * 10,
    expiryKind: 'ahead',
    expiresAtWallMillis: 1,
    expiresInMillis: 100 - fence,
    expirySource: 'granted',
    renewals: fence % 3,
    carriedAcross: 0,
    ...extra,
  });
  const rows = [
    row('b', 'agent-2', 5),
    row('a', 'agent-1', 9),
    row('c', 'agent-1', 2, { expiresInMillis: undefined, expiryKind: 'unknown' }),
  ];

  it('sorts by each column both ways, ties by resource, an unknown expiry last when ascending', () => {
    expect(sortHolderRows(rows, DEFAULT_HOLDER_SORT).map((r) => r.resource)).toEqual(['a', 'b', 'c']);
    expect(sortHolderRows(rows, { key: 'fence', direction: 'descending' }).map((r) => r.fence)).toEqual([9, 5, 2]);
    expect(sortHolderRows(rows, { key: 'holder', direction: 'ascending' }).map((r) => r.resource)).toEqual([
      'a',
      'c',
      'b',
    ]);
    expect(sortHolderRows(rows, { key: 'expiresIn', direction: 'ascending' }).map((r) => r.resource)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(sortHolderRows(rows, { key: 'heldFor', direction: 'descending' }).map((r) => r.resource)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(sortHolderRows(rows, { key: 'renewals', direction: 'ascending' }).map((r) => r.renewals)).toEqual([0, 2, 2]);
  });

  it('orders every column as a total order: ascending is the reverse of descending up to ties', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ r: fc.string({ maxLength: 3 }), h: fc.constantFrom('x', 'y'), f: fc.nat(20) }), {
          maxLength: 30,
        }),
        fc.constantFrom(...HOLDER_SORT_KEYS),
        (specs, key) => {
          const unique = [...new Map(specs.map((s) => [s.r, row(s.r, s.h, s.f)])).values()];
          const up = sortHolderRows(unique, { key, direction: 'ascending' });
          const down = sortHolderRows(unique, { key, direction: 'descending' });
          expect(up).toHaveLength(unique.length);
          expect(new Set(up)).toEqual(new Set(unique));
          for (let i = 1; i < up.length; i += 1) {
            const again = sortHolderRows([up[i]!, up[i - 1]!], { key, direction: 'ascending' });
            expect(again[0]).toBe(up[i - 1]);
          }
          expect(down.length).toBe(up.length);
        },
      ),
      fcParameters(200),
    );
  });

  it('keeps rows whose resource or holder contains the text, case-insensitively', () => {
    expect(filterHolderRows(rows, '  AGENT-1 ').map((r) => r.resource)).toEqual(['a', 'c']);
    expect(filterHolderRows(rows, 'b').map((r) => r.resource)).toEqual(['b']);
    expect(filterHolderRows(rows, '')).toHaveLength(3);
    expect(filterHolderRows(rows, 'nothing')).toEqual([]);
  });
});
