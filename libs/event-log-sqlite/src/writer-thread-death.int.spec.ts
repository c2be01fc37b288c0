/**
 * A writer thread that dies on its own (an out-of-memory kill of the worker, a native crash in
 * the driver): the writes it held must be refused, never acknowledged and never left waiting, and
 * the log must take writes again on a new thread (`sqlite-event-log.ts`, `onWriter`).
 *
 * The worker is reached by wrapping `node:worker_threads`' `Worker` so the test can terminate the
 * one the log started; nothing in the library offers a way to kill its thread, on purpose.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker as NodeWorker } from 'node:worker_threads';
import { EventLogUnavailableError } from '@lease-fence/coordinator-core';
import { leaseGranted } from '@lease-fence/coordinator-core/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openSqliteEventLog } from './sqlite-event-log.js';

/** Every worker started in this file, in start order. */
const started = vi.hoisted((): NodeWorker[] => []);
vi.mock('node:worker_threads', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:worker_threads')>();
  class RecordedWorker extends original.Worker {
    constructor(...args: ConstructorParameters<typeof original.Worker>) {
      super(...args);
      started.push(this);
    }
  }
  return { ...original, Worker: RecordedWorker };
});

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-writer-death-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** `n` grants with fences `first..first + n - 1`. */
const grantsFrom = (first: number, n: number) =>
  Array.from({ length: n }, (_, i) =>
    leaseGranted(`resource-${first + i}`, 'agent-a', first + i, { atMillis: first + i }),
  );

describe('a writer thread that dies on its own', () => {
  it('refuses the appends it held, never acknowledges them, and the next append lands on a new thread', async () => {
    // Given a log on a writer thread at version 2
    const log = await openSqliteEventLog({ file: join(directory, 'log.db'), writer: 'thread' });
    await log.append(grantsFrom(1, 2), { expectedVersion: 0 });
    const thread = started.at(-1)!;
    // When appends are in flight and the thread is terminated before it replies
    const inFlight = [
      log.append(grantsFrom(3, 2), { expectedVersion: 2 }),
      log.append(grantsFrom(5, 1), { expectedVersion: 4 }),
    ];
    await thread.terminate();
    // Then each is refused as unavailable (the coordinator's signal to stop and re-open from the log)
    for (const result of await Promise.allSettled(inFlight)) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(EventLogUnavailableError);
    }
    // And the log takes writes again, on a new thread, after whatever the dead one committed
    const version = await log.version();
    expect([2, 4, 5]).toContain(version); // a refused append may have committed before the kill: unknown outcome, never acknowledged
    const before = started.length;
    expect(await log.append(grantsFrom(10, 1), { expectedVersion: version })).toEqual({
      fromPosition: version + 1,
      toPosition: version + 1,
    });
    expect(started.length).toBe(before + 1);
    await log.close();
  });
});
