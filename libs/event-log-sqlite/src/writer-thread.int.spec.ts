/**
 * The writer thread's grouping (`writer-thread.ts`, "Grouping"): the appends queued on the worker
 * when it starts a transaction share that transaction, each checked in order in a savepoint of its
 * own, and a failure in the middle keeps the rules of one append per transaction.
 *
 * The worker is parked without timing: another connection holds the write lock while a snapshot
 * save (a transaction of its own) is posted, then the appends; the lock is released only once
 * every append is posted, so whenever the worker wakes, the snapshot's transaction is the only one
 * that can start before all the appends are queued, and the next one takes them all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { encodeEvents, EventLogUnavailableError, type EncodedEvent } from '@lease-fence/coordinator-core';
import { leaseGranted } from '@lease-fence/coordinator-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteEventLog } from './sqlite-event-log.js';
import { startWriterThread, type WriterThread } from './writer-thread.js';

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-writer-thread-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let counter = 0;

/** A new log file with its schema (created by an inline open), and a writer thread on it. */
const startOnFreshLog = async (busyTimeoutMillis = 60_000): Promise<{ file: string; thread: WriterThread }> => {
  const file = join(directory, `log-${++counter}.db`);
  await (await openSqliteEventLog({ file })).close();
  return { file, thread: await startWriterThread({ file, busyTimeoutMillis, synchronous: 'FULL' }) };
};

/** `n` encoded grants with fences `first..first + n - 1`. */
const rowsFrom = (first: number, n: number): EncodedEvent[] =>
  encodeEvents(
    'test',
    Array.from({ length: n }, (_, i) =>
      leaseGranted(`resource-${first + i}`, 'agent-a', first + i, { atMillis: first + i }),
    ),
  );

/** A row the `events` table refuses (its `type` is NOT NULL): SQLite throws inside the append. */
const refusedRow = { type: null, version: 1, data: '{}' } as unknown as EncodedEvent;

/** Holds the write lock of `file` on another connection until the returned function is called. */
const holdWriteLock = (file: string): (() => void) => {
  const other = new Database(file);
  other.prepare('BEGIN IMMEDIATE').run();
  return () => {
    other.prepare('ROLLBACK').run();
    other.close();
  };
};

/**
 * Runs `post` while the worker is parked behind a snapshot save (see the file header), then lets it
 * go. Returns what `post` returned and how many transactions the worker ran for the snapshot and
 * the appends.
 */
const postWhileParked = async <T extends readonly Promise<unknown>[]>(
  file: string,
  thread: WriterThread,
  post: () => T,
): Promise<{ posted: T; transactions: number }> => {
  const before = thread.transactions;
  const release = holdWriteLock(file);
  const parked = thread.saveSnapshot({ position: 0, schemaVersion: 1, state: '{}', savedAt: 0, kept: 3 });
  const posted = post();
  release();
  await parked;
  await Promise.allSettled(posted);
  return { posted, transactions: thread.transactions - before };
};

/** The version of `file` as another connection reads it. */
const versionOf = (file: string): number => {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare('SELECT COALESCE(MAX(position), 0) FROM events').pluck().get() as number;
  } finally {
    reader.close();
  }
};

