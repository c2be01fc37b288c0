import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from '@lease-fence/dashboard-model/testing';
import {
  DEFAULT_VIEW,
  describeUnreadableAsOf,
  formatViewUrl,
  isNewView,
  liveView,
  parseViewUrl,
  type ViewUrlState,
} from './url-state.js';

const wall = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) });
const text = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() === s && s !== '');

const view: fc.Arbitrary<ViewUrlState> = fc.record({
  at: fc.option(
    fc.oneof(
      fc.record({ kind: fc.constant('position' as const), position: fc.nat({ max: 10_000_000 }) }),
      fc.record({ kind: fc.constant('wall' as const), wallMillis: wall }),
    ),
    { nil: undefined },
  ),
  window: fc.option(
    fc
      .tuple(wall, fc.integer({ min: 1, max: 86_400_000 }))
      .map(([from, span]) => ({ fromWallMillis: from, toWallMillis: from + span })),
    { nil: undefined },
  ),
  spanMillis: fc.integer({ min: 10, max: 86_400_000 }),
  filter: fc.record(
    {
      resource: text,
      holder: text,
      hasRejections: fc.constant(true as const),
      fenceMin: fc.integer({ min: 1, max: 1000 }),
      fenceMax: fc.integer({ min: 1000, max: 5000 }),
      hideUnmatchedLanes: fc.constant(true as const),
    },
    { requiredKeys: [] },
  ),
  search: fc.oneof(fc.constant(''), text),
  resource: fc.option(text, { nil: undefined }),
  cursorWallMillis: fc.option(wall, { nil: undefined }),
  investigation: fc.option(
    fc.record({ position: fc.integer({ min: 1, max: 1_000_000 }), contextRadius: fc.nat({ max: 500 }) }),
    { nil: undefined },
  ),
  playing: fc.boolean(),
  speed: fc.constantFrom(1, 2, 10, 60),
});

describe('URL state', () => {
  it(
    'reads back every view it writes (permalinks reopen the same view)',
    () => {
      fc.assert(
        fc.property(view, (v) => {
          expect(parseViewUrl(formatViewUrl(v))).toEqual(v);
        }),
        fcParameters(500),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('drops the replay and its speed on the way back to live, keeping filters and selection', () => {
    // Arrange: a replay at 10× of a filtered view
    const replaying = parseViewUrl('?at=120&play=1&speed=10&holder=agent-2&resource=res-1');

    // Act
    const live = formatViewUrl(liveView(replaying));

    // Assert
    expect(live).toBe('?holder=agent-2&resource=res-1');
  });

  it('writes nothing for the default live view', () => {
    expect(formatViewUrl(DEFAULT_VIEW)).toBe('');
    expect(parseViewUrl('')).toEqual(DEFAULT_VIEW);
  });

  it('reads "who held X at T" links: a resource and a wall time', () => {
    expect(parseViewUrl('?resource=deploy-slot&at=2026-05-28T12:01:03.120Z')).toMatchObject({
      resource: 'deploy-slot',
      at: { kind: 'wall', wallMillis: Date.UTC(2026, 4, 28, 12, 1, 3, 120) },
    });
  });

  it('ignores unreadable values instead of failing to open the link', () => {
    expect(parseViewUrl('?at=soon&span=-5&inv=x&fence=abc&speed=0')).toEqual(DEFAULT_VIEW);
  });

  it('names an unreadable at= (the page says it shows the live log instead), and nothing for a position, a time or no at', () => {
    expect(describeUnreadableAsOf('?at=yesterday&q=x')).toBe(
      'at="yesterday" is neither a log position (at=1234) nor an ISO wall time with its offset (at=2026-05-28T12:01:03.120Z or …+02:00), so this is the live log.',
    );
    for (const search of [
      '',
      '?at=',
      '?at=1234',
      '?at=2026-05-28T12:01:03.120Z',
      '?at=2026-05-28T14:01:03.120%2B02:00',
      '?q=x',
    ])
      expect(describeUnreadableAsOf(search), search).toBeUndefined();
  });

  it('counts a new as-of position or investigation as a new view, and a pan or cursor move as the same view', () => {
    const base = parseViewUrl('?at=100');
    expect(isNewView(base, { ...base, at: { kind: 'position', position: 101 } })).toBe(true);
    expect(isNewView(base, { ...base, investigation: { position: 100, contextRadius: 10 } })).toBe(true);
    expect(isNewView(base, { ...base, cursorWallMillis: 5, window: { fromWallMillis: 0, toWallMillis: 10 } })).toBe(
      false,
    );
  });

  it('keeps a replay in the one history entry that started it: its steps, its stop and its arrival at live replace it', () => {
    const playing = parseViewUrl('?at=100&play=1');
    expect(playing.playing).toBe(true);
    expect(isNewView({ ...playing, playing: false }, playing)).toBe(true); // starting it
    expect(isNewView(playing, { ...playing, at: { kind: 'position', position: 140 } })).toBe(false); // a step
    expect(isNewView(playing, { ...playing, at: { kind: 'position', position: 183 }, playing: false })).toBe(false); // stopped
    expect(isNewView(playing, { ...playing, at: undefined, playing: false })).toBe(false); // reached live
    expect(isNewView(playing, { ...playing, investigation: { position: 120, contextRadius: 10 } })).toBe(true); // another view
  });

  it('reads at= only as a position or an ISO time with its offset, so a shared link means one instant everywhere', () => {
    expect(parseViewUrl('?at=2026-05-28T14:01:03.120%2B02:00').at).toEqual({
      kind: 'wall',
      wallMillis: Date.UTC(2026, 4, 28, 12, 1, 3, 120),
    });
    expect(parseViewUrl('?at=2026-05-28T12:01Z').at).toEqual({
      kind: 'wall',
      wallMillis: Date.UTC(2026, 4, 28, 12, 1),
    });
    for (const junk of [
      '-5',
      '1.5',
      '%2B100',
      'May%205',
      '12/25',
      '2026-05-28T12:01:03',
      '2026-05-28%2012:01:03',
      '2026-05-28',
    ]) {
      expect(parseViewUrl(`?at=${junk}`).at, junk).toBeUndefined();
      expect(describeUnreadableAsOf(`?at=${junk}`), junk).toBeDefined();
    }
  });
});
