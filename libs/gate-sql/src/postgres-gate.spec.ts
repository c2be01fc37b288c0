import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { fencedTransaction, IdleTransactionEndedError, postgresFenceGate } from './index.js';
import { createTestGrants } from '../testing/databases.js';

/**
 * A `pg` client whose session PostgreSQL ends for idling just as the `COMMIT` is sent: as pg 8
 * does it, the query in flight rejects with the server's 25P03, then the socket's end emits
 * 'error' ("Connection terminated unexpectedly") and every later query rejects.
 */
const clientEndedWhileCommitInFlight = (): EventEmitter & Record<string, unknown> => {
  const client = new EventEmitter() as EventEmitter & Record<string, unknown>;
  let ended = false;
  client.escapeLiteral = (value: string) => `'${value.replaceAll("'", "''")}'`;
  client.release = () => undefined;
  client.query = async (sql: string) => {
    if (ended) throw new Error('Client has encountered a connection error and is not queryable');
    if (sql.startsWith('BEGIN'))
      return [{}, {}, { rows: [{ floor_fence: null, floor_holder_id: null, next_seq: 1, reported_through_seq: 0 }] }];
    if (sql.endsWith('COMMIT')) {
      ended = true;
      setImmediate(() => client.emit('error', new Error('Connection terminated unexpectedly')));
      throw Object.assign(new Error('terminating connection due to idle-in-transaction timeout'), { code: '25P03' });
    }
    return { rows: [] };
  };
  return client;
};

describe('PostgreSQL: a session ended for idling while a statement was in flight', () => {
  it('rejects with IdleTransactionEndedError, as when it was ended between two statements', async () => {
    const grants = await createTestGrants();
    const pool = { connect: async () => clientEndedWhileCommitInFlight() };
    const gate = postgresFenceGate({ pool: pool as never, resource: 'orders-db', verifier: grants.verifier });

    const writing = fencedTransaction(gate, await grants.grant('orders-db', 'agent-1', 3), () => 'written');

    await expect(writing).rejects.toBeInstanceOf(IdleTransactionEndedError);
    await expect(writing).rejects.toThrow(/fenced transaction on "orders-db".*nothing was committed/);
  });
});
