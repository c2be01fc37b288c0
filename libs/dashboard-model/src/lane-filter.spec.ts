import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { foldEvents } from './fold-events.js';
import { FENCE_RANGE_HINT, parseFenceFilterInput, parseFenceRange } from './lane-filter.js';
import { filterLanes } from './lease-match.js';

function state() {
  const log = new LogBuilder();
  log.granted('deploy-slot:web', 'coder-1', 1);
  log.granted('deploy-slot:api', 'planner-2', 2);
  log.granted('migration:db', 'coder-3', 30);
  log.rejected('deploy-slot:api', { holderId: 'x', fence: 1 }, { holderId: 'planner-2', fence: 2 });
  return foldEvents(log.events);
}

describe('filterLanes', () => {
  it.each([
    [{}, ['deploy-slot:api', 'deploy-slot:web', 'migration:db']],
    [{ resource: 'deploy-*' }, ['deploy-slot:api', 'deploy-slot:web']],
    [{ resource: 'SLOT' }, ['deploy-slot:api', 'deploy-slot:web']],
    [{ resource: '*:db' }, ['migration:db']],
    [{ holder: 'coder' }, ['deploy-slot:api', 'deploy-slot:web', 'migration:db']],
    [{ holder: 'coder', hideUnmatchedLanes: true }, ['deploy-slot:web', 'migration:db']],
    [{ hasRejections: true }, ['deploy-slot:api']],
    [{ fenceMin: 2, fenceMax: 29, hideUnmatchedLanes: true }, ['deploy-slot:api']],
    [{ resource: 'deploy*', holder: 'coder', hideUnmatchedLanes: true }, ['deploy-slot:web']],
    [{ holder: 'x', hideUnmatchedLanes: true }, ['deploy-slot:api']],
    [{ hideUnmatchedLanes: true }, ['deploy-slot:api', 'deploy-slot:web', 'migration:db']],
  ])(
    'keeps the lanes %j keeps (holder and fence only remove with hideUnmatchedLanes), sorted, and counts every lane',
    (filter, expected) => {
      const result = filterLanes(state(), filter);
      expect(result.lanes.map((l) => l.resource)).toEqual(expected);
      expect(result.total).toBe(3);
    },
  );
});

describe('parseFenceRange', () => {
  it.each([
    ['12', { fenceMin: 12, fenceMax: 12 }],
    ['10-200', { fenceMin: 10, fenceMax: 200 }],
    ['10-', { fenceMin: 10 }],
    ['-200', { fenceMax: 200 }],
    ['', undefined],
    ['abc', undefined],
  ])('reads %j as %j', (text, expected) => {
    expect(parseFenceRange(text)).toEqual(expected);
  });
});

describe('parseFenceFilterInput', () => {
  it('reads an empty box as no fence filter and a range as that range', () => {
    expect(parseFenceFilterInput('  ')).toEqual({ ok: true, range: undefined });
    expect(parseFenceFilterInput('1-3')).toEqual({ ok: true, range: { fenceMin: 1, fenceMax: 3 } });
  });

  it.each(['abc', '1-3x', '--', '200-10'])(
    'says what a fence range looks like for %j, instead of keeping the old filter',
    (text) => {
      const input = parseFenceFilterInput(text);
      expect(input.ok).toBe(false);
      expect(input.ok ? '' : input.message).toContain(FENCE_RANGE_HINT);
    },
  );
});
