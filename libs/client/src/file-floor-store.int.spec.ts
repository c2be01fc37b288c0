import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FloorStoreCorruptError } from './errors.js';
import { openFileFloorStore } from './file-floor-store.js';
import { commitDurably, gateOptionsFrom, gateStateOf } from './floor-store.js';

const RESOURCE = 'deploy-slot-a';

describe('FileFloorStore', () => {
  let directory: string;
  let path: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'floor-store-'));
    path = join(directory, 'deploy-slot-a.floor.json');
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('loads nothing before the first save', async () => {
    // Arrange
    const store = await openFileFloorStore({ path, resource: RESOURCE });

    // Act / Assert
    expect(await store.load()).toBeUndefined();
  });

  it('restores a gate after a restart so it still refuses fences below its floor', async () => {
    // Arrange: a gate admits fence 7, durably.
    const before = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE);
    gate.admit({ resource: RESOURCE, holderId: 'agent-2', fence: 7 });
    await before.save(gateStateOf(gate, 0));

    // Act: the resource restarts.
    const after = await openFileFloorStore({ path, resource: RESOURCE });
    const restored = new FenceGate(RESOURCE, gateOptionsFrom(await after.load()));

    // Assert
    expect(restored.floor).toEqual({ fence: 7, holderId: 'agent-2' });
    expect(() => restored.commit({ resource: RESOURCE, holderId: 'agent-1', fence: 6 }, () => 'stale write')).toThrow(StaleFenceError);
  });

  it('keeps the rejection seq across a restart, so reports are never mistaken for duplicates', async () => {
    // Arrange
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 3, holderId: 'agent-2' } });
    expect(() => gate.admit({ resource: RESOURCE, holderId: 'agent-1', fence: 1 })).toThrow(StaleFenceError);
    await store.save(gateStateOf(gate, 1));

    // Act
    const restored = new FenceGate(RESOURCE, gateOptionsFrom(await (await openFileFloorStore({ path, resource: RESOURCE })).load()));

    // Assert
    expect(restored.nextSeq).toBe(2);
  });

  it('leaves the old floor when the process dies between the temporary write and the rename', async () => {
    // Arrange: floor 4 is durable; saving floor 9 "crashes" right before the rename (the
    // process never gets past the hook).
    const first = await openFileFloorStore({ path, resource: RESOURCE });
    await first.save({ resource: RESOURCE, floor: { fence: 4, holderId: 'agent-1' }, nextSeq: 1, reportedThroughSeq: 0 });
    let crashed!: () => void;
    const reachedRename = new Promise<void>((resolve) => (crashed = resolve));
    const dying = await openFileFloorStore({
      path,
      resource: RESOURCE,
      beforeRename: () => {
        crashed();
        return new Promise<void>(() => undefined);
      },
    });
    void dying.save({ resource: RESOURCE, floor: { fence: 9, holderId: 'agent-2' }, nextSeq: 1, reportedThroughSeq: 0 });
    await reachedRename;
    const leftovers = (await readdir(directory)).filter((name) => name.endsWith('.tmp'));

    // Act: the restarted resource opens the store.
    const restarted = await openFileFloorStore({ path, resource: RESOURCE });
    const state = await restarted.load();

    // Assert
    expect(leftovers).toHaveLength(1);
    expect(state?.floor).toEqual({ fence: 4, holderId: 'agent-1' });
    expect((await readdir(directory)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('never writes a floor below one saved before, whatever order saves are called in', async () => {
    // Arrange
    const store = await openFileFloorStore({ path, resource: RESOURCE });

    // Act
    await Promise.all([
      store.save({ resource: RESOURCE, floor: { fence: 8, holderId: 'agent-3' }, nextSeq: 4, reportedThroughSeq: 2 }),
      store.save({ resource: RESOURCE, floor: { fence: 6, holderId: 'agent-1' }, nextSeq: 2, reportedThroughSeq: 3 }),
    ]);
    await store.save({ resource: RESOURCE, floor: { fence: 5, holderId: 'agent-1' }, nextSeq: 1, reportedThroughSeq: 0 });

    // Assert
    const state = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
    expect(state).toEqual({ resource: RESOURCE, floor: { fence: 8, holderId: 'agent-3' }, nextSeq: 4, reportedThroughSeq: 3 });
  });

  it.each([
    ['not JSON', '{ floor', /not JSON/],
    ['another version', JSON.stringify({ version: 2, resource: RESOURCE, floor: null, nextSeq: 1, reportedThroughSeq: 0 }), /unknown version 2/],
    ['another resource', JSON.stringify({ version: 1, resource: 'deploy-slot-b', floor: null, nextSeq: 1, reportedThroughSeq: 0 }), /holds resource "deploy-slot-b"/],
    ['a bad fence', JSON.stringify({ version: 1, resource: RESOURCE, floor: { fence: 0, holderId: 'a' }, nextSeq: 1, reportedThroughSeq: 0 }), /floor.fence must be a positive integer/],
    ['a bad nextSeq', JSON.stringify({ version: 1, resource: RESOURCE, floor: null, nextSeq: 0, reportedThroughSeq: 0 }), /nextSeq must be an integer ≥ 1/],
  ])('refuses to guess a floor from a file with %s', async (_case, content, message) => {
    // Arrange
    await writeFile(path, content);
    const store = await openFileFloorStore({ path, resource: RESOURCE });

    // Act
    const failure = store.load();

    // Assert
    await expect(failure).rejects.toBeInstanceOf(FloorStoreCorruptError);
    await expect(failure).rejects.toMatchObject({ code: 'floor-store-corrupt', message: expect.stringMatching(message) });
  });
});

describe('commitDurably', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'floor-store-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('makes the raised floor durable before the write runs', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE);

    // Act
    const floorSeenByWrite = await commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence: 12 }, async () => {
      const reader = await openFileFloorStore({ path, resource: RESOURCE });
      return (await reader.load())?.floor;
    });

    // Assert
    expect(floorSeenByWrite).toEqual({ fence: 12, holderId: 'agent-1' });
  });

  it('runs neither save nor write for a stale fence', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 5, holderId: 'agent-2' } });
    let wrote = false;

    // Act
    const attempt = () =>
      commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence: 4 }, async () => {
        wrote = true;
      });

    // Assert
    expect(attempt).toThrow(StaleFenceError);
    expect(wrote).toBe(false);
    expect(await store.load()).toBeUndefined();
  });
});
