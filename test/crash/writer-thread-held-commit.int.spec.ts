/**
 * The writer thread acknowledges nothing before its COMMIT, even with batches pipelined: a child
 * grants under load with `writer: 'thread'`; the test then holds SQLite's write lock from another
 * connection, so every batch the child decides next reaches the writer thread and waits there
 * for the lock, uncommitted; the child is killed with SIGKILL while they wait. No grant printed
 * (acknowledged) may be missing from the log, the log has no gap, and the next fence is above
 * every fence the log holds.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { DurableCoordinator, type RecordedEvent } from '@lease-fence/coordinator-core';
import { readAll } from '@lease-fence/coordinator-core/testing';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { createManualClock } from 'lease-fence';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopByPid, waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./grant-under-load.child.mjs', import.meta.url));

let directory: string;
beforeAll(async () => {
  directory = await createTempDir('lease-fence-writer-thread-');
});
afterAll(async () => {
  await removeTempDir(directory);
});

describe('the SQLite writer thread, killed with batches posted but not committed', () => {
  it('acknowledged nothing it had not committed; the log has no gap and the next fence is above every one in it', async () => {
    // Given a child granting under load through the writer thread
    const file = join(directory, 'held.db');
    const child = spawn(process.execPath, [CHILD, file, '16', 'thread'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = waitForExit(child);
    const acknowledged: { resource: string; fence: number }[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let buffered = '';
    let onGrants: (() => void) | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, resource, , fence] = line.split(' ');
        if (kind === 'grant') acknowledged.push({ resource: resource!, fence: Number(fence) });
      }
      if (acknowledged.length >= 200) onGrants?.();
    });
    await new Promise<void>((resolve, reject) => {
      onGrants = resolve;
      void exited.then(() => reject(new Error(`child exited early: ${stderr}`)));
    });

    // When another connection takes the write lock (the child's next batches wait for it in the
    // writer thread), and the child is killed while they wait
    const holder = new Database(file, { timeout: 10_000 });
    holder.prepare('BEGIN IMMEDIATE').run();
    const versionUnderLock = holder.prepare<[], number>('SELECT COALESCE(MAX(position), 0) FROM events').pluck().get()!;
    await new Promise((resolve) => setTimeout(resolve, 300)); // the child keeps deciding and posting
    await stopByPid(child, 'SIGKILL');
    const exit = await exited;
    holder.prepare('ROLLBACK').run();
    holder.close();
    expect(exit.signal).toBe('SIGKILL');

    // Then nothing was committed after the lock was taken, every acknowledged grant (printed
    // before or during the hold) is in the log, the log reads without a gap, and fences go on above it
    const log = await openSqliteEventLog({ file });
    try {
      const recorded: RecordedEvent[] = await readAll(log.read({ from: 1 }));
      expect(recorded.map((r) => r.position)).toEqual(recorded.map((_, i) => i + 1));
      expect(recorded.length).toBe(versionUnderLock); // nothing was committed while the lock was held
      const granted = new Map(
        recorded.flatMap((r) =>
          r.event.type === 'LeaseGranted' ? [[r.event.data.resource, r.event.data.fence] as const] : [],
        ),
      );
      for (const grant of acknowledged) expect(granted.get(grant.resource), grant.resource).toBe(grant.fence);
      const coordinator = await DurableCoordinator.open({
        log,
        namespace: 'crash',
        clock: createManualClock('after-held-commit'),
        defaultTtlMillis: 60_000,
        runTimers: false,
      });
      const next = await coordinator.acquire({ resource: 'after', holderId: 'survivor', requestId: 'after-1' });
      expect(next.ok && next.grant.fence).toBeGreaterThan(Math.max(0, ...granted.values()));
      await coordinator.close();
    } finally {
      await log.close();
    }
  });
});
