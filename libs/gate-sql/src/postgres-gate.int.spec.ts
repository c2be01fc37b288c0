import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { StaleFenceError } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { drainSqlGate, fencedTransaction, IdleTransactionEndedError, migrate, postgresFenceGate } from './index.js';
import { createTestDatabase, createTestGrants } from '../testing/databases.js';
import { describeSqlGateContract } from '../testing/gate-contract.js';

/**
 * A pool on the test database. `pool.end()` resolves once its clients are asked to end, not once
 * their connections closed, so `DROP DATABASE … WITH (FORCE)` right after it can terminate one
 * still closing (57P01); an idle client's error is the pool owner's (pg's rule), and without a
 * listener it fails the run as an unhandled error.
 */
const testPool = (connectionString: string, max: number): pg.Pool => {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('error', () => undefined);
  return pool;
};

/** What {@link withOrdersDatabase} hands its body. */
interface OrdersDatabase {
  readonly database: Awaited<ReturnType<typeof createTestDatabase>>;
  readonly pool: pg.Pool;
  readonly grants: Awaited<ReturnType<typeof createTestGrants>>;
  /** The gate of the resource `orders-db`, its tables migrated. */
  readonly gate: ReturnType<typeof postgresFenceGate>;
}

/**
 * Runs `body` on a fresh test database holding the gate's tables and a `writes (id, holder_id,
 * fence)` table, with a pool of `max` connections; ends the pool and drops the database after it.
 */
const withOrdersDatabase = async (max: number, body: (orders: OrdersDatabase) => Promise<void>): Promise<void> => {
  const database = await createTestDatabase();
  const pool = testPool(database.url, max);
  try {
    const grants = await createTestGrants();
    const gate = postgresFenceGate({ pool, resource: 'orders-db', verifier: grants.verifier });
    await migrate(gate);
    await pool.query('CREATE TABLE writes (id BIGSERIAL PRIMARY KEY, holder_id TEXT NOT NULL, fence BIGINT NOT NULL)');
    await body({ database, pool, grants, gate });
  } finally {
    await pool.end();
    await database.drop();
  }
};

describeSqlGateContract('PostgreSQL', async () => {
  const database = await createTestDatabase();
  const pool = testPool(database.url, 8);
  return {
    gate: (resource, grants, coordinator) =>
      postgresFenceGate({
        pool,
        resource,
        verifier: grants.verifier,
        ...(coordinator === undefined ? {} : { coordinator }),
      }),
    execute: async (sql) => {
      await pool.query(sql);
    },
    createWrites: async () => {
      await pool.query(
        'CREATE TABLE writes (id BIGSERIAL PRIMARY KEY, holder_id TEXT NOT NULL, fence BIGINT NOT NULL)',
      );
    },
    write: async (tx, holderId, fence) => {
      await tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', [holderId, fence]);
    },
    writes: async () =>
      (
        await pool.query<{ holder_id: string; fence: string }>('SELECT holder_id, fence FROM writes ORDER BY id')
      ).rows.map((row) => ({ holderId: row.holder_id, fence: Number(row.fence) })),
    committedFloor: async (resource) => {
      const { rows } = await pool.query<{ floor_fence: string | null; floor_holder_id: string | null }>(
        'SELECT floor_fence, floor_holder_id FROM lease_fence_floors WHERE resource = $1',
        [resource],
      );
      const row = rows[0];
      return row === undefined || row.floor_fence === null || row.floor_holder_id === null
        ? undefined
        : { fence: Number(row.floor_fence), holderId: row.floor_holder_id };
    },
    child: { dialect: 'postgres', target: database.url },
    waitUntilWriterBlocked: async () => {
      // the writer process may take seconds to start on a loaded machine
      await expect
        .poll(
          async () =>
            (
              await pool.query(
                `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows[0].waiting,
          { timeout: 45_000 },
        )
        .toBe(1);
    },
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
});

describe('PostgreSQL: two writers in parallel transactions on real connections', () => {
  it('the older fence waits on the floor row while the newer one is open, then is refused: never both commit', async () => {
    await withOrdersDatabase(4, async ({ pool, grants, gate }) => {
      // a committed floor row already exists, so only its lock (not a first insert) can make the older writer wait
      await fencedTransaction(gate, await grants.grant('orders-db', 'agent-first', 1), (tx) =>
        tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['agent-first', 1]),
      );
      let releaseNewer!: () => void;
      const newerMayCommit = new Promise<void>((resolve) => (releaseNewer = resolve));
      let newerInside!: () => void;
      const newerIsInside = new Promise<void>((resolve) => (newerInside = resolve));
      const newer = fencedTransaction(gate, await grants.grant('orders-db', 'agent-new', 8), async (tx) => {
        await tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['agent-new', 8]);
        newerInside();
        await newerMayCommit;
      });
      await newerIsInside;
      let olderRan = false;
      const older = fencedTransaction(gate, await grants.grant('orders-db', 'agent-old', 7), async (tx) => {
        olderRan = true;
        await tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['agent-old', 7]);
      });
      // the older writer's connection is blocked on a lock (the floor row), not done and not running its statements
      await expect
        .poll(
          async () =>
            (
              await pool.query(
                `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows[0].waiting,
          { timeout: 10_000 },
        )
        .toBe(1);
      expect(olderRan).toBe(false);
      releaseNewer();
      await newer;
      await expect(older).rejects.toBeInstanceOf(StaleFenceError);
      expect(olderRan).toBe(false);
      const { rows } = await pool.query('SELECT holder_id FROM writes ORDER BY id');
      expect(rows).toEqual([{ holder_id: 'agent-first' }, { holder_id: 'agent-new' }]);
      expect((await gate.driver.readState('orders-db'))?.floor).toEqual({ fence: 8, holderId: 'agent-new' });
    });
  });
});

