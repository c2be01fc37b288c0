/**
 * The SQLite side of a transactional gate (better-sqlite3): every statement,
 * behind {@link SqlGateDriver}. SQLite locks the whole database, not a row: `BEGIN IMMEDIATE`
 * takes the write lock before the floor is read, so a second fenced transaction (another
 * connection, another process) waits (better-sqlite3's busy timeout, 5 s unless set) until the
 * first ends, then reads the floor the first left.
 */
import type Database from 'better-sqlite3';
import {
  floorRowOf,
  OUTBOX_PAGE_ROWS,
  schemaSql,
  refusalColumns,
  refusalOf,
  type FloorColumns,
  type GateRowState,
  type LockedFloor,
  type OutboxColumns,
  type SqlGateDriver,
} from './sql-gate-driver.js';

const SELECT_FLOOR =
  'SELECT floor_fence, floor_holder_id, next_seq, reported_through_seq FROM lease_fence_floors WHERE resource = ?';

const UPDATE_NEXT_SEQ = 'UPDATE lease_fence_floors SET next_seq = ? WHERE resource = ?';

/**
 * One connection runs one transaction at a time, but the caller's callback is async: while it
 * awaits, another fenced transaction on the same connection must wait, or its BEGIN would fail
 * ("cannot start a transaction within a transaction") or its statements would join ours.
 * A promise chain per connection is all that needs; better-sqlite3 has no such queue.
 */
const queues = new WeakMap<Database.Database, Promise<unknown>>();

const serialised = <T>(database: Database.Database, run: () => Promise<T>): Promise<T> => {
  const previous = queues.get(database) ?? Promise.resolve();
  const next = previous.then(run, run);
  queues.set(
    database,
    next.catch(() => undefined),
  );
  return next;
};

/**
 * A {@link SqlGateDriver} on a better-sqlite3 connection. Fenced transactions on it run one at
 * a time (in this process); other connections and processes wait on SQLite's write lock.
 * @internal Use `sqliteFenceGate`.
 */
export const sqliteDriver = (database: Database.Database): SqlGateDriver<Database.Database> => {
  // Prepared on first use (the tables may not exist before migrate) and kept: preparing is most
  // of a small statement's cost in better-sqlite3.
  const prepared = new Map<string, Database.Statement>();
  const statement = (sql: string): Database.Statement => {
    let found = prepared.get(sql);
    if (found === undefined) prepared.set(sql, (found = database.prepare(sql)));
    return found;
  };
  const inTransaction = <T>(mode: 'IMMEDIATE' | 'DEFERRED', body: () => Promise<T>): Promise<T> =>
    serialised(database, async () => {
      // Prepared like every other statement: `exec` would compile BEGIN and COMMIT on every transaction.
      statement(`BEGIN ${mode}`).run();
      try {
        const value = await body();
        statement('COMMIT').run();
        return value;
      } catch (error) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, …) have already rolled SQLite back.
        if (database.inTransaction) database.exec('ROLLBACK');
        throw error;
      }
    });

  return {
    dialect: 'sqlite',
    migrate: async () => {
      database.exec(schemaSql('INTEGER')); // one exec of CREATE … IF NOT EXISTS statements; SQLite's lock serialises processes
    },
    withLockedFloor: (resource, body) =>
      inTransaction('IMMEDIATE', async () => {
        // The write lock is already held (BEGIN IMMEDIATE): read the row, and create it only when missing.
        let columns = statement(SELECT_FLOOR).get(resource) as FloorColumns | undefined;
        if (columns === undefined) {
          statement('INSERT INTO lease_fence_floors (resource) VALUES (?)').run(resource);
          columns = statement(SELECT_FLOOR).get(resource) as FloorColumns;
        }
        const locked: LockedFloor<Database.Database> = {
          tx: database,
          row: floorRowOf(columns),
          saveFloor: async (floor) => {
            statement('UPDATE lease_fence_floors SET floor_fence = ?, floor_holder_id = ? WHERE resource = ?').run(
              floor.fence,
              floor.holderId,
              resource,
            );
          },
          saveRefusal: async (refusal, nextSeq) => {
            statement(`INSERT INTO lease_fence_outbox
                (resource, seq, kind, rejected_holder_id, rejected_fence, current_holder_id, current_fence, wall_millis)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(...refusalColumns(refusal));
            statement(UPDATE_NEXT_SEQ).run(nextSeq, resource);
          },
          saveNextSeq: async (nextSeq) => {
            statement(UPDATE_NEXT_SEQ).run(nextSeq, resource);
          },
        };
        return body(locked);
      }),
    readState: (resource) =>
      inTransaction('DEFERRED', async (): Promise<GateRowState | undefined> => {
        const columns = statement(SELECT_FLOOR).get(resource) as FloorColumns | undefined;
        if (columns === undefined) return undefined;
        const row = floorRowOf(columns);
        const outbox =
          statement(`SELECT seq, kind, rejected_holder_id, rejected_fence, current_holder_id, current_fence, wall_millis
            FROM lease_fence_outbox WHERE resource = ? AND seq > ? ORDER BY seq LIMIT ${String(OUTBOX_PAGE_ROWS)}`).all(
            resource,
            row.reportedThroughSeq,
          ) as OutboxColumns[];
        return { ...row, outbox: outbox.map((refusal) => refusalOf(resource, refusal)) };
      }),
    acknowledge: (resource, throughSeq) =>
      inTransaction('IMMEDIATE', async () => {
        statement(
          'UPDATE lease_fence_floors SET reported_through_seq = max(reported_through_seq, ?) WHERE resource = ?',
        ).run(throughSeq, resource);
        statement('DELETE FROM lease_fence_outbox WHERE resource = ? AND seq <= ?').run(resource, throughSeq);
      }),
  };
};
