import { describe, expect, it } from 'vitest';
import { ViewHistory } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import {
  followWindow,
  ingestTarget,
  logBounds,
  markerJump,
  REPLAY_LOAD_AHEAD,
  replayStartWall,
  replayStep,
  resolveAsOf,
  stepPosition,
} from './navigation.js';
import { DEFAULT_VIEW } from './url-state.js';

function history(): ViewHistory {
  const log = new LogBuilder({ wallMillis: 1_000_000 });
  log.started(); // 1
  log.advance(1_000).granted('a', 'h1', 1); // 2
  log.advance(1_000).rejected('a', { holderId: 'h0', fence: 1 }, { holderId: 'h1', fence: 1 }); // 3
  log.advance(1_000).skip(2).renewed('a', 'h1', 1); // 6
  log.advance(1_000).restart('boot-b'); // 7
  const h = new ViewHistory();
  log.events.forEach((e) => h.append(e));
  return h;
}

/** The first `count` events of {@link history}, as a page that has loaded only those. */
function loadedUpTo(count: number): ViewHistory {
  const h = new ViewHistory();
  history()
    .index.events()
    .slice(0, count)
    .forEach((e) => h.append(e));
  return h;
}

describe('resolveAsOf', () => {
  it('follows the head when live', () => {
    expect(resolveAsOf(undefined, history(), 7, true)).toMatchObject({ live: true, position: 7 });
  });

  it('resolves a position to the last loaded event at or before it, with its wall time', () => {
    expect(resolveAsOf({ kind: 'position', position: 5 }, history(), 7, true)).toEqual({
      live: false,
      position: 3,
      wallMillis: 1_002_000,
      beyondLog: undefined,
      settled: true,
    });
  });

  it('resolves a wall time to the last event at or before it', () => {
    expect(resolveAsOf({ kind: 'wall', wallMillis: 1_001_500 }, history(), 7, true)).toMatchObject({
      position: 2,
      wallMillis: 1_001_500,
    });
  });

  it('is unsettled while a later point than the last loaded event may still be in the log', () => {
    // Given: positions 1–3 loaded (wall times up to 1 002 000) of a log whose head is 7.
    const partial = loadedUpTo(3);

    // Then: a time after position 3, or position 6, is not answered by what is loaded.
    expect(resolveAsOf({ kind: 'wall', wallMillis: 1_003_500 }, partial, 7, true)).toMatchObject({
      position: 3,
      settled: false,
    });
    expect(resolveAsOf({ kind: 'position', position: 6 }, partial, 7, true).settled).toBe(false);
    // A time before a loaded event is; and with the whole log loaded, so is any time or position.
    expect(resolveAsOf({ kind: 'wall', wallMillis: 1_001_500 }, partial, 7, true).settled).toBe(true);
    expect(resolveAsOf({ kind: 'wall', wallMillis: 9_000_000 }, partial, 3, true).settled).toBe(true);
    expect(resolveAsOf({ kind: 'wall', wallMillis: 9_000_000 }, history(), 7, true)).toMatchObject({
      position: 7,
      settled: true,
    });
    expect(resolveAsOf({ kind: 'position', position: 99 }, history(), 7, true).settled).toBe(true);
  });

  it('says a position beyond the head is not in the log, once the head is known', () => {
    expect(resolveAsOf({ kind: 'position', position: 99 }, history(), 7, true).beyondLog).toBe(99);
    expect(resolveAsOf({ kind: 'position', position: 99 }, history(), 7, false).beyondLog).toBeUndefined();
  });
});

describe('logBounds', () => {
  it('gives the last wall time only with the head loaded, so a later time is loaded rather than refused', () => {
    const partial = loadedUpTo(3);
    expect(logBounds(partial, 7, true)).toEqual({
      firstPosition: 1,
      lastPosition: 7,
      firstWallMillis: 1_000_000,
      lastWallMillis: undefined,
    });
    const whole = history();
    expect(logBounds(whole, 7, true)).toEqual({
      firstPosition: 1,
      lastPosition: 7,
      firstWallMillis: 1_000_000,
      lastWallMillis: whole.index.events().at(-1)?.event.data.wallMillis,
    });
    expect(logBounds(whole, 7, true).lastWallMillis).toBeGreaterThan(1_003_000);
  });

  it("gives no last wall time before the first catch-up reaches the head (the head as heard is not yet the log's)", () => {
    // Given the page still catching up: the head as last heard is the position it has loaded to
    const partial = loadedUpTo(3);
    // Then a later time is not "after the last event": the log may go on past what is loaded
    expect(logBounds(partial, 3, false).lastWallMillis).toBeUndefined();
    expect(logBounds(partial, 3, true).lastWallMillis).toBe(partial.head.lastWallMillis);
  });
});

describe('stepPosition and markerJump', () => {
  it('steps over positions that are not loaded, and asks for one more past the end while the log has more', () => {
    const h = history();
    expect(stepPosition(h, 3, 1, 7)).toBe(6);
    expect(stepPosition(h, 6, -1, 7)).toBe(3);
    expect(stepPosition(h, 7, 1, 9)).toBe(8);
    expect(stepPosition(h, 7, 1, 7)).toBe(7);
  });

  it('jumps to the next and previous rejection or restart', () => {
    const h = history();
    expect(markerJump(h, 1, 1, 7, true)).toEqual({ kind: 'found', position: 3 });
    expect(markerJump(h, 3, 1, 7, true)).toEqual({ kind: 'found', position: 7 });
    expect(markerJump(h, 7, -1, 7, true)).toEqual({ kind: 'found', position: 3 });
    expect(markerJump(h, 7, 1, 7, true)).toEqual({ kind: 'none' });
  });

  it('asks to load on when the next marker may be in the part of the log a paused view has not loaded', () => {
    // Given: paused with positions 1–4 loaded (the rejection at 3 behind), the log grown to 7 (a restart at 7)
    const partial = loadedUpTo(4);
    // Then: forward from 3 nothing is loaded, but the log has more: load on (a new user saw `n` do nothing here)
    expect(markerJump(partial, 3, 1, 7, true)).toEqual({ kind: 'load' });
    // And back is loaded from the log's start, so it is found or there is none
    expect(markerJump(partial, 3, -1, 7, true)).toEqual({ kind: 'none' });
    expect(markerJump(partial, 4, -1, 7, true)).toEqual({ kind: 'found', position: 3 });
  });
});

