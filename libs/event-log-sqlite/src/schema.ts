/**
 * The SQLite event log's DDL, its migrations by schema version, and the checks run at open.
 * Positions are the `events` table's INTEGER PRIMARY KEY (the rowid), so they are contiguous
 * only if nothing ever deletes a row; the open check verifies that they are.
 *
 * @see docs/design.md § Layout (event-log-sqlite)
 */
import type Database from 'better-sqlite3';
import { EventLogCorruptError } from '@lease-fence/coordinator-core';
import { lostLogError, newLogId } from './log-identity.js';

/** Schema version this adapter writes and understands. */
export const SCHEMA_VERSION = 1;

/** Marker stored in `meta` so a foreign SQLite file is not mistaken for an event log. */
const FORMAT = 'lease-fence-event-log';

/** DDL of each schema version: `MIGRATIONS[n]` takes a file from version `n` to `n + 1`. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
  ) STRICT;
  CREATE TABLE events (
    position    INTEGER PRIMARY KEY NOT NULL,
    type        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    data        TEXT    NOT NULL,
    recorded_at REAL    NOT NULL
  ) STRICT;
  CREATE TABLE snapshots (
    position       INTEGER PRIMARY KEY NOT NULL,
    schema_version INTEGER NOT NULL,
    state          TEXT    NOT NULL,
    saved_at       REAL    NOT NULL
  ) STRICT;
  `,
];

/**
 * Creates the schema in an empty file, migrates an older one, and refuses anything else; returns
 * the log id (`meta.log_id`, see `log-identity.ts`). A new log gets a new random id; a log from
 * before log ids gets one here (adopted, when no marker records an id).
 *
 * @param recordedLogId - The id the data directory's marker records, if any: a log without
 *   tables is then refused instead of created (the log was lost), and so is a log whose id
 *   differs or that has none. Nothing is written to the file before these checks.
 * @throws {@link EventLogCorruptError} when the file holds foreign tables, a schema version
 *   this adapter does not know (written by a newer release), or is not the recorded log.
 */