describe('the writer thread groups the appends queued when it starts a transaction', () => {
  it('writes several queued appends in one transaction, acknowledged in order', async () => {
    // Given a writer thread parked while five appends are posted, each expecting the version after the one before
    const { file, thread } = await startOnFreshLog();
    const { posted, transactions } = await postWhileParked(file, thread, () =>
      [0, 1, 2, 3, 4].map((i) => thread.append(rowsFrom(i * 2 + 1, 2), i * 2, 0)),
    );
    // Then they were written in one transaction (plus the snapshot's), and each acknowledged with its version
    expect(transactions).toBe(2);
    expect(await Promise.all(posted)).toEqual([2, 4, 6, 8, 10].map((toPosition) => ({ conflict: false, toPosition })));
    expect(versionOf(file)).toBe(10);
    await thread.close();
  });

  it('a conflict in the middle of a group: the earlier appends commit, the later ones are refused unwritten', async () => {
    // Given a parked writer thread, and appends where the third expects a version that will not be the log's
    const { file, thread } = await startOnFreshLog();
    const { posted, transactions } = await postWhileParked(file, thread, () => [
      thread.append(rowsFrom(1, 2), 0, 0),
      thread.append(rowsFrom(3, 1), 2, 0),
      thread.append(rowsFrom(4, 1), 1, 0), // stale: the log is at 3 by then
      thread.append(rowsFrom(4, 1), 3, 0), // decided after the stale one
      thread.append(rowsFrom(5, 1), 4, 0),
    ]);
    expect(transactions).toBe(2);
    const results = await Promise.allSettled(posted);
    // Then the first two are committed and acknowledged, the third is the conflict with the version it found
    expect(results.slice(0, 3)).toEqual([
      { status: 'fulfilled', value: { conflict: false, toPosition: 2 } },
      { status: 'fulfilled', value: { conflict: false, toPosition: 3 } },
      { status: 'fulfilled', value: { conflict: true, actualVersion: 3 } },
    ]);
    // And the later ones are refused as unavailable and not written
    for (const result of results.slice(3)) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(EventLogUnavailableError);
    }
    expect(versionOf(file)).toBe(3);
    // And an append posted after the conflict was seen lands
    expect(await thread.append(rowsFrom(4, 1), 3, 0)).toEqual({ conflict: false, toPosition: 4 });
    await thread.close();
  });

  it('an SQLite error in the middle of a group rolls back that append only, and refuses the later ones unwritten', async () => {
    // Given a parked writer thread, and appends where the third holds a row SQLite refuses after a good one
    const { file, thread } = await startOnFreshLog();
    const { posted, transactions } = await postWhileParked(file, thread, () => [
      thread.append(rowsFrom(1, 2), 0, 0),
      thread.append(rowsFrom(3, 1), 2, 0),
      thread.append([...rowsFrom(4, 1), refusedRow], 3, 0),
      thread.append(rowsFrom(6, 1), 5, 0), // decided after the failing one
    ]);
    expect(transactions).toBe(2);
    const results = await Promise.allSettled(posted);
    // Then the first two are committed and acknowledged
    expect(results.slice(0, 2)).toEqual([
      { status: 'fulfilled', value: { conflict: false, toPosition: 2 } },
      { status: 'fulfilled', value: { conflict: false, toPosition: 3 } },
    ]);
    // And the third rejects with SQLite's error, its good row rolled back with it (its savepoint)
    expect(results[2]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_NOTNULL' } });
    expect(versionOf(file)).toBe(3);
    // And the later one is refused as unavailable and not written
    expect(results[3]!.status).toBe('rejected');
    expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(EventLogUnavailableError);
    // And an append posted after the failure was seen lands
    expect(await thread.append(rowsFrom(4, 2), 3, 0)).toEqual({ conflict: false, toPosition: 5 });
    await thread.close();
  });

  it('a transaction that cannot start fails every append of its group, writes none, and the thread writes again after', async () => {
    // Given a writer thread that waits at most 1 ms for the lock, and another connection holding it
    const { file, thread } = await startOnFreshLog(1);
    const release = holdWriteLock(file);
    // When appends are posted
    const results = await Promise.allSettled([
      thread.append(rowsFrom(1, 2), 0, 0),
      thread.append(rowsFrom(3, 1), 2, 0),
    ]);
    release();
    // Then each is rejected (the busy error, or refused after it) and nothing is written
    for (const result of results) expect(result.status).toBe('rejected');
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_BUSY' } });
    expect(versionOf(file)).toBe(0);
    // And an append posted after the failure was seen lands
    expect(await thread.append(rowsFrom(1, 1), 0, 0)).toEqual({ conflict: false, toPosition: 1 });
    await thread.close();
  });
});
