import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EventLogCorruptError, EventLogUnavailableError, replayLog } from '@lease-fence/coordinator-core';
import {
  coordinatorStarted,
  describeEventLogContract,
  leaseGranted,
  readAll,
} from '@lease-fence/coordinator-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteEventLog } from './sqlite-event-log.js';

const directory = mkdtempSync(join(tmpdir(), 'lease-fence-sqlite-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let counter = 0;
const freshFile = (): string => join(directory, `log-${++counter}.db`);

let file = freshFile();
describeEventLogContract('sqlite', {
  open: async () => {
    file = freshFile();
    return openSqliteEventLog({ file, durability: 'full' });
  },
  reopen: async () => openSqliteEventLog({ file, durability: 'full' }),
  openSecondWriter: async () => openSqliteEventLog({ file, durability: 'full', pollIntervalMillis: 10 }),
});

let threadFile = freshFile();
describeEventLogContract('sqlite, writer thread', {
  open: async () => {
    threadFile = freshFile();
    return openSqliteEventLog({ file: threadFile, durability: 'full', writer: 'thread' });
  },
  reopen: async () => openSqliteEventLog({ file: threadFile, durability: 'full', writer: 'thread' }),
  openSecondWriter: async () =>
    openSqliteEventLog({ file: threadFile, durability: 'full', pollIntervalMillis: 10, writer: 'thread' }),
});

const grants = (n: number) =>
  Array.from({ length: n }, (_, i) => leaseGranted(`resource-${i + 1}`, 'agent-a', i + 1, { atMillis: i }));

describe('openSqliteEventLog', () => {
  describe('at open', () => {
    it('refuses a file that is not a SQLite database with EventLogCorruptError', async () => {
      const garbage = freshFile();
      writeFileSync(garbage, 'this is not a database, just some text that is long enough to have a header'.repeat(100));
      const error = await openSqliteEventLog({ file: garbage }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ code: 'event-log-corrupt' });
      expect(readFileSync(garbage, 'utf8')).toMatch(/^this is not a database/);
    });

    it('refuses a truncated file instead of serving fewer events than were acknowledged', async () => {
      // Given a closed log of 3000 events (checkpointed into the main file)
      const truncated = freshFile();
      const log = await openSqliteEventLog({ file: truncated });
      for (let i = 0; i < 3; i += 1) await log.append(grants(1000), { expectedVersion: i * 1000 });
      await log.close();
      // When the file loses its second half
      truncateSync(truncated, Math.floor(statSync(truncated).size / 2));
      // Then opening it fails clearly
      await expect(openSqliteEventLog({ file: truncated })).rejects.toBeInstanceOf(EventLogCorruptError);
    });

    describe('a file larger than 16 MiB (quick_check on a worker, beside recovery)', () => {
      /** A closed log of 100k events, over 16 MiB, so open hands quick_check to a worker. */
      const largeLog = async (): Promise<string> => {
        const large = freshFile();
        const log = await openSqliteEventLog({ file: large, durability: 'normal' });
        for (let i = 0; i < 2; i += 1) await log.append(grants(50_000), { expectedVersion: i * 50_000 });
        await log.close();
        expect(statSync(large).size).toBeGreaterThan(16 * 1024 * 1024);
        return large;
      };

      it('appends nothing to a file quick_check refuses: the first append throws what quick_check said', async () => {
        // Given a large log with part of one page in its middle overwritten (damage at rest; a
        // leaf of the events table, which open's own descents to the first and last position miss)
        const damaged = await largeLog();
        const bytes = readFileSync(damaged);
        const page = Math.floor(bytes.length / 2 / 4096) * 4096;
        bytes.fill(0x5a, page + 1024, page + 3072);
        writeFileSync(damaged, bytes);
        // When it is opened (which does not wait for quick_check) and a write is attempted
        const log = await openSqliteEventLog({ file: damaged });
        const error = await log.append(grants(1), { expectedVersion: 100_000 }).catch((e: unknown) => e);
        // Then the write is refused with quick_check's findings, and so is every later read
        expect(error).toBeInstanceOf(EventLogCorruptError);
        expect((error as EventLogCorruptError).issues[0]?.message).toMatch(/^quick_check: /);
        await expect(readAll(log.read({ from: 1 }))).rejects.toBe(error);
        await log.close();
        const db = new Database(damaged, { readonly: true });
        expect(db.prepare('SELECT COUNT(*) FROM events WHERE position > 100000').pluck().get()).toBe(0);
        db.close();
      }, 120_000); // CPU-bound: writes and checks 100k events

      it('reads and appends to a sound large file', async () => {
        const sound = await largeLog();
        const log = await openSqliteEventLog({ file: sound });
        expect(await readAll(log.read({ from: 1 }))).toHaveLength(100_000);
        await expect(log.append(grants(1), { expectedVersion: 100_000 })).resolves.toEqual({
          fromPosition: 100_001,
          toPosition: 100_001,
        });
        await log.close();
      }, 120_000);
    });

    it('refuses a SQLite database that is not an event log', async () => {
      const foreign = freshFile();
      const db = new Database(foreign);
      db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
      db.close();
      await expect(openSqliteEventLog({ file: foreign })).rejects.toThrow(/not a lease-fence event log/);
    });

    it('refuses a log with a gap in the positions its latest snapshot covers and names the first missing position', async () => {
      const gapped = freshFile();
      const log = await openSqliteEventLog({ file: gapped });
      await log.append(grants(8), { expectedVersion: 0 });
      await log.saveSnapshot({ position: 6, schemaVersion: 1, state: {} });
      await log.close();
      const db = new Database(gapped);
      db.prepare('DELETE FROM events WHERE position = 3').run();
      db.close();
      const error = await openSqliteEventLog({ file: gapped }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 3, issues: [{ path: 'position' }] });
    });

    it('refuses a log whose positions do not start at 1', async () => {
      const gapped = freshFile();
      const log = await openSqliteEventLog({ file: gapped });
      await log.append(grants(3), { expectedVersion: 0 });
      await log.close();
      const db = new Database(gapped);
      db.prepare('DELETE FROM events WHERE position = 1').run();
      db.close();
      const error = await openSqliteEventLog({ file: gapped }).catch((e: unknown) => e);
      expect(error).toMatchObject({ position: 1, issues: [{ path: 'position' }] });
    });

    it('refuses a file written by a newer schema version', async () => {
      const newer = freshFile();
      const log = await openSqliteEventLog({ file: newer });
      await log.close();
      const db = new Database(newer);
      db.prepare(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`).run();
      db.close();
      await expect(openSqliteEventLog({ file: newer })).rejects.toThrow(/schema version 99/);
    });

    it('reports a directory that does not exist as EventLogUnavailableError', async () => {
      await expect(openSqliteEventLog({ file: join(directory, 'missing', 'x.db') })).rejects.toBeInstanceOf(
        EventLogUnavailableError,
      );
    });

    it('refuses bad options with errors naming the option', async () => {
      await expect(openSqliteEventLog({ file: freshFile(), durability: 'fast' as 'full' })).rejects.toThrow(
        /durability/,
      );
      await expect(openSqliteEventLog({ file: freshFile(), pollIntervalMillis: 0 })).rejects.toThrow(
        /pollIntervalMillis/,
      );
    });
  });

  describe('on read', () => {
    it('stops at an event that does not decode with EventLogCorruptError naming its position', async () => {
      const damaged = freshFile();
      const log = await openSqliteEventLog({ file: damaged });
      await log.append(grants(4), { expectedVersion: 0 });
      await log.close();
      const db = new Database(damaged);
      db.prepare(`UPDATE events SET data = '{"fence":"three"}' WHERE position = 3`).run();
      db.close();
      const reopened = await openSqliteEventLog({ file: damaged });
      const seen: number[] = [];
      const error = await (async () => {
        for await (const recorded of reopened.read({ from: 1 })) seen.push(recorded.position);
      })().catch((e: unknown) => e);
      await reopened.close();
      expect(seen).toEqual([1, 2]);
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 3 });
    });

    it('hands over the events before a damaged one in pages, then stops naming its position', async () => {
      // Given a log of 1200 events (three pages) whose event 700 is damaged
      const damaged = freshFile();
      const log = await openSqliteEventLog({ file: damaged });
      await log.append(grants(1200), { expectedVersion: 0 });
      await log.close();
      const db = new Database(damaged);
      db.prepare(`UPDATE events SET data = '{"fence":"seven hundred"}' WHERE position = 700`).run();
      db.close();
      // When it is read in pages
      const reopened = await openSqliteEventLog({ file: damaged });
      const seen: number[] = [];
      const error = await (async () => {
        for await (const page of reopened.readPages({ from: 1 }))
          seen.push(...page.map((recorded) => recorded.position));
      })().catch((e: unknown) => e);
      await reopened.close();
      // Then every event before it was handed over, then the error names it
      expect(seen).toEqual(Array.from({ length: 699 }, (_, i) => i + 1));
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 700 });
    });

    it('hands over the events before a gap after the latest snapshot, then stops naming the missing position; replay stops there too', async () => {
      // Given a coordinator's log of 1200 events (three pages) without a snapshot, whose event 700 was deleted
      const gapped = freshFile();
      const log = await openSqliteEventLog({ file: gapped });
      await log.append([coordinatorStarted(), ...grants(1199)], { expectedVersion: 0 });
      await log.close();
      const db = new Database(gapped);
      db.prepare('DELETE FROM events WHERE position = 700').run();
      db.close();
      // When it is opened (the gap is not counted at open) and read in pages, then one at a time, then replayed
      const reopened = await openSqliteEventLog({ file: gapped });
      const seen: number[] = [];
      const error = await (async () => {
        for await (const page of reopened.readPages({ from: 1 }))
          seen.push(...page.map((recorded) => recorded.position));
      })().catch((e: unknown) => e);
      const readError = await readAll(reopened.read({ from: 650 })).catch((e: unknown) => e);
      const replayError = await replayLog(reopened).catch((e: unknown) => e);
      await reopened.close();
      // Then every event before it was handed over, then each error names the missing position and field
      expect(seen).toEqual(Array.from({ length: 699 }, (_, i) => i + 1));
      for (const refused of [error, readError, replayError]) {
        expect(refused).toBeInstanceOf(EventLogCorruptError);
        expect(refused).toMatchObject({ position: 700, issues: [{ path: 'position' }] });
      }
    });

    it('reads back every recordedAtMillis exactly, whole or not (rows are read as one text each)', async () => {
      // Given events appended at wall-clock values a text round trip could get wrong
      const wallMillis = [1796288015632, 1796288015632.123, 0.1 + 0.2, 5e-324, 2 ** 53 + 2, 1e21, 123.456e-7, 0];
      const exact = freshFile();
      let next = 0;
      const log = await openSqliteEventLog({ file: exact, wallClock: () => wallMillis[next]! });
      for (next = 0; next < wallMillis.length; next += 1) await log.append(grants(1), { expectedVersion: next });
      // When they are read one at a time and in pages
      const read = await readAll(log.read({ from: 1 }));
      const paged: number[] = [];
      for await (const page of log.readPages({ from: 1 })) paged.push(...page.map((r) => r.recordedAtMillis));
      await log.close();
      // Then each is the double that was written
      expect(read.map((recorded) => recorded.recordedAtMillis)).toEqual(wallMillis);
      expect(paged).toEqual(wallMillis);
    });

    it.each([
      [
        'an infinite recordedAtMillis',
        `UPDATE events SET recorded_at = 9e999 WHERE position = 2`,
        { path: 'recordedAtMillis', message: /got Infinity/ },
      ],
      [
        'a type with a space',
        `UPDATE events SET type = 'LeaseGranted x' WHERE position = 2`,
        { path: 'type', message: /"LeaseGranted x"/ },
      ],
      [
        'a type with a character outside the BMP',
        `UPDATE events SET type = 'LeaseGranted' || char(128512) WHERE position = 2`,
        { path: 'type', message: /"LeaseGranted\u{1F600}"/u },
      ],
    ])(
      'refuses a row with %s as the record itself is refused, naming its position and field',
      async (_, damage, issue) => {
        // Given a log whose event 2 is damaged so that its row's text does not read back as its columns
        const damaged = freshFile();
        const log = await openSqliteEventLog({ file: damaged });
        await log.append([coordinatorStarted(), ...grants(2)], { expectedVersion: 0 });
        await log.close();
        const db = new Database(damaged);
        db.prepare(damage).run();
        db.close();
        // When it is read, in pages and replayed
        const reopened = await openSqliteEventLog({ file: damaged });
        const seen: number[] = [];
        const error = await (async () => {
          for await (const page of reopened.readPages({ from: 1 })) seen.push(...page.map((r) => r.position));
        })().catch((e: unknown) => e);
        const replayError = await replayLog(reopened).catch((e: unknown) => e);
        await reopened.close();
        // Then event 1 was handed over, and both stop at event 2 naming the damaged field
        expect(seen).toEqual([1]);
        for (const refused of [error, replayError]) {
          expect(refused).toBeInstanceOf(EventLogCorruptError);
          expect(refused).toMatchObject({
            position: 2,
            issues: [{ path: issue.path, message: expect.stringMatching(issue.message) }],
          });
        }
      },
    );

    it('refuses an unknown event type and names its position', async () => {
      const damaged = freshFile();
      const log = await openSqliteEventLog({ file: damaged });
      await log.append(grants(2), { expectedVersion: 0 });
      await log.close();
      const db = new Database(damaged);
      db.prepare(`UPDATE events SET type = 'LeaseStolen' WHERE position = 2`).run();
      db.close();
      const reopened = await openSqliteEventLog({ file: damaged });
      await expect(readAll(reopened.read({ from: 1 }))).rejects.toThrow(/position 2 .*LeaseStolen/);
      await reopened.close();
    });
  });

  describe('durability', () => {
    it.each(['full', 'normal'] as const)('runs in WAL mode with synchronous=%s', async (durability) => {
      const log = await openSqliteEventLog({ file: freshFile(), durability });
      expect(log.settings()).toEqual({ journalMode: 'wal', synchronous: durability, writer: 'inline' });
      await log.close();
    });

    it('defaults to synchronous=full', async () => {
      const log = await openSqliteEventLog({ file: freshFile() });
      expect(log.settings().synchronous).toBe('full');
      await log.close();
    });
  });

  describe('writer thread', () => {
    /** `n` grants with fences `first..first + n - 1`. */
    const grantsFrom = (first: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        leaseGranted(`resource-${first + i}`, 'agent-a', first + i, { atMillis: first + i }),
      );
    /** Holds the write lock of `logFile` on another connection until the returned function is called. */
    const holdWriteLock = (logFile: string): (() => void) => {
      const other = new Database(logFile);
      other.prepare('BEGIN IMMEDIATE').run();
      return () => {
        other.prepare('ROLLBACK').run();
        other.close();
      };
    };
    /** Whether `promise` settled within a few turns of the event loop (the writer thread runs meanwhile). */
    const settledSoon = async (promise: Promise<unknown>): Promise<boolean> => {
      let settled = false;
      promise.then(
        () => (settled = true),
        () => (settled = true),
      );
      for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      return settled;
    };

    it('declares appendsInCallOrder and applies appends called before earlier ones resolved in call order', async () => {
      const log = await openSqliteEventLog({ file: freshFile(), writer: 'thread' });
      expect(log.appendsInCallOrder).toBe(true);
      expect(log.settings().writer).toBe('thread');
      // Each append expects the version after the one called before it, none awaited
      const appends = [0, 1, 2, 3].map((i) => log.append(grantsFrom(i * 3 + 1, 3), { expectedVersion: i * 3 }));
      expect(await Promise.all(appends)).toEqual(
        [0, 1, 2, 3].map((i) => ({ fromPosition: i * 3 + 1, toPosition: i * 3 + 3 })),
      );
      expect((await readAll(log.read({ from: 1 }))).map((r) => r.event)).toEqual(grantsFrom(1, 12));
      await log.close();
    });

    it('resolves an append only once it is committed: not while another connection holds the write lock', async () => {
      // Given a log whose file another connection holds the write lock of
      const logFile = freshFile();
      const log = await openSqliteEventLog({ file: logFile, writer: 'thread', busyTimeoutMillis: 60_000 });
      const release = holdWriteLock(logFile);
      // When an append is posted to the writer thread
      const append = log.append(grantsFrom(1, 2), { expectedVersion: 0 });
      // Then it is not acknowledged, and no reader sees its rows, until its COMMIT
      expect(await settledSoon(append)).toBe(false);
      expect(await log.version()).toBe(0);
      release();
      expect(await append).toEqual({ fromPosition: 1, toPosition: 2 });
      expect(await log.version()).toBe(2);
      await log.close();
    });

    it('refuses every append in flight after a failed one, writes none of them, and takes appends again after', async () => {
      // Given a log at version 2
      const log = await openSqliteEventLog({ file: freshFile(), writer: 'thread' });
      await log.append(grantsFrom(1, 2), { expectedVersion: 0 });
      // When a stale append is followed, before its reply, by appends that would fit after the real version
      const results = await Promise.allSettled([
        log.append(grantsFrom(3, 1), { expectedVersion: 1 }),
        log.append(grantsFrom(3, 1), { expectedVersion: 2 }),
        log.append(grantsFrom(4, 1), { expectedVersion: 3 }),
      ]);
      // Then the first conflicts and the later ones are refused unwritten: they were decided after it
      expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'expected-version-conflict' } });
      for (const result of results.slice(1)) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason).toBeInstanceOf(EventLogUnavailableError);
      }
      expect(await log.version()).toBe(2);
      // And an append issued after the failure was seen lands
      expect(await log.append(grantsFrom(3, 1), { expectedVersion: 2 })).toEqual({ fromPosition: 3, toPosition: 3 });
      await log.close();
    });

    it('close() lets the appends in flight finish first', async () => {
      const logFile = freshFile();
      const log = await openSqliteEventLog({ file: logFile, writer: 'thread' });
      const appends = [0, 1, 2].map((i) => log.append(grantsFrom(i * 2 + 1, 2), { expectedVersion: i * 2 }));
      await log.close();
      expect((await Promise.all(appends)).at(-1)).toEqual({ fromPosition: 5, toPosition: 6 });
      const reopened = await openSqliteEventLog({ file: logFile });
      expect(await reopened.version()).toBe(6);
      await reopened.close();
    });
  });
});