describe('PostgreSQL: a writer stalled inside its fenced transaction', () => {
  it('holds the floor row until the database ends its idle session (the gate sets idle_in_transaction_session_timeout per transaction): then the next holder commits and the stalled write commits nothing', async () => {
    await withOrdersDatabase(4, async ({ pool, grants, gate }) => {
      // a plain pool: the bound is the stalled writer's gate's own, sent with each fenced transaction's BEGIN
      const stalledGate = postgresFenceGate({
        pool,
        resource: 'orders-db',
        verifier: grants.verifier,
        idleInTransactionTimeoutMillis: 1000,
      });
      let resume!: () => void;
      const resumed = new Promise<void>((resolve) => (resume = resolve));
      let stalledInside!: () => void;
      const stalledIsInside = new Promise<void>((resolve) => (stalledInside = resolve));
      // agent-old was admitted with fence 7, wrote, and then stalled (SIGSTOP, a pause, a slow call) before committing
      const stalled = fencedTransaction(stalledGate, await grants.grant('orders-db', 'agent-old', 7), async (tx) => {
        await tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['agent-old', 7]);
        stalledInside();
        await resumed;
      });
      stalled.catch(() => undefined);
      await stalledIsInside;

      // its lease expired meanwhile; the next holder's write waits on the floor row, then lands
      await fencedTransaction(gate, await grants.grant('orders-db', 'agent-new', 8), (tx) =>
        tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['agent-new', 8]),
      );
      resume(); // the stalled writer wakes up and tries to commit
      await expect(stalled).rejects.toBeInstanceOf(IdleTransactionEndedError);
      await expect(stalled).rejects.toThrow(/fenced transaction on "orders-db".*idleInTransactionTimeoutMillis/);

      const { rows } = await pool.query('SELECT holder_id FROM writes ORDER BY id');
      expect(rows).toEqual([{ holder_id: 'agent-new' }]);
      expect((await gate.driver.readState('orders-db'))?.floor).toEqual({ fence: 8, holderId: 'agent-new' });
    });
  }, 30_000);
});

describe('PostgreSQL: the floor row is locked in the same query as BEGIN', () => {
  it("keeps resources with quotes and backslashes apart: each one's floor is its own row", async () => {
    await withOrdersDatabase(2, async ({ pool, grants }) => {
      // Arrange: two resource ids that a naive quoting would confuse or break on
      const [quoted, plain] = [String.raw`o'brien\db`, 'o'];
      const quotedGate = postgresFenceGate({ pool, resource: quoted, verifier: grants.verifier });
      const plainGate = postgresFenceGate({ pool, resource: plain, verifier: grants.verifier });

      // Act
      await fencedTransaction(quotedGate, await grants.grant(quoted, 'agent-a', 5), async () => undefined);
      await fencedTransaction(plainGate, await grants.grant(plain, 'agent-b', 2), async () => undefined);
      const stale = fencedTransaction(quotedGate, await grants.grant(quoted, 'agent-c', 4), async () => undefined);

      // Assert
      await expect(stale).rejects.toBeInstanceOf(StaleFenceError);
      expect((await quotedGate.driver.readState(quoted))?.floor).toEqual({ fence: 5, holderId: 'agent-a' });
      expect((await plainGate.driver.readState(plain))?.floor).toEqual({ fence: 2, holderId: 'agent-b' });
    });
  });
});

