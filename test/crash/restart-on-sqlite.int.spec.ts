/**
 * Restarts on the real SQLite file, without a clean shutdown: a coordinator grants, renews and
 * checkpoints, then is abandoned (neither it nor its log handle is closed, as if the process
 * died), and a new coordinator recovers from the same file with a new boot id.
 */
import { join } from 'node:path';
import { DurableCoordinator, leasesOf, replayLog } from '@lease-fence/coordinator-core';
import { openSqliteEventLog, type SqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock, Instant, type ManualClock } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

let directory: string;
const handles: SqliteEventLog[] = [];
beforeAll(async () => {
  directory = await createTempDir('lease-fence-restart-');
});
afterAll(async () => {
  await Promise.all(handles.map((log) => log.close()));
  await removeTempDir(directory);
});

let boots = 0;
/** A new "process": its own log handle on `file` and a coordinator with a fresh boot id, starting at `startMillis` on its clock. */
async function boot(
  file: string,
  startMillis = 0,
  options: { snapshotEvery?: number } = {},
): Promise<{ coordinator: DurableCoordinator; clock: ManualClock; log: SqliteEventLog }> {
  const log = await openSqliteEventLog({ file, durability: 'full' });
  handles.push(log);
  const clock = createManualClock(`boot-${++boots}`, { start: startMillis });
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: 'restart',
    clock,
    defaultTtlMillis: 10_000,
    runTimers: false,
    ...options,
  });
  return { coordinator, clock, log };
}

describe('DurableCoordinator restarting on a SQLite file without a clean shutdown', () => {
  it('recovers the fence counter, the holders, their grace and the replay cache', async () => {
    // Given boot 1 granted two leases, released one, renewed the other and checkpointed, then died
    const file = join(directory, 'holders.db');
    const first = await boot(file, 1000);
    const slot = await first.coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'a-1' });
    const other = await first.coordinator.acquire({ resource: 'other', holderId: 'agent-b', requestId: 'b-1' });
    await first.coordinator.release({ resource: 'other', holderId: 'agent-b', fence: 2 });
    first.clock.advance(2000);
    await first.coordinator.renew({
      resource: 'slot',
      holderId: 'agent-a',
      fence: 1,
      requestId: 'a-2',
      ttlMillis: 8000,
    });
    first.clock.advance(1000);
    await first.coordinator.checkpoint();

    // When boot 2 recovers, its clock reading 300
    const second = await boot(file, 300);

    // Then: fence counter, holder, grace (8000 - 1000 ms observed since the renewal), replay cache
    expect([slot, other]).toMatchObject([
      { ok: true, grant: { fence: 1 } },
      { ok: true, grant: { fence: 2 } },
    ]);
    expect(second.coordinator.recovery).toMatchObject({
      recoveredFence: 2,
      carriedLeases: 1,
      fromSnapshot: false,
      graceDeadline: Instant.of(7300, second.clock.domain),
    });
    expect(second.coordinator.leases()).toEqual([
      expect.objectContaining({ resource: 'slot', holderId: 'agent-a', fence: 1, inGrace: true }),
    ]);
    expect(await second.coordinator.acquire({ resource: 'slot', holderId: 'agent-c', requestId: 'c-1' })).toEqual({
      ok: false,
      reason: 'held',
      heldBy: 'agent-a',
      retryAfterMillis: 7000,
    });
    expect(await second.coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'a-1' })).toMatchObject(
      { ok: true, grant: { fence: 1 } },
    );
    expect(await second.coordinator.acquire({ resource: 'other', holderId: 'agent-b', requestId: 'b-1' })).toEqual({
      ok: false,
      reason: 'expired',
      fence: 2,
    });
    expect(
      await second.coordinator.renew({ resource: 'slot', holderId: 'agent-a', fence: 1, requestId: 'a-3' }),
    ).toMatchObject({ ok: true, grant: { fence: 1 } });
    expect(
      await second.coordinator.acquire({ resource: 'other', holderId: 'agent-c', requestId: 'c-2' }),
    ).toMatchObject({ ok: true, grant: { fence: 3 } });

    // And after the grace deadline, another holder gets a higher fence
    second.clock.advance(9000);
    expect(await second.coordinator.acquire({ resource: 'slot', holderId: 'agent-c', requestId: 'c-3' })).toMatchObject(
      { ok: true, grant: { fence: 4 } },
    );
  });

  it('never issues a fence twice and never lets it go backwards across many restarts', async () => {
    const file = join(directory, 'fences.db');
    const fences: number[] = [];
    for (let restart = 0; restart < 8; restart += 1) {
      const { coordinator, clock } = await boot(file);
      expect(coordinator.recovery.recoveredFence).toBe(fences.length);
      for (let i = 0; i < 5; i += 1) {
        const outcome = await coordinator.acquire({
          resource: `r-${restart}-${i % 2}`,
          holderId: `h-${i}`,
          requestId: `q-${restart}-${i}`,
          ttlMillis: 10,
        });
        if (outcome.ok) fences.push(outcome.grant.fence);
        clock.advance(10);
      }
    }
    expect(fences).toEqual(Array.from({ length: fences.length }, (_, i) => i + 1));
    expect(fences.length).toBeGreaterThan(16);
  });

  it('recovers from a snapshot on the file to the same state as a full replay', async () => {
    // Given 120 grants with a snapshot every 50 events
    const file = join(directory, 'snapshot.db');
    const first = await boot(file, 0, { snapshotEvery: 50 });
    await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        first.coordinator.acquire({ resource: `r-${i}`, holderId: 'agent-a', requestId: `q-${i}` }),
      ),
    );
    await first.coordinator.close();
    // When recovering from the snapshot
    const fromSnapshot = await boot(file, 0, { snapshotEvery: 50 });
    // Then it replays only the events after the snapshot, and agrees with a full replay of the file
    expect(fromSnapshot.coordinator.recovery.fromSnapshot).toBe(true);
    expect(fromSnapshot.coordinator.recovery.eventsReplayed).toBeLessThan(60);
    const full = await replayLog(fromSnapshot.log, { ignoreSnapshot: true });
    expect(fromSnapshot.coordinator.issuedFence).toBe(full.state.table.issuedFence);
    expect(fromSnapshot.coordinator.leases()).toEqual(leasesOf(full.state));
    expect(fromSnapshot.coordinator.leases().map((l) => [l.resource, l.fence])).toEqual(
      Array.from({ length: 120 }, (_, i) => [`r-${i}`, i + 1]),
    );
  });
});
