import { describe, expect, it } from 'vitest';
import { foldEvents } from './fold-events.js';
import { currentHolders } from './current-holders.js';
import {
  compileLeaseMatch,
  countMatches,
  filterLanes,
  matchingHolderRows,
  MatchingEvents,
  matchingRejections,
} from './lease-match.js';
import { LogBuilder } from './testing/log-builder.js';

function log() {
  const b = new LogBuilder();
  b.started();
  b.granted('deploy-slot-a', 'agent-1', 58);
  b.expired('deploy-slot-a', 'agent-1', 58);
  b.granted('deploy-slot-a', 'agent-2', 62);
  b.rejected('deploy-slot-a', { holderId: 'agent-1', fence: 58 }, { holderId: 'agent-2', fence: 62 });
  b.granted('deploy-slot-b', 'agent-3', 71);
  b.renewed('deploy-slot-b', 'agent-3', 71);
  b.granted('migration', 'Agent-2', 90);
  return b.events;
}

describe('compileLeaseMatch', () => {
  it('matches bars by holder (case-insensitive substring) and fence range together', () => {
    const state = foldEvents(log());
    const gens = [...state.lanes.values()].flatMap((l) => l.generations);
    const holders = (filter: Parameters<typeof compileLeaseMatch>[0]) =>
      gens.filter(compileLeaseMatch(filter).generation).map((g) => `${g.holderId}·${g.fence}`);

    expect(holders({ holder: 'agent-2' })).toEqual(['agent-2·62', 'Agent-2·90']);
    expect(holders({ fenceMin: 60, fenceMax: 70 })).toEqual(['agent-2·62']);
    expect(holders({ holder: 'agent-2', fenceMin: 80 })).toEqual(['Agent-2·90']);
    expect(holders({ holder: '  ' })).toHaveLength(gens.length);
  });

  it('matches a rejection on its refused side or its floor side, each side as a whole', () => {
    const [rejection] = foldEvents(log()).rejections;
    const matches = (filter: Parameters<typeof compileLeaseMatch>[0]) =>
      compileLeaseMatch(filter).rejection(rejection!);

    expect(matches({ holder: 'agent-1' })).toBe(true); // refused
    expect(matches({ holder: 'agent-2' })).toBe(true); // floor
    expect(matches({ fenceMin: 60, fenceMax: 70 })).toBe(true); // floor fence 62
    expect(matches({ holder: 'agent-1', fenceMin: 60 })).toBe(false); // agent-1 is 58, 62 is agent-2's
    expect(matches({ resource: 'migration' })).toBe(false);
  });

  it('matches events by the holder and fence they name; restarts only match no filter', () => {
    const events = log();
    const types = (filter: Parameters<typeof compileLeaseMatch>[0]) =>
      events.filter(compileLeaseMatch(filter).event).map((e) => e.event.type);

    expect(types({})).toHaveLength(events.length);
    expect(types({ holder: 'agent-3' })).toEqual(['LeaseGranted', 'LeaseRenewed']);
    expect(types({ holder: 'agent-1' })).toEqual(['LeaseGranted', 'LeaseExpired', 'FenceRejected']);
    expect(types({ resource: 'deploy-*' })).not.toContain('CoordinatorStarted');
  });

  it('dims without removing: only hideUnmatchedLanes removes lanes with no matching bar or rejection', () => {
    const state = foldEvents(log());

    expect(filterLanes(state, { holder: 'agent-3' }).lanes.map((l) => l.resource)).toEqual([
      'deploy-slot-a',
      'deploy-slot-b',
      'migration',
    ]);
    expect(filterLanes(state, { holder: 'agent-3', hideUnmatchedLanes: true }).lanes.map((l) => l.resource)).toEqual([
      'deploy-slot-b',
    ]);
    // agent-1's only bar ended; its refused write keeps the lane.
    expect(filterLanes(state, { holder: 'agent-1', hideUnmatchedLanes: true }).lanes.map((l) => l.resource)).toEqual([
      'deploy-slot-a',
    ]);
  });
});

describe('countMatches and matchingRejections', () => {
  it('counts the leases, rejections and lanes with a match among the kept lanes', () => {
    const state = foldEvents(log());
    const match = compileLeaseMatch({ holder: 'agent-2' });

    expect(countMatches(filterLanes(state, match).lanes, match)).toEqual({
      leases: 2,
      rejections: 1,
      lanesWithMatch: 2,
    });
    expect(matchingRejections(state, match)).toHaveLength(1);
    expect(matchingRejections(state, compileLeaseMatch({ holder: 'agent-3' }))).toEqual([]);
    expect(matchingRejections(state, compileLeaseMatch({}))).toBe(state.rejections);
  });
});

describe('matchingHolderRows', () => {
  it('keeps the current holders whose lease matches as its bar does: resource, then holder · fence', () => {
    // Arrange: held now are agent-2·62 on deploy-slot-a, agent-3·71 on deploy-slot-b, Agent-2·90 on migration.
    const state = foldEvents(log());
    const rows = currentHolders(state, state.lastWallMillis ?? 0);
    const kept = (filter: Parameters<typeof compileLeaseMatch>[0]) =>
      matchingHolderRows(rows, compileLeaseMatch(filter))
        .map((r) => `${r.resource}:${r.holderId}·${r.fence}`)
        .sort();

    // Act / Assert
    expect(rows).toHaveLength(3);
    expect(kept({ holder: 'agent-2' })).toEqual(['deploy-slot-a:agent-2·62', 'migration:Agent-2·90']);
    expect(kept({ holder: 'agent-1' })).toEqual([]); // agent-1 held deploy-slot-a once, not now
    expect(kept({ fenceMin: 70, fenceMax: 80 })).toEqual(['deploy-slot-b:agent-3·71']);
    expect(kept({ resource: 'deploy-*', holder: 'agent' })).toEqual([
      'deploy-slot-a:agent-2·62',
      'deploy-slot-b:agent-3·71',
    ]);
    expect(matchingHolderRows(rows, compileLeaseMatch({ hasRejections: true }))).toBe(rows);
  });
});

describe('MatchingEvents', () => {
  it('finds matches incrementally as the log grows, and reads them as of a position', () => {
    const events = log();
    const matching = new MatchingEvents(compileLeaseMatch({ holder: 'agent-2' }));

    matching.update(events.slice(0, 4));
    expect(matching.countUpTo(99)).toBe(1); // the grant at position 4
    matching.update(events);
    expect(matching.countUpTo(99)).toBe(3);
    expect(matching.countUpTo(4)).toBe(1);
    expect(matching.around(5, 1, 99)).toEqual([4, 5, 8]); // one before, the focus and one after
    expect(matching.around(5, 8, 5)).toEqual([4, 5]);
  });
});
