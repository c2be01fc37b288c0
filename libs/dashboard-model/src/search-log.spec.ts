import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { searchLog } from './search-log.js';
import { ViewHistory } from './view-history.js';

function history() {
  const log = new LogBuilder();
  log.started();
  log.granted('deploy-slot', 'coder-1', 3, { requestId: 'req-abc' });
  log.granted('migration', 'planner-2', 4);
  const h = new ViewHistory();
  log.events.forEach((e) => h.append(e));
  return h;
}

describe('searchLog', () => {
  it('finds a bare number both as a log position and as a fence', () => {
    const h = history();
    expect(searchLog(h.head, h.index, '3')).toEqual([
      { kind: 'position', position: 3, type: 'LeaseGranted', resource: 'migration' },
      {
        kind: 'fence',
        fence: 3,
        resource: 'deploy-slot',
        holderId: 'coder-1',
        position: 2,
        startWallMillis: expect.any(Number),
      },
    ]);
  });

  it('finds only the position for #N and only the fence for f:N', () => {
    const h = history();
    expect(searchLog(h.head, h.index, '#2').map((x) => x.kind)).toEqual(['position']);
    expect(searchLog(h.head, h.index, 'f:4').map((x) => x.kind)).toEqual(['fence']);
  });

  it('finds a requestId exactly and holders and resources by substring', () => {
    const h = history();
    expect(searchLog(h.head, h.index, 'req-abc')).toEqual([
      { kind: 'request', requestId: 'req-abc', position: 2, type: 'LeaseGranted', resource: 'deploy-slot' },
    ]);
    expect(searchLog(h.head, h.index, 'PLANNER')).toEqual([
      { kind: 'holder', holderId: 'planner-2', resources: ['migration'], generations: 1 },
    ]);
    expect(searchLog(h.head, h.index, 'slot')).toEqual([{ kind: 'resource', resource: 'deploy-slot', generations: 1 }]);
  });

  it('finds a fence written f42 as well as f:42', () => {
    const h = history();
    expect(searchLog(h.head, h.index, 'f4')).toEqual(searchLog(h.head, h.index, 'f:4'));
    expect(searchLog(h.head, h.index, 'F3').map((x) => x.kind)).toEqual(['fence']);
  });

  it('finds a requestId by a unique prefix of at least 4 characters, and none by an ambiguous one', () => {
    // Arrange
    const log = new LogBuilder();
    log.granted('a', 'h1', 1, { requestId: 'ae1243ae-561f-43e7' });
    log.granted('b', 'h2', 2, { requestId: 'ae12ffff-0000-0000' });
    const h = new ViewHistory();
    log.events.forEach((e) => h.append(e));

    // Act / Assert
    expect(searchLog(h.head, h.index, 'AE124')).toEqual([
      { kind: 'request', requestId: 'ae1243ae-561f-43e7', position: 1, type: 'LeaseGranted', resource: 'a' },
    ]);
    expect(searchLog(h.head, h.index, 'ae12')).toEqual([]);
    expect(searchLog(h.head, h.index, 'ae1')).toEqual([]);
  });

  it('does not find events after the state position (history view)', () => {
    const h = history();
    expect(searchLog(h.stateAt(2), h.index, '#3')).toEqual([]);
  });
});
