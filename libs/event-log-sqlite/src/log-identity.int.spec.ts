/**
 * The log identity the data directory remembers (`log-identity.ts`): a lost, emptied or replaced
 * log is refused at open instead of starting over at fence 1.
 */
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EventLogCorruptError } from '@lease-fence/coordinator-core';
import { leaseGranted, readAll } from '@lease-fence/coordinator-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { EventLogLostError, logIdFileOf } from './log-identity.js';
import { openSqliteEventLog } from './sqlite-event-log.js';

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-log-identity-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
/** A log path in a directory of its own, as a data directory holds one log per namespace. */
const freshFileIn = (): string => {
  const dataDir = mkdtempSync(join(directory, 'data-'));
  return join(dataDir, 'default.events.sqlite');
};

const grant = (fence: number) => leaseGranted(`resource-${fence}`, 'agent-a', fence, { atMillis: fence });

/** A closed log of `events` grants, its marker beside it; returns its id. */
async function closedLog(file: string, events = 3): Promise<string> {
  const log = await openSqliteEventLog({ file });
  for (let fence = 1; fence <= events; fence += 1) await log.append([grant(fence)], { expectedVersion: fence - 1 });
  await log.close();
  return log.logId;
}

const metaLogId = (file: string): string | undefined => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(`SELECT value FROM meta WHERE key = 'log_id'`).pluck().get() as string | undefined;
  } finally {
    db.close();
  }
};
const marker = (file: string): string => readFileSync(logIdFileOf(file), 'utf8').trim();
const refusalOf = (file: string): Promise<unknown> => openSqliteEventLog({ file }).catch((error: unknown) => error);