describe('PostgreSQL: a connection that dies inside a fenced transaction', () => {
  it('rejects that transaction and leaves the process running (no unhandled client error); the next one commits', async () => {
    await withOrdersDatabase(2, async ({ database, pool, grants, gate }) => {
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown): void => void uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      try {
        let backendPid!: number;
        let inside!: () => void;
        const isInside = new Promise<void>((resolve) => (inside = resolve));
        let mayGoOn!: () => void;
        const goOn = new Promise<void>((resolve) => (mayGoOn = resolve));

        const writing = fencedTransaction(gate, await grants.grant('orders-db', 'agent-1', 3), async (tx) => {
          backendPid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          await tx.query("INSERT INTO writes (holder_id, fence) VALUES ('agent-1', 3)");
          inside();
          await goOn; // the caller's own work, between two statements
          await tx.query("INSERT INTO writes (holder_id, fence) VALUES ('agent-1', 3)");
        });
        const outcome = writing.then(
          () => 'committed',
          (error: unknown) => error,
        );
        await isInside;
        await admin.query('SELECT pg_terminate_backend($1)', [backendPid]);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the client sees its socket close
        mayGoOn();

        expect(await outcome).toBeInstanceOf(Error);
        expect(uncaught).toEqual([]);
        expect((await pool.query('SELECT count(*)::int AS n FROM writes')).rows[0].n).toBe(0);
        expect((await gate.driver.readState('orders-db'))?.floor).toBeUndefined();
        await fencedTransaction(gate, await grants.grant('orders-db', 'agent-1', 3), (tx) =>
          tx.query("INSERT INTO writes (holder_id, fence) VALUES ('agent-1', 3)"),
        );
        expect((await gate.driver.readState('orders-db'))?.floor).toEqual({ fence: 3, holderId: 'agent-1' });
      } finally {
        process.off('uncaughtException', onUncaught);
        await admin.end();
      }
    });
  });
});

describe('PostgreSQL: fencedTransaction called again inside its own callback', () => {
  it('on the same resource it is refused at once (it would wait for the floor row its caller holds: with a pool of one connection, forever); the outer transaction goes on and commits', async () => {
    await withOrdersDatabase(1, async ({ pool, grants, gate }) => {
      const token = await grants.grant('orders-db', 'agent-1', 3);
      let outerDone!: () => void;
      const outerIsDone = new Promise<void>((resolve) => (outerDone = resolve));
      let afterwards: Promise<unknown> | undefined;

      await fencedTransaction(gate, token, async (tx) => {
        const nested = fencedTransaction(gate, token, (inner) =>
          inner.query("INSERT INTO writes (holder_id, fence) VALUES ('nested', 3)"),
        );
        await expect(nested).rejects.toThrow(
          /fencedTransaction: called inside a fenced transaction of the same resource "orders-db".*on its tx/,
        );
        // started from the callback, but run once the outer transaction ended: not nested
        afterwards = outerIsDone.then(() =>
          fencedTransaction(gate, token, (later) =>
            later.query("INSERT INTO writes (holder_id, fence) VALUES ('afterwards', 3)"),
          ),
        );
        await tx.query("INSERT INTO writes (holder_id, fence) VALUES ('outer', 3)");
      });
      outerDone();
      await afterwards;

      const { rows } = await pool.query('SELECT holder_id FROM writes ORDER BY id');
      expect(rows).toEqual([{ holder_id: 'outer' }, { holder_id: 'afterwards' }]);
    });
  }, 10_000);
});

