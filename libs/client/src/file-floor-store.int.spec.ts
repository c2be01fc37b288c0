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
    expect(() => restored.commit({ resource: RESOURCE, holderId: 'agent-1', fence: 6 }, () => 'stale write')).toThrow(
      StaleFenceError,
    );
  });

  it('keeps the rejection seq across a restart, so reports are never mistaken for duplicates', async () => {
    // Arrange
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 3, holderId: 'agent-2' } });
    expect(() => gate.admit({ resource: RESOURCE, holderId: 'agent-1', fence: 1 })).toThrow(StaleFenceError);
    await store.save(gateStateOf(gate, 1));

    // Act
    const restored = new FenceGate(
      RESOURCE,
      gateOptionsFrom(await (await openFileFloorStore({ path, resource: RESOURCE })).load()),
    );

    // Assert
    expect(restored.nextSeq).toBe(2);
  });

  it('leaves the old floor when the process dies between the temporary write and the rename', async () => {
    // Arrange: floor 4 is durable; saving floor 9 "crashes" right before the rename (the
    // process never gets past the hook).
    const first = await openFileFloorStore({ path, resource: RESOURCE });
    await first.save({
      resource: RESOURCE,
      floor: { fence: 4, holderId: 'agent-1' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    });
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
    void dying.save({
      resource: RESOURCE,
      floor: { fence: 9, holderId: 'agent-2' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    });
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

  it('writes nothing for a save that adds nothing to the durable state, and writes again once it does', async () => {
    // Arrange: fence 7 is durable; every write is counted at its rename.
    let writes = 0;
    const store = await openFileFloorStore({ path, resource: RESOURCE, beforeRename: () => void (writes += 1) });
    await store.load();
    const gate = new FenceGate(RESOURCE);
    await commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence: 7 }, async () => undefined);

    // Act: the same holder writes again at its fence, twice; then a newer fence arrives.
    await commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence: 7 }, async () => undefined);
    await store.save({
      resource: RESOURCE,
      floor: { fence: 5, holderId: 'agent-0' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    });
    const afterRepeats = writes;
    await commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-2', fence: 8 }, async () => undefined);

    // Assert
    expect(afterRepeats).toBe(1);
    expect(writes).toBe(2);
    expect((await (await openFileFloorStore({ path, resource: RESOURCE })).load())?.floor).toEqual({
      fence: 8,
      holderId: 'agent-2',
    });
  });

  it('never writes a floor below one saved before, whatever order saves are called in', async () => {
    // Arrange
    const store = await openFileFloorStore({ path, resource: RESOURCE });

    // Act
    await Promise.all([
      store.save({ resource: RESOURCE, floor: { fence: 8, holderId: 'agent-3' }, nextSeq: 4, reportedThroughSeq: 2 }),
      store.save({ resource: RESOURCE, floor: { fence: 6, holderId: 'agent-1' }, nextSeq: 2, reportedThroughSeq: 3 }),
    ]);
    await store.save({
      resource: RESOURCE,
      floor: { fence: 5, holderId: 'agent-1' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    });

    // Assert
    const state = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
    expect(state).toEqual({
      resource: RESOURCE,
      floor: { fence: 8, holderId: 'agent-3' },
      nextSeq: 4,
      reportedThroughSeq: 3,
      outbox: [],
    });
  });

  it.each([
    ['not JSON', '{ floor', /not JSON/],
    [
      'another version',
      JSON.stringify({ version: 3, resource: RESOURCE, floor: null, nextSeq: 1, reportedThroughSeq: 0 }),
      /unknown version 3/,
    ],
    [
      'an outbox entry at or above nextSeq',
      JSON.stringify({
        version: 2,
        resource: RESOURCE,
        floor: null,
        nextSeq: 2,
        reportedThroughSeq: 0,
        outbox: [
          {
            seq: 2,
            resource: RESOURCE,
            kind: 'stale',
            rejected: { holderId: 'a', fence: 1 },
            current: { holderId: 'b', fence: 2 },
            wallMillis: 0,
          },
        ],
      }),
      /outbox\[0\]\.seq must be an integer above 0 and below nextSeq 2/,
    ],
    [
      'an outbox entry without its holders',
      JSON.stringify({
        version: 2,
        resource: RESOURCE,
        floor: null,
        nextSeq: 2,
        reportedThroughSeq: 0,
        outbox: [
          {
            seq: 1,
            resource: RESOURCE,
            kind: 'stale',
            rejected: { fence: 1 },
            current: { holderId: 'b', fence: 2 },
            wallMillis: 0,
          },
        ],
      }),
      /outbox\[0\]\.rejected must be/,
    ],
    [
      'another resource',
      JSON.stringify({ version: 1, resource: 'deploy-slot-b', floor: null, nextSeq: 1, reportedThroughSeq: 0 }),
      /holds resource "deploy-slot-b"/,
    ],
    [
      'a bad fence',
      JSON.stringify({
        version: 1,
        resource: RESOURCE,
        floor: { fence: 0, holderId: 'a' },
        nextSeq: 1,
        reportedThroughSeq: 0,
      }),
      /floor.fence must be a positive integer/,
    ],
    [
      'a bad nextSeq',
      JSON.stringify({ version: 1, resource: RESOURCE, floor: null, nextSeq: 0, reportedThroughSeq: 0 }),
      /nextSeq must be an integer ≥ 1/,
    ],
  ])('refuses to guess a floor from a file with %s', async (_case, content, message) => {
    // Arrange
    await writeFile(path, content);
    const store = await openFileFloorStore({ path, resource: RESOURCE });

    // Act
    const failure = store.load();

    // Assert
    await expect(failure).rejects.toBeInstanceOf(FloorStoreCorruptError);
    await expect(failure).rejects.toMatchObject({
      code: 'floor-store-corrupt',
      message: expect.stringMatching(message),
    });
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
    const floorSeenByWrite = await commitDurably(
      gate,
      store,
      { resource: RESOURCE, holderId: 'agent-1', fence: 12 },
      async () => {
        const reader = await openFileFloorStore({ path, resource: RESOURCE });
        return (await reader.load())?.floor;
      },
    );

    // Assert
    expect(floorSeenByWrite).toEqual({ fence: 12, holderId: 'agent-1' });
  });

  it('saves a refusal in the outbox with its seq, in one write, before the caller hears of it, and writes nothing', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 5, holderId: 'agent-2' } });
    let wrote = false;

    // Act: read the file the moment the refusal reaches the caller.
    const onDisk = await commitDurably(
      gate,
      store,
      { resource: RESOURCE, holderId: 'agent-1', fence: 4 },
      async () => {
        wrote = true;
      },
      { wallClock: () => 1_700_000_000_000 },
    ).then(
      () => undefined,
      async (error: unknown) => ({
        error,
        state: await (await openFileFloorStore({ path, resource: RESOURCE })).load(),
      }),
    );

    // Assert
    expect(wrote).toBe(false);
    expect(onDisk?.error).toBeInstanceOf(StaleFenceError);
    expect(onDisk?.state).toEqual({
      resource: RESOURCE,
      floor: { fence: 5, holderId: 'agent-2' },
      nextSeq: 2,
      reportedThroughSeq: 0,
      outbox: [
        {
          seq: 1,
          resource: RESOURCE,
          kind: 'stale',
          rejected: { holderId: 'agent-1', fence: 4 },
          current: { holderId: 'agent-2', fence: 5 },
          wallMillis: 1_700_000_000_000,
        },
      ],
    });
  });

  it('keeps every refusal of concurrent refused writes, and lists them as pending only once durable', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 9, holderId: 'agent-2' } });
    const refuse = (fence: number) =>
      commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence }, async () => undefined).catch(
        (error: unknown) => error,
      );

    // Act
    const refusals = Promise.all([refuse(3), refuse(4), refuse(5)]);
    const pendingBeforeDurable = store.pendingRejections().length;
    await refusals;

    // Assert
    expect(pendingBeforeDurable).toBe(0);
    expect(store.pendingRejections().map((entry) => [entry.seq, entry.rejected.fence])).toEqual([
      [1, 3],
      [2, 4],
      [3, 5],
    ]);
    const restored = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
    expect(restored?.outbox?.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(restored?.nextSeq).toBe(4);
  });

  it.each<[unknown, typeof TypeError]>([
    ['3', TypeError],
    [-1, RangeError],
    [1.5, RangeError],
    [Number.NaN, RangeError],
  ])(
    'refuses an acknowledgement through %j, naming throughSeq, and keeps the outbox',
    async (throughSeq, errorClass) => {
      // Arrange
      const path = join(directory, 'slot.floor.json');
      const store = await openFileFloorStore({ path, resource: RESOURCE });
      const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 9, holderId: 'agent-2' } });
      await commitDurably(
        gate,
        store,
        { resource: RESOURCE, holderId: 'agent-1', fence: 3 },
        async () => undefined,
      ).catch(() => undefined);

      // Act
      const refused = await store.acknowledgeRejections(throughSeq as number).catch((error: unknown) => error);

      // Assert
      expect(refused).toBeInstanceOf(errorClass);
      expect((refused as Error).message).toContain('FileFloorStore.acknowledgeRejections: throughSeq');
      const restored = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
      expect(restored?.outbox?.map((entry) => entry.seq)).toEqual([1]);
    },
  );

  it('drops acknowledged refusals from the outbox durably, and never lets an older save bring them back', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: RESOURCE });
    const gate = new FenceGate(RESOURCE, { initialFloor: { fence: 9, holderId: 'agent-2' } });
    for (const fence of [3, 4])
      await commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence }, async () => undefined).catch(
        () => undefined,
      );

    // Act
    await store.acknowledgeRejections(1);
    await store.save(gateStateOf(gate)); // a later floor save without an outbox

    // Assert
    const restored = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
    expect(restored?.reportedThroughSeq).toBe(1);
    expect(restored?.outbox?.map((entry) => entry.seq)).toEqual([2]);
  });

  it('reads a version-1 file (before the outbox) as a state with an empty outbox', async () => {
    // Arrange
    const path = join(directory, 'slot.floor.json');
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        resource: RESOURCE,
        floor: { fence: 3, holderId: 'agent-1' },
        nextSeq: 4,
        reportedThroughSeq: 3,
      }),
    );

    // Act
    const state = await (await openFileFloorStore({ path, resource: RESOURCE })).load();

    // Assert
    expect(state).toEqual({
      resource: RESOURCE,
      floor: { fence: 3, holderId: 'agent-1' },
      nextSeq: 4,
      reportedThroughSeq: 3,
      outbox: [],
    });
  });

  it('merges a save made before any load with what the file holds, so it never drops a saved refusal', async () => {
    // Arrange: a refusal is in the file.
    const path = join(directory, 'slot.floor.json');
    const first = await openFileFloorStore({ path, resource: RESOURCE });
    await commitDurably(
      new FenceGate(RESOURCE, { initialFloor: { fence: 9, holderId: 'agent-2' } }),
      first,
      { resource: RESOURCE, holderId: 'agent-1', fence: 3 },
      async () => undefined,
    ).catch(() => undefined);

    // Act: another store on the same file saves a floor without loading first.
    const second = await openFileFloorStore({ path, resource: RESOURCE });
    await second.save({
      resource: RESOURCE,
      floor: { fence: 10, holderId: 'agent-3' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    });

    // Assert
    const restored = await (await openFileFloorStore({ path, resource: RESOURCE })).load();
    expect(restored).toMatchObject({ floor: { fence: 10, holderId: 'agent-3' }, nextSeq: 2 });
    expect(restored?.outbox?.map((entry) => entry.seq)).toEqual([1]);
  });
});
