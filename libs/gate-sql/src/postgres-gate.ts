/**
 * The PostgreSQL side of a transactional gate (`pg`): every statement, behind
 * {@link SqlGateDriver}. The floor row is locked with `SELECT … FOR UPDATE` inside the caller's
 * transaction, so a second fenced transaction of the same resource waits at that row until the
 * first commits or rolls back, then reads the floor the first left.
 *
 * Round trips are the gate's cost (`pg` sends one query at a time and waits for its answer): a
 * fenced transaction sends `BEGIN`, its idle bound (`SET LOCAL`) and the locking `SELECT` as one
 * simple-protocol query, and a raised floor's `UPDATE` with the `COMMIT`, so it costs the bare
 * transaction's three round trips (begin, the caller's statements, commit) whether the floor
 * moves or not.
 */
import type { Pool, PoolClient, QueryResult } from 'pg';
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

/**
 * Serialises concurrent `migrate()` calls across processes: two `CREATE TABLE IF NOT EXISTS` racing
 * in PostgreSQL can both pass the check and one then fails on the catalog's unique index.
 * An arbitrary constant, the same in every process ('lease_fence' as bytes).
 */
const MIGRATE_LOCK_KEY = '7800626451224109925';

/** Whether both gate tables resolve on the session's search_path. */
const TABLES_PRESENT =
  "SELECT to_regclass('lease_fence_floors') IS NOT NULL AND to_regclass('lease_fence_outbox') IS NOT NULL AS present";

const FLOOR_COLUMNS = 'SELECT floor_fence, floor_holder_id, next_seq, reported_through_seq FROM lease_fence_floors';
const SELECT_FLOOR = `${FLOOR_COLUMNS} WHERE resource = $1`;
/** {@link SELECT_FLOOR} with the resource as a quoted literal (for a simple-protocol query). */
const SELECT_FLOOR_LITERAL = (quotedResource: string): string => `${FLOOR_COLUMNS} WHERE resource = ${quotedResource}`;
const SELECT_OUTBOX = `SELECT seq, kind, rejected_holder_id, rejected_fence, current_holder_id, current_fence, wall_millis
  FROM lease_fence_outbox WHERE resource = $1 AND seq > $2 ORDER BY seq LIMIT ${String(OUTBOX_PAGE_ROWS)}`;
const INSERT_REFUSAL = `INSERT INTO lease_fence_outbox
  (resource, seq, kind, rejected_holder_id, rejected_fence, current_holder_id, current_fence, wall_millis)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

const UPDATE_NEXT_SEQ = 'UPDATE lease_fence_floors SET next_seq = $2 WHERE resource = $1';

/** What {@link postgresDriver} needs of a `pg` pool: connections it can check out. */
export type PostgresPool = Pick<Pool, 'connect'>;

/** PostgreSQL's SQLSTATE for a session it ended because it sat idle inside a transaction too long. */
const IDLE_IN_TRANSACTION_SESSION_TIMEOUT = '25P03';

/**
 * A transaction of the gate rolled back because PostgreSQL ended its session: it sat idle between
 * two statements longer than `idle_in_transaction_session_timeout` (a fenced transaction sets it
 * to the gate's `idleInTransactionTimeoutMillis`). Nothing of it was committed; the floor row it
 * held was released, so the next holder's write may have landed meanwhile. `cause` is `pg`'s error.
 */
export class IdleTransactionEndedError extends Error {
  constructor(
    /** The resource whose transaction was ended, or `undefined` for the gate's own bookkeeping. */
    readonly resource: string | undefined,
    cause: unknown,
  ) {
    super(
      `PostgreSQL ended the session of ${resource === undefined ? "the gate's transaction" : `a fenced transaction on ${JSON.stringify(resource)}`}: it sat idle between two statements longer than idle_in_transaction_session_timeout (the gate's idleInTransactionTimeoutMillis); nothing was committed`,
      { cause },
    );
    this.name = 'IdleTransactionEndedError';
  }
}

const endedIdle = (error: unknown): boolean =>
  (error as { code?: unknown } | undefined)?.code === IDLE_IN_TRANSACTION_SESSION_TIMEOUT;

/**
 * A {@link SqlGateDriver} on a `pg` pool. Each fenced transaction checks out one connection
 * for its whole length, so the pool bounds how many run at once, and may sit idle between two
 * statements for `idleInTransactionTimeoutMillis` (milliseconds, `0`: no bound) before PostgreSQL
 * ends it.
 * @internal Use `postgresFenceGate`.
 */