describe('followWindow', () => {
  it('puts the anchor near the right edge', () => {
    expect(followWindow(10_000, 1_000)).toEqual({ fromWallMillis: 9_150, toWallMillis: 10_150 });
  });
});

describe('ingestTarget', () => {
  const at = (view: typeof DEFAULT_VIEW, loaded: number, head: number, headKnown = true) =>
    ingestTarget(view, resolveAsOf(view.at, history(), head, headKnown), loaded, headKnown);

  it('follows live without an as-of point, and loads to the head once before holding', () => {
    expect(at(DEFAULT_VIEW, 50, 60)).toBeUndefined();
    expect(at({ ...DEFAULT_VIEW, at: { kind: 'position', position: 10 } }, 50, 60, false)).toBeUndefined();
  });

  it('holds where it is when pausing, and loads further for a later position or an investigation window', () => {
    expect(at({ ...DEFAULT_VIEW, at: { kind: 'position', position: 10 } }, 50, 60)).toBe(50);
    expect(at({ ...DEFAULT_VIEW, at: { kind: 'position', position: 80 } }, 50, 90)).toBe(80);
    expect(
      at(
        { ...DEFAULT_VIEW, at: { kind: 'position', position: 40 }, investigation: { position: 45, contextRadius: 10 } },
        50,
        60,
      ),
    ).toBe(55);
  });

  it('loads ahead of the position while replaying', () => {
    expect(at({ ...DEFAULT_VIEW, at: { kind: 'position', position: 40 }, playing: true }, 50, 60)).toBe(
      40 + REPLAY_LOAD_AHEAD,
    );
  });

  it('follows the stream for a time later than every loaded event, and holds once one passes it', () => {
    // Given: paused with positions 1–3 loaded while the log grew to 7; the time input asks for a
    // time after position 3 (CI saw "is after the last event" here, and then a view stuck at 3).
    const partial = loadedUpTo(3);
    const view = { ...DEFAULT_VIEW, at: { kind: 'wall', wallMillis: 1_003_500 } } as const;

    // Then: the stream follows (not a hold at the head as last heard, which moves with every
    // event and re-opened the socket per event); with the time passed, it holds where it is.
    expect(ingestTarget(view, resolveAsOf(view.at, partial, 7, true), 3, true)).toBeUndefined();
    expect(ingestTarget(view, resolveAsOf(view.at, history(), 7, true), 7, true)).toBe(7);
    const earlier = { ...DEFAULT_VIEW, at: { kind: 'wall', wallMillis: 1_001_500 } } as const;
    expect(ingestTarget(earlier, resolveAsOf(earlier.at, partial, 7, true), 3, true)).toBe(3);
  });

  it('follows the stream for a time after the whole log, rather than holding at its head', () => {
    // Given: the whole log loaded (7 of 7) and a time later than its last event (a time to come)
    const future = { ...DEFAULT_VIEW, at: { kind: 'wall', wallMillis: 9_000_000 } } as const;
    // Then: loading follows, so the next event is taken on the same socket
    expect(ingestTarget(future, resolveAsOf(future.at, history(), 7, true), 7, true)).toBeUndefined();
  });
});

describe('replay', () => {
  it('waits for the as-of position to be loaded before starting its clock', () => {
    // Given: a link ?at=3&play=1 opened before the log arrived, then while it is still loading.
    const empty = new ViewHistory();
    const partial = loadedUpTo(2);

    // Then: no start time until position 3 (or the head) is loaded; then the wall time of position 3.
    expect(replayStartWall({ kind: 'position', position: 3 }, empty, false)).toBeUndefined();
    expect(replayStartWall({ kind: 'position', position: 3 }, partial, false)).toBeUndefined();
    expect(replayStartWall({ kind: 'position', position: 3 }, history(), false)).toBe(1_002_000);
    expect(replayStartWall({ kind: 'wall', wallMillis: 1_001_500 }, partial, false)).toBeUndefined();
    expect(replayStartWall({ kind: 'wall', wallMillis: 1_000_500 }, partial, false)).toBe(1_000_500);
    expect(replayStartWall(undefined, history(), true)).toBeUndefined();
  });

  it('moves forward with its clock and never goes live before the head is known', () => {
    const h = history();
    expect(replayStep(h, 3, 1_002_500, 7, true)).toEqual({ kind: 'hold' });
    expect(replayStep(h, 3, 1_003_000, 7, true)).toEqual({ kind: 'seek', position: 6 });
    expect(replayStep(h, 3, 0, 7, true)).toEqual({ kind: 'hold' });
    expect(replayStep(new ViewHistory(), 0, 0, 0, false)).toEqual({ kind: 'hold' });
  });

  it('goes live once it reaches the head of the log with everything up to it loaded', () => {
    const h = history();
    expect(replayStep(h, 6, 1_004_500, 7, true)).toEqual({ kind: 'live' });
    expect(replayStep(h, 6, 1_004_500, 9, true)).toEqual({ kind: 'seek', position: 7 });
  });
});
