import { FenceGateClient } from '@lease-fence/client';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { drainSqlGate, fencedTransaction, postgresFenceGate, sqliteFenceGate } from './index.js';
import { createTestGrants } from '../testing/databases.js';

describe('bad arguments are refused naming the field, before any statement', () => {
  it('checks the gate options', async () => {
    const { verifier } = await createTestGrants();
    const database = new Database(':memory:');
    const pool = { connect: async () => Promise.reject(new Error('never connected')) };
    expect(() => postgresFenceGate({ pool: undefined as never, resource: 'orders-db', verifier })).toThrow(
      /postgresFenceGate: pool must be a pg Pool/,
    );
    expect(() => postgresFenceGate({ pool: pool as never, resource: '', verifier })).toThrow(
      /postgresFenceGate: resource must be a non-empty string/,
    );
    // an id no token can carry (the coordinator's id rule): refused here, not on every write as an invalid token
    for (const resource of ['réservations', ' orders-db', 'x'.repeat(201)]) {
      expect(() => postgresFenceGate({ pool: pool as never, resource, verifier })).toThrow(
        /postgresFenceGate: resource must be (printable ASCII without leading or trailing spaces|at most 200 characters)/,
      );
    }
    expect(() => postgresFenceGate({ pool: pool as never, resource: 'x'.repeat(200), verifier })).not.toThrow();
    expect(() => sqliteFenceGate({ database, resource: 'orders-db', verifier: {} as never })).toThrow(
      /sqliteFenceGate: verifier must be a FenceTokenVerifier/,
    );
    expect(() => sqliteFenceGate({ database: {} as never, resource: 'orders-db', verifier })).toThrow(
      /sqliteFenceGate: database must be a better-sqlite3 Database, got object \(better-sqlite3 is an optional peer dependency of @lease-fence\/gate-sql: npm install better-sqlite3\)/,
    );
    expect(() => sqliteFenceGate({ database, resource: 'orders-db', verifier, wallClock: 5 as never })).toThrow(
      /sqliteFenceGate: wallClock must be a function/,
    );
    expect(() =>
      postgresFenceGate({ pool: pool as never, resource: 'orders-db', verifier, coordinator: 'http://x' as never }),
    ).toThrow(/postgresFenceGate: coordinator must be a FenceGateClient/);
    for (const idleInTransactionTimeoutMillis of [-1, 1.5, 2_147_483_648, '10s' as never]) {
      expect(() =>
        postgresFenceGate({ pool: pool as never, resource: 'orders-db', verifier, idleInTransactionTimeoutMillis }),
      ).toThrow(
        /postgresFenceGate: idleInTransactionTimeoutMillis must be an integer from 0 \(no bound\) to 2147483647 milliseconds/,
      );
    }
    database.close();
  });

  it("checks fencedTransaction's and drainSqlGate's arguments", async () => {
    const { verifier } = await createTestGrants();
    const database = new Database(':memory:');
    const gate = sqliteFenceGate({ database, resource: 'orders-db', verifier });
    await expect(fencedTransaction({} as never, 'token', () => undefined)).rejects.toThrow(
      /fencedTransaction: gate must come from postgresFenceGate or sqliteFenceGate/,
    );
    await expect(fencedTransaction(gate, 'token', 'not a function' as never)).rejects.toThrow(
      /fencedTransaction: work must be a function/,
    );
    const client = new FenceGateClient({ baseUrl: 'http://127.0.0.1:9', token: 'token-gate' });
    expect(() => drainSqlGate(gate, client, { pollIntervalMillis: 0 })).toThrow(
      /drainSqlGate: pollIntervalMillis must be a positive integer/,
    );
    expect(() => drainSqlGate(gate, client, { floorEveryMillis: 1.5 })).toThrow(
      /drainSqlGate: floorEveryMillis must be a positive integer/,
    );
    database.close();
  });
});
