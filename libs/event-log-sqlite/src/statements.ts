/**
 * The SQLite event log's prepared statements, and nothing else.
 */
import type Database from 'better-sqlite3';
import { EVENT_ROW_TEXT_SQL } from './event-row-text.js';

/**
 * A stored event row, as the `events` table holds it, read as an array of its column values in
 * this order (better-sqlite3's raw mode: no object with named keys per row, which a full replay
 * would pay for on every event).
 */
export type EventRow = readonly [position: number, type: string, version: number, data: string, recordedAt: number];

/** A stored snapshot row. */
export interface SnapshotRow {
  readonly position: number;
  readonly schema_version: number;
  readonly state: string;
}

/** The prepared statements of one connection. */
export interface Statements {
  /** The log's version: the highest position, 0 when empty. */
  readonly version: Database.Statement<[], number>;
  readonly insertEvent: Database.Statement<
    [position: number, type: string, version: number, data: string, recordedAt: number]
  >;
  /** Events with `from <= position <= to`, in order, at most `limit`; each row an {@link EventRow} array (raw mode). */
  readonly readEvents: Database.Statement<[from: number, to: number, limit: number], EventRow>;
  /**
   * The same rows as {@link Statements.readEvents}, each as one text (`event-row-text.ts`): what
   * the paged reads use, without an array per row.
   */
  readonly readEventTexts: Database.Statement<[from: number, to: number, limit: number], string>;
  readonly latestSnapshot: Database.Statement<[], SnapshotRow>;
  readonly saveSnapshot: Database.Statement<[position: number, schemaVersion: number, state: string, savedAt: number]>;
  /** Keeps the newest `keep` snapshots. */
  readonly pruneSnapshots: Database.Statement<[keep: number]>;
}

/**
 * The SQL of the statements that write, by name: prepared by {@link prepareStatements} on the
 * opening connection and by the writer thread (`writer-thread.ts`) on its own.
 */
export const WRITE_SQL = {
  version: 'SELECT COALESCE(MAX(position), 0) FROM events',
  insertEvent: 'INSERT INTO events (position, type, version, data, recorded_at) VALUES (?, ?, ?, ?, ?)',
  saveSnapshot: 'INSERT OR REPLACE INTO snapshots (position, schema_version, state, saved_at) VALUES (?, ?, ?, ?)',
  pruneSnapshots:
    'DELETE FROM snapshots WHERE position NOT IN (SELECT position FROM snapshots ORDER BY position DESC LIMIT ?)',
} as const;

/** Prepares every statement on `db` (after the schema exists). */
export function prepareStatements(db: Database.Database): Statements {
  return {
    version: db.prepare<[], number>(WRITE_SQL.version).pluck(),
    insertEvent: db.prepare(WRITE_SQL.insertEvent),
    readEvents: db
      .prepare<[number, number, number], EventRow>(
        'SELECT position, type, version, data, recorded_at FROM events WHERE position >= ? AND position <= ? ORDER BY position LIMIT ?',
      )
      .raw(),
    readEventTexts: db
      .prepare<[number, number, number], string>(
        `SELECT ${EVENT_ROW_TEXT_SQL} FROM events WHERE position >= ? AND position <= ? ORDER BY position LIMIT ?`,
      )
      .pluck(),
    latestSnapshot: db.prepare<[], SnapshotRow>(
      'SELECT position, schema_version, state FROM snapshots ORDER BY position DESC LIMIT 1',
    ),
    saveSnapshot: db.prepare(WRITE_SQL.saveSnapshot),
    pruneSnapshots: db.prepare(WRITE_SQL.pruneSnapshots),
  };
}