export function migrate(db: Database.Database, recordedLogId: string | undefined, file: string): string {
  const tables = db
    .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .pluck()
    .all() as string[];
  if (tables.length === 0) {
    if (recordedLogId !== undefined) throw lostLogError(file, recordedLogId, 'empty');
    const logId = newLogId();
    db.transaction(() => {
      db.exec(MIGRATIONS[0]!);
      const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      put.run('format', FORMAT);
      put.run('schema_version', String(1));
      put.run('log_id', logId);
      for (let version = 1; version < SCHEMA_VERSION; version += 1) db.exec(MIGRATIONS[version]!);
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(String(SCHEMA_VERSION));
    }).immediate();
    return logId;
  }
  if (!tables.includes('meta')) {
    throw new EventLogCorruptError({
      issues: [
        { path: '', message: `not a lease-fence event log: it has tables ${tables.join(', ')} but no meta table` },
      ],
    });
  }
  const meta = new Map(db.prepare('SELECT key, value FROM meta').raw().all() as [string, string][]);
  if (meta.get('format') !== FORMAT) {
    throw new EventLogCorruptError({
      issues: [{ path: 'meta.format', message: `expected ${FORMAT}, got ${String(meta.get('format'))}` }],
    });
  }
  const found = Number(meta.get('schema_version'));
  if (!Number.isSafeInteger(found) || found < 1 || found > SCHEMA_VERSION) {
    throw new EventLogCorruptError({
      issues: [
        {
          path: 'meta.schema_version',
          message: `schema version ${String(meta.get('schema_version'))} is unknown to this adapter (it knows 1..${SCHEMA_VERSION})`,
        },
      ],
    });
  }
  const logId = meta.get('log_id');
  if (recordedLogId !== undefined && logId !== recordedLogId) {
    throw lostLogError(file, recordedLogId, logId === undefined ? 'without an id' : logId);
  }
  if (found < SCHEMA_VERSION) {
    db.transaction(() => {
      for (let version = found; version < SCHEMA_VERSION; version += 1) db.exec(MIGRATIONS[version]!);
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(String(SCHEMA_VERSION));
    }).immediate();
  }
  if (logId !== undefined) return logId;
  // A log from before log ids, and no marker: adopt it. OR IGNORE and the read back inside one
  // transaction: a standby opening the same file at the same time adopts the same id.
  return db
    .transaction(() => {
      db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('log_id', ?)`).run(newLogId());
      return db.prepare(`SELECT value FROM meta WHERE key = 'log_id'`).pluck().get() as string;
    })
    .immediate();
}

/**
 * Checks the file before anything is read: SQLite's `quick_check` (page and index structure,
 * see {@link quickCheckError}), then {@link checkPositions}. The whole check, on the opening
 * connection; `sqlite-event-log.ts` runs it this way for small files and runs `quick_check` on
 * a worker (`quick-check.ts`) for large ones.
 *
 * @throws {@link EventLogCorruptError} naming what is wrong (and the first missing position, if any).
 */
export function checkIntegrity(db: Database.Database): void {
  const failure = quickCheckError(db.prepare('PRAGMA quick_check').pluck().all() as string[]);
  if (failure !== undefined) throw failure;
  checkPositions(db);
}

/**
 * The refusal of what `PRAGMA quick_check` returned: `undefined` for its single row `ok`, else an
 * {@link EventLogCorruptError} naming its first ten findings. The one wording of this refusal,
 * whichever thread ran the check.
 *
 * `quick_check` runs on every open: it is what refuses a file damaged at rest (truncated,
 * overwritten) which no flag written at shutdown would notice. It reads every page once, about a
 * fifth of a raw read of every row at 1M events.
 */
export function quickCheckError(problems: readonly string[]): EventLogCorruptError | undefined {
  if (problems.length === 1 && problems[0] === 'ok') return undefined;
  return new EventLogCorruptError({
    issues: problems.slice(0, 10).map((message) => ({ path: '', message: `quick_check: ${message}` })),
  });
}

/**
 * Checks that positions start at 1, and that the positions a snapshot covers run 1..S without a
 * gap (S = the latest snapshot's position, or the log's last position if that is lower).
 *
 * The positions after S are not counted here: every read checks that the rows it returns are
 * contiguous (`readRows` in `sqlite-event-log.ts`), and recovery reads every one of them before
 * the coordinator is ready, so a gap among them stops recovery with its position all the same.
 * Counting them here as well cost a second full scan of the table at every start (about a
 * sixth of a raw read of every row, at 1M events).
 *
 * @throws {@link EventLogCorruptError} naming the first missing position.
 */
export function checkPositions(db: Database.Database): void {
  // Two queries, each a single b-tree descent: SQLite answers MIN or MAX of the rowid from one
  // end of the table only when it is the query's one aggregate; `SELECT MIN(position),
  // MAX(position)` scanned every row (a fifth of a raw read at 1M events, in the profile of
  // issue 18).
  const first = db.prepare('SELECT MIN(position) FROM events').pluck().get() as number | null;
  const last = db.prepare('SELECT MAX(position) FROM events').pluck().get() as number | null;
  if (first === null || last === null) return;
  if (first !== 1) throw notContiguous(1, `the first position is ${first}`);
  const snapshotPosition = db.prepare('SELECT MAX(position) FROM snapshots').pluck().get() as number | null;
  const covered = Math.min(snapshotPosition ?? 0, last);
  if (covered === 0) return;
  const count = db.prepare('SELECT COUNT(*) FROM events WHERE position <= ?').pluck().get(covered) as number;
  if (count !== covered) {
    const missing = db
      .prepare(
        'SELECT e.position + 1 FROM events e WHERE NOT EXISTS (SELECT 1 FROM events n WHERE n.position = e.position + 1) ORDER BY e.position LIMIT 1',
      )
      .pluck()
      .get() as number;
    throw notContiguous(missing, `${count} events between 1 and ${covered}, which the latest snapshot covers`);
  }
}

/**
 * The error of a log whose positions are not contiguous: `position` is the first one missing.
 * The one wording of this refusal, at open and when a read finds a gap.
 */
export const notContiguous = (position: number, detail: string): EventLogCorruptError =>
  new EventLogCorruptError({
    position,
    issues: [{ path: 'position', message: `positions are not contiguous: ${detail}; position ${position} is missing` }],
  });
