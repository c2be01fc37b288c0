/**
 * A writer thread that dies on its own (an out-of-memory kill of the worker, a native crash in
 * the driver): the writes it held must be refused, never acknowledged and never left waiting, and
 * the log must take writes again on a new thread (`sqlite-event-log.ts`, `onWriter`).
 *
 * The worker is reached by wrapping `node:worker_threads`' `Worker` so the test can terminate the
 * one the log started; nothing in the library offers a way to kill its thread, on purpose. The
 * wrapper can also hold back what the main thread posts to the worker, so that appends are
 * certainly in flight and undelivered when the thread dies: the worker commits the appends queued
 * on its port together, so without the hold it may commit and acknowledge them all before
 * `terminate()` lands, whatever the test does between the two. Nothing here waits on a timer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker as NodeWorker } from 'node:worker_threads';
import { EventLogUnavailableError, type AppendResult } from '@lease-fence/coordinator-core';
import { leaseGranted, readAll } from '@lease-fence/coordinator-core/testing';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openSqliteEventLog } from './sqlite-event-log.js';

/** Every worker started in this file, in start order, and the posts held back while `holding`. */
const workers = vi.hoisted(() => ({ started: [] as NodeWorker[], holding: false, held: [] as unknown[] }));
vi.mock('node:worker_threads', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:worker_threads')>();
  class RecordedWorker extends original.Worker {
    constructor(...args: ConstructorParameters<typeof original.Worker>) {
      super(...args);
      workers.started.push(this);
    }
    override postMessage(...args: Parameters<NodeWorker['postMessage']>): void {
      if (workers.holding) {
        workers.held.push(args[0]); // never delivered: the test terminates the worker
        return;
      }
      super.postMessage(...args);
    }
  }
  return { ...original, Worker: RecordedWorker };
});

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-writer-death-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
afterEach(() => {
  workers.holding = false;
  workers.held.length = 0;
});
let counter = 0;

/** `n` grants with fences `first..first + n - 1`. */
const grantsFrom = (first: number, n: number) =>
  Array.from({ length: n }, (_, i) =>
    leaseGranted(`resource-${first + i}`, 'agent-a', first + i, { atMillis: first + i }),
  );

/** How a write ended, recorded as it settles, so a write left waiting shows as `pending` instead of hanging the test. */
type Outcome =
  | { readonly state: 'pending' }
  | { readonly state: 'acknowledged'; readonly value: AppendResult }
  | { readonly state: 'rejected'; readonly reason: unknown };
const track = (promise: Promise<AppendResult>): { outcome: Outcome } => {
  const tracked: { outcome: Outcome } = { outcome: { state: 'pending' } };
  promise.then(
    (value) => (tracked.outcome = { state: 'acknowledged', value }),
    (reason: unknown) => (tracked.outcome = { state: 'rejected', reason }),
  );
  return tracked;
};
/** One turn of the event loop: the reactions to the worker's `exit` have run. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A log on a writer thread at version 2, and that thread. */
const openAtVersion2 = async () => {
  const log = await openSqliteEventLog({ file: join(directory, `log-${++counter}.db`), writer: 'thread' });
  await log.append(grantsFrom(1, 2), { expectedVersion: 0 });
  return { log, thread: workers.started.at(-1)! };
};

/** The log takes writes again, on a new thread, after `version`. */
const expectWritesOnANewThread = async (log: Awaited<ReturnType<typeof openAtVersion2>>['log'], version: number) => {
  const before = workers.started.length;
  expect(await log.append(grantsFrom(10, 1), { expectedVersion: version })).toEqual({
    fromPosition: version + 1,
    toPosition: version + 1,
  });
  expect(workers.started.length).toBe(before + 1);
};

describe('a writer thread that dies on its own', () => {
  it('refuses the appends it held undelivered, writes none, and the next append lands on a new thread', async () => {
    // Given a log on a writer thread at version 2
    const { log, thread } = await openAtVersion2();
    // When appends are posted and held back from the worker, and the thread dies
    workers.holding = true;
    const inFlight = [
      track(log.append(grantsFrom(3, 2), { expectedVersion: 2 })),
      track(log.append(grantsFrom(5, 1), { expectedVersion: 4 })),
    ];
    await thread.terminate();
    await nextTurn();
    expect(workers.held).toHaveLength(2);
    workers.holding = false;
    // Then each is refused as unavailable (the coordinator's signal to stop and re-open from the log), none left waiting
    for (const { outcome } of inFlight) {
      expect(outcome.state).toBe('rejected');
      expect((outcome as { reason: unknown }).reason).toBeInstanceOf(EventLogUnavailableError);
    }
    // And nothing of them was written
    expect(await log.version()).toBe(2);
    // And the log takes writes again, on a new thread
    await expectWritesOnANewThread(log, 2);
    await log.close();
  });

  it('settles every append it was handed (acknowledged only if written, else refused), and the next append lands on a new thread', async () => {
    // Given a log on a writer thread at version 2
    const { log, thread } = await openAtVersion2();
    // When appends are delivered to the worker and the thread dies, committed or not by then
    const inFlight = [
      track(log.append(grantsFrom(3, 2), { expectedVersion: 2 })),
      track(log.append(grantsFrom(5, 1), { expectedVersion: 4 })),
    ];
    await thread.terminate();
    await nextTurn();
    // Then each was either acknowledged or refused as unavailable, none left waiting
    for (const { outcome } of inFlight) {
      expect(outcome.state).not.toBe('pending');
      if (outcome.state === 'rejected') expect(outcome.reason).toBeInstanceOf(EventLogUnavailableError);
    }
    // And in call order: an append acknowledged after one refused would have been decided on a version that was not confirmed
    const states = inFlight.map(({ outcome }) => outcome.state);
    expect(states.join(',')).toMatch(/^(acknowledged,)*(rejected,?)*$/);
    // And the log holds every acknowledged append (a refused one may have committed: its outcome is unknown)
    const version = await log.version();
    expect([2, 4, 5]).toContain(version);
    const acknowledged = inFlight.filter(({ outcome }) => outcome.state === 'acknowledged');
    expect(version).toBeGreaterThanOrEqual([2, 4, 5][acknowledged.length]!);
    expect((await readAll(log.read({ from: 1 }))).map((r) => r.event)).toEqual(grantsFrom(1, version));
    // And the log takes writes again, on a new thread
    await expectWritesOnANewThread(log, version);
    await log.close();
  });
});