describe('PostgreSQL: migrate by the application role, once the tables exist', () => {
  it('resolves for a role that may write the tables but not create any (PostgreSQL 15 grants no CREATE on public), changing nothing', async () => {
    await withOrdersDatabase(1, async ({ database, pool, grants, gate }) => {
      // Arrange: the owner migrated (withOrdersDatabase) and wrote a floor; the application's role only has DML rights
      await fencedTransaction(gate, await grants.grant('orders-db', 'agent-1', 4), () => undefined);
      const role = `app_${randomUUID().replaceAll('-', '')}`;
      await pool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
      await pool.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE ON lease_fence_floors, lease_fence_outbox, writes TO ${role}`,
      );
      const url = new URL(database.url);
      [url.username, url.password] = [role, 'app'];
      const appPool = testPool(url.href, 1);
      try {
        const appGate = postgresFenceGate({ pool: appPool, resource: 'orders-db', verifier: grants.verifier });

        // Act
        await migrate(appGate);

        // Assert: the floor row stays, and the application writes through it
        await expect(
          fencedTransaction(appGate, await grants.grant('orders-db', 'agent-0', 3), () => undefined),
        ).rejects.toBeInstanceOf(StaleFenceError);
        expect((await appGate.driver.readState('orders-db'))?.floor).toEqual({ fence: 4, holderId: 'agent-1' });
      } finally {
        await appPool.end();
        await pool.query(`DROP OWNED BY ${role}`);
        await pool.query(`DROP ROLE ${role}`);
      }
    });
  });
});

describe('PostgreSQL: migrate on a search_path whose first schema does not hold the tables', () => {
  it('creates no second, empty pair there: the floor in the existing tables still refuses an older token', async () => {
    await withOrdersDatabase(1, async ({ database, pool, grants, gate }) => {
      // Arrange: the tables and a floor of 4 in public; the application's connections search its own schema first
      await fencedTransaction(gate, await grants.grant('orders-db', 'agent-1', 4), () => undefined);
      await pool.query('CREATE SCHEMA app');
      const appPool = new pg.Pool({ connectionString: database.url, max: 1, options: '-c search_path=app,public' });
      appPool.on('error', () => undefined);
      try {
        const appGate = postgresFenceGate({ pool: appPool, resource: 'orders-db', verifier: grants.verifier });

        // Act
        await migrate(appGate);
        const older = fencedTransaction(appGate, await grants.grant('orders-db', 'agent-0', 3), () => undefined);

        // Assert
        await expect(older).rejects.toBeInstanceOf(StaleFenceError);
        const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'app'");
        expect(rows[0].n).toBe(0);
      } finally {
        await appPool.end();
      }
    });
  });
});

describe('PostgreSQL: a drainer behind a long coordinator outage', () => {
  it('reads a bounded page of the outbox per poll, however many refusals piled up, and still flushes them all in seq order', async () => {
    await withOrdersDatabase(2, async ({ pool, gate }) => {
      // Arrange: 2 500 refusals committed while the coordinator was down (each poll re-reads the table)
      const backlog = 2500;
      await pool.query('INSERT INTO lease_fence_floors (resource, next_seq) VALUES ($1, $2)', [
        'orders-db',
        backlog + 1,
      ]);
      await pool.query(
        `INSERT INTO lease_fence_outbox SELECT 'orders-db', seq, 'stale', 'agent-old', 1, 'agent-new', 2, 0 FROM generate_series(1, ${String(backlog)}) AS seq`,
      );

      // Act / Assert: one read holds a page, not the whole backlog
      const state = await gate.driver.readState('orders-db');
      expect(state?.outbox.length).toBeLessThanOrEqual(1000);
      expect(state?.outbox[0]?.seq).toBe(1);

      // the coordinator is back: every refusal is reported once, in order
      const reported: number[] = [];
      const drainer = drainSqlGate(gate, {
        reportRejection: async (rejection) => {
          reported.push(rejection.seq);
          return { ok: true, duplicate: false } as never;
        },
        reportFloor: async (_resource, floor) => ({ raised: false, fenceCounter: floor.fence }),
      });
      try {
        await drainer.flush();
      } finally {
        await drainer.close();
      }
      expect(reported).toEqual(Array.from({ length: backlog }, (_, index) => index + 1));
      expect((await pool.query('SELECT count(*)::int AS n FROM lease_fence_outbox')).rows[0].n).toBe(0);
    });
  });
});

describe('PostgreSQL: a drainer in a process whose writers are refused in a burst', () => {
  it('coalesces the re-reads each committed refusal asks for: at most one runs besides the poll, so they cannot take the pool from the writers', async () => {
    await withOrdersDatabase(8, async ({ grants, gate }) => {
      await fencedTransaction(gate, await grants.grant('orders-db', 'agent-new', 100), () => undefined);
      const readState = gate.driver.readState.bind(gate.driver);
      let reading = 0;
      let mostAtOnce = 0;
      (gate.driver as { readState: typeof readState }).readState = async (resource) => {
        mostAtOnce = Math.max(mostAtOnce, ++reading);
        try {
          return await readState(resource);
        } finally {
          reading -= 1;
        }
      };
      const reported: number[] = [];
      const drainer = drainSqlGate(
        gate,
        {
          reportRejection: async (rejection) => {
            reported.push(rejection.seq);
            return { ok: true, duplicate: false } as never;
          },
          reportFloor: async (_resource, floor) => ({ raised: false, fenceCounter: floor.fence }),
        },
        { pollIntervalMillis: 60_000 },
      );
      try {
        const tokens = await Promise.all(
          Array.from({ length: 40 }, (_, index) => grants.grant('orders-db', `agent-${String(index)}`, index + 1)),
        );
        const refused = await Promise.allSettled(
          tokens.map((token) => fencedTransaction(gate, token, () => undefined)),
        );
        expect(refused.every((outcome) => outcome.status === 'rejected')).toBe(true);
        await drainer.flush();
      } finally {
        await drainer.close();
      }
      expect(reported).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
      expect(mostAtOnce).toBeLessThanOrEqual(2);
    });
  });
});
