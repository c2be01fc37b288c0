/**
 * kill -9 while the coordinator appends under load: every grant acknowledged before the kill
 * must be in the log, and the next fence must be above all of them. The kill points are
 * seeded: the child is killed right after it acknowledged the n-th grant, while its other
 * acquires are being decided and appended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DurableCoordinator, type RecordedEvent } from '@lease-fence/coordinator-core';
import { readAll } from '@lease-fence/coordinator-core/testing';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopByPid, waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./grant-under-load.child.mjs', import.meta.url));

interface AcknowledgedGrant {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
}

/**
 * Starts the child on `file` and kills it with SIGKILL right after its `killAfter`-th
 * acknowledged grant (0: as soon as it is ready). Returns every grant it printed (complete lines only).
 */
async function grantUntilKilled(
  file: string,
  killAfter: number,
  concurrency: number,
  writer: 'inline' | 'thread',
): Promise<AcknowledgedGrant[]> {
  const child: ChildProcess = spawn(process.execPath, [CHILD, file, String(concurrency), writer], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const grants: AcknowledgedGrant[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let buffered = '';
  let killed: Promise<unknown> | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const [kind, resource, holderId, fence, requestId] = line.split(' ');
      if (kind === 'grant')
        grants.push({ resource: resource!, holderId: holderId!, fence: Number(fence), requestId: requestId! });
      if ((kind === 'grant' || kind === 'ready') && grants.length >= killAfter && killed === undefined)
        killed = stopByPid(child, 'SIGKILL');
    }
  });
  const exit = await waitForExit(child);
  await killed;
  if (exit.signal !== 'SIGKILL')
    throw new Error(`child exited with ${JSON.stringify(exit)} before the kill: ${stderr}`);
  return grants;
}

let directory: string;
beforeAll(async () => {
  directory = await createTempDir('lease-fence-crash-');
});
afterAll(async () => {
  await removeTempDir(directory);
});

/**
 * Seeded kill points: after how many acknowledged grants, with how many acquires in flight, with
 * each SQLite writer (the writer thread pipelines its appends: up to 2 batches in flight).
 */
const KILL_POINTS = (['inline', 'thread'] as const).flatMap((writer) =>
  [
    { seed: 1, killAfter: 0, concurrency: 64 },
    { seed: 2, killAfter: 1, concurrency: 1 },
    { seed: 3, killAfter: 37, concurrency: 8 },
    { seed: 4, killAfter: 211, concurrency: 32 },
    { seed: 5, killAfter: 503, concurrency: 64 },
    { seed: 6, killAfter: 977, concurrency: 16 },
  ].map((point) => ({ ...point, writer })),
);

describe('DurableCoordinator on SQLite, killed with SIGKILL during appends', () => {
  it.each(KILL_POINTS)(
    'keeps every acknowledged grant and mints above them ($writer writer, seed $seed: kill after $killAfter grants, $concurrency in flight)',
    async ({ seed, killAfter, concurrency, writer }) => {
      // Given a child that granted under load until it was killed
      const file = join(directory, `seed-${seed}-${writer}.db`);
      const acknowledged = await grantUntilKilled(file, killAfter, concurrency, writer);
      expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter);

      // When the log is reopened and a new coordinator recovers from it
      const log = await openSqliteEventLog({ file, durability: 'full' });
      try {
        const recorded: RecordedEvent[] = await readAll(log.read({ from: 1 }));
        const coordinator = await DurableCoordinator.open({
          log,
          namespace: 'crash',
          clock: createManualClock(`recovered-${seed}`),
          defaultTtlMillis: 60_000,
          runTimers: false,
        });

        // Then every acknowledged grant is in the log with its fence
        const granted = new Map(
          recorded.flatMap((r) =>
            r.event.type === 'LeaseGranted' ? [[r.event.data.resource, r.event.data.fence] as const] : [],
          ),
        );
        for (const grant of acknowledged) expect(granted.get(grant.resource), grant.resource).toBe(grant.fence);
        // and no fence was issued twice
        expect(new Set(granted.values()).size).toBe(granted.size);
        // and the next fence is above every acknowledged one
        const highest = Math.max(0, ...acknowledged.map((g) => g.fence));
        const next = await coordinator.acquire({
          resource: 'after-the-crash',
          holderId: 'survivor',
          requestId: 'after-1',
        });
        expect(next.ok && next.grant.fence).toBeGreaterThan(highest);
        // and a retry of the last acknowledged grant gets the same fence (the replay cache survived)
        const last = acknowledged.at(-1);
        if (last !== undefined) {
          expect(
            await coordinator.acquire({ resource: last.resource, holderId: last.holderId, requestId: last.requestId }),
          ).toMatchObject({ ok: true, grant: { fence: last.fence } });
        }
        await coordinator.close();
      } finally {
        await log.close();
      }
    },
  );
});