describe('the log identity the data directory remembers', () => {
  it('gives a new log a random id, in the meta table and in the marker beside the file', async () => {
    const file = freshFileIn();
    const log = await openSqliteEventLog({ file });
    await log.close();

    expect(log.logId).toMatch(/^[0-9a-f-]{36}$/);
    expect(metaLogId(file)).toBe(log.logId);
    expect(marker(file)).toBe(log.logId);
    const other = freshFileIn();
    expect(await closedLog(other, 0)).not.toBe(log.logId);
  });

  it('reopens its own log: same id, same events, marker unchanged', async () => {
    const file = freshFileIn();
    const logId = await closedLog(file);

    const reopened = await openSqliteEventLog({ file });

    expect(reopened.logId).toBe(logId);
    expect(await readAll(reopened.read({ from: 1 }))).toHaveLength(3);
    await reopened.close();
    expect(marker(file)).toBe(logId);
  });

  it('refuses a log truncated to 0 bytes, saying what happened and the two ways out, and writes nothing to it', async () => {
    // Given a data directory whose log was truncated to 0 bytes
    const file = freshFileIn();
    const logId = await closedLog(file);
    truncateSync(file, 0);

    // When it is opened
    const error = await refusalOf(file);

    // Then it is refused, naming the file, the recorded id and the marker
    expect(error).toBeInstanceOf(EventLogLostError);
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ code: 'event-log-corrupt', recordedLogId: logId, found: 'empty' });
    expect((error as Error).message).toBe(
      `event log ${file} is empty, but this data directory held log ${logId} (recorded in ${logIdFileOf(file)}): a lost log would issue fences again from 1. Restore the log from a backup, or, to start a new log on purpose, delete ${logIdFileOf(file)} (gates' floor reports then guard the fences: LEASE_FENCE_FLOOR_WAIT_MILLIS).`,
    );
    // And nothing was written: the file is still empty, no journal beside it, the marker kept
    expect(statSync(file).size).toBe(0);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(marker(file)).toBe(logId);
  });

  it('refuses a deleted log and creates no file', async () => {
    const file = freshFileIn();
    const logId = await closedLog(file);
    rmSync(file);

    const error = await refusalOf(file);

    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect((error as Error).message).toContain(
      `event log ${file} is missing, but this data directory held log ${logId}`,
    );
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('refuses a SQLite file without tables in place of the log', async () => {
    const file = freshFileIn();
    const logId = await closedLog(file);
    rmSync(file);
    const empty = new Database(file);
    empty.pragma('user_version = 7'); // a valid, non-empty database file with no tables
    empty.close();

    const error = await refusalOf(file);

    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect((error as Error).message).toContain(`event log ${file} is empty, but this data directory held log ${logId}`);
    const db = new Database(file, { readonly: true });
    expect(db.prepare(`SELECT COUNT(*) FROM sqlite_schema`).pluck().get()).toBe(0);
    db.close();
  });

  it('refuses another log put in the place of the recorded one, naming both ids, and leaves it as it was', async () => {
    // Given a data directory whose log was replaced by another data directory's log
    const file = freshFileIn();
    const logId = await closedLog(file);
    const elsewhere = freshFileIn();
    const otherId = await closedLog(elsewhere, 5);
    renameSync(elsewhere, file);

    // When it is opened
    const error = await refusalOf(file);

    // Then it is refused
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect((error as Error).message).toContain(
      `event log ${file} is log ${otherId}, but this data directory held log ${logId} (recorded in ${logIdFileOf(file)})`,
    );
    expect(metaLogId(file)).toBe(otherId);
    expect(marker(file)).toBe(logId);
  });

  it('refuses a log without an id where the marker records one', async () => {
    const file = freshFileIn();
    const logId = await closedLog(file);
    const db = new Database(file);
    db.prepare(`DELETE FROM meta WHERE key = 'log_id'`).run();
    db.close();

    const error = await refusalOf(file);

    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect((error as Error).message).toContain(
      `event log ${file} has no log id, but this data directory held log ${logId}`,
    );
    expect(metaLogId(file)).toBeUndefined();
  });

  it('adopts a log from before log ids: gives it an id and records it, with every event kept', async () => {
    // Given a log written before log ids: no log_id in meta, no marker
    const file = freshFileIn();
    await closedLog(file);
    const db = new Database(file);
    db.prepare(`DELETE FROM meta WHERE key = 'log_id'`).run();
    db.close();
    rmSync(logIdFileOf(file));

    // When it is opened, and again
    const adopted = await openSqliteEventLog({ file });
    await adopted.close();
    const again = await openSqliteEventLog({ file });

    // Then it was adopted once: the id is in meta and in the marker, and the events are all there
    expect(adopted.logId).toMatch(/^[0-9a-f-]{36}$/);
    expect(metaLogId(file)).toBe(adopted.logId);
    expect(marker(file)).toBe(adopted.logId);
    expect(again.logId).toBe(adopted.logId);
    expect(await readAll(again.read({ from: 1 }))).toHaveLength(3);
    await again.close();
  });

  it('starts a new log when the marker was deleted on purpose', async () => {
    const file = freshFileIn();
    const lostId = await closedLog(file);
    truncateSync(file, 0);
    rmSync(logIdFileOf(file));

    const fresh = await openSqliteEventLog({ file });

    expect(fresh.logId).not.toBe(lostId);
    expect(await fresh.version()).toBe(0);
    expect(marker(file)).toBe(fresh.logId);
    await fresh.close();
  });

  it('a second handle on the same file (a standby) reads the marker and records only the id the file holds', async () => {
    // Given an active handle on a log
    const file = freshFileIn();
    const active = await openSqliteEventLog({ file });
    // When a standby opens the same file, with the marker there and then without it
    const standby = await openSqliteEventLog({ file });
    rmSync(logIdFileOf(file));
    const late = await openSqliteEventLog({ file });
    // Then all three agree on the id, and the marker rewritten is the file's id
    expect([standby.logId, late.logId]).toEqual([active.logId, active.logId]);
    expect(marker(file)).toBe(active.logId);
    await Promise.all([active.close(), standby.close(), late.close()]);
  });

  it('refuses a marker that does not hold a log id, naming it', async () => {
    const file = freshFileIn();
    await closedLog(file);
    writeFileSync(logIdFileOf(file), 'not an id\n');

    const error = await refusalOf(file);

    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect((error as Error).message).toContain(`the log id marker ${logIdFileOf(file)} does not hold a log id`);
  });
});