export const postgresDriver = (
  pool: PostgresPool,
  idleInTransactionTimeoutMillis: number,
): SqlGateDriver<PoolClient> => {
  /**
   * BEGIN … COMMIT on one connection; ROLLBACK and rethrow on any error. `begin` is the query that
   * opens the transaction (`BEGIN`, or `BEGIN; <statement>` to save a round trip); `body` gets
   * its result.
   */
  const inTransaction = async <T>(
    body: (client: PoolClient, begun: QueryResult | QueryResult[]) => Promise<T>,
    begin: (client: PoolClient) => string = () => 'BEGIN',
    commit: () => string = () => 'COMMIT',
    resource?: string,
  ): Promise<T> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    // A checked-out pg client emits 'error' when its connection dies (the server restarted, the
    // backend was killed), also between two statements; pg-pool listens only while a client is
    // idle, so without this listener that event would crash the process. The statement in flight,
    // or the next one, rejects with the error; the client is then released as broken.
    const onConnectionError = (error: Error): void => {
      broken ??= error;
    };
    client.on('error', onConnectionError);
    try {
      try {
        // Inside the try: a failed `BEGIN; SELECT …` may leave the transaction open (aborted).
        const begun = (await client.query(begin(client))) as QueryResult | QueryResult[];
        const value = await body(client, begun);
        await client.query(commit());
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          // The connection is unusable (the server went away): the server rolls back on its own;
          // the pool must not hand this connection out again.
          broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        // PostgreSQL's 25P03 reaches the client as the connection's 'error' when no statement was
        // in flight, or as the rejection of the statement that was (sent as the session ended).
        const idleEnd = [broken, error].find(endedIdle);
        throw idleEnd === undefined ? error : new IdleTransactionEndedError(resource, idleEnd);
      }
    } finally {
      // A broken client keeps a listener: it may still emit as it closes, after the pool dropped it.
      if (broken === undefined) client.off('error', onConnectionError);
      client.release(broken);
    }
  };

  return {
    dialect: 'postgres',
    migrate: () =>
      inTransaction(async (client) => {
        // Tables already there (on the search_path): no DDL, so a role that may only write them
        // (PostgreSQL 15 grants no CREATE on public) can run migrate at start-up, and no second
        // pair is created in an earlier schema of the path to shadow them.
        const { rows } = await client.query<{ present: boolean }>(TABLES_PRESENT);
        if (rows[0]?.present === true) return;
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK_KEY]);
        await client.query(schemaSql('BIGINT'));
      }),
    withLockedFloor: (resource, body) => {
      /** The raised floor's UPDATE, sent with the COMMIT (one round trip less for a new fence). */
      let raiseFloor: string | undefined;
      return inTransaction(
        async (client, begun) => {
          // `BEGIN; SET LOCAL …; SELECT …` answers one result per statement: the third is the floor row.
          let { rows } = (begun as QueryResult<FloorColumns>[])[2] as QueryResult<FloorColumns>;
          if (rows[0] === undefined) {
            // The row must exist to be locked: a first writer creates it; a concurrent first writer
            // waits on the inserted key, then finds it and does nothing.
            await client.query(
              'INSERT INTO lease_fence_floors (resource) VALUES ($1) ON CONFLICT (resource) DO NOTHING',
              [resource],
            );
            ({ rows } = await client.query<FloorColumns>(`${SELECT_FLOOR} FOR UPDATE`, [resource]));
          }
          const locked: LockedFloor<PoolClient> = {
            tx: client,
            row: floorRowOf(rows[0] as FloorColumns),
            saveFloor: async (floor) => {
              // Literals for the simple protocol: the fence is a safe integer (FenceGate checked it).
              raiseFloor = `UPDATE lease_fence_floors SET floor_fence = ${String(floor.fence)}, floor_holder_id = ${client.escapeLiteral(floor.holderId)} WHERE resource = ${client.escapeLiteral(resource)}`;
            },
            saveRefusal: async (refusal, nextSeq) => {
              await client.query(INSERT_REFUSAL, [...refusalColumns(refusal)]);
              await client.query(UPDATE_NEXT_SEQ, [resource, nextSeq]);
            },
            saveNextSeq: async (nextSeq) => {
              await client.query(UPDATE_NEXT_SEQ, [resource, nextSeq]);
            },
          };
          return body(locked);
        },
        // The simple protocol takes no parameters: the resource is quoted by pg's escapeLiteral,
        // the timeout is an integer postgresFenceGate checked.
        (client) =>
          `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${String(idleInTransactionTimeoutMillis)}; ${SELECT_FLOOR_LITERAL(client.escapeLiteral(resource))} FOR UPDATE`,
        () => (raiseFloor === undefined ? 'COMMIT' : `${raiseFloor}; COMMIT`),
        resource,
      );
    },
    readState: async (resource) => {
      // One snapshot for both reads, so the outbox matches the row's reported_through_seq.
      return inTransaction(async (client): Promise<GateRowState | undefined> => {
        await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const { rows } = await client.query<FloorColumns>(SELECT_FLOOR, [resource]);
        if (rows[0] === undefined) return undefined;
        const row = floorRowOf(rows[0]);
        const outbox = await client.query<OutboxColumns>(SELECT_OUTBOX, [resource, row.reportedThroughSeq]);
        return { ...row, outbox: outbox.rows.map((columns) => refusalOf(resource, columns)) };
      });
    },
    acknowledge: (resource, throughSeq) =>
      inTransaction(async (client) => {
        await client.query(
          'UPDATE lease_fence_floors SET reported_through_seq = GREATEST(reported_through_seq, $2) WHERE resource = $1',
          [resource, throughSeq],
        );
        await client.query('DELETE FROM lease_fence_outbox WHERE resource = $1 AND seq <= $2', [resource, throughSeq]);
      }),
  };
};
