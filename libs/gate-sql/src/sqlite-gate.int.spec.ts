import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteFenceGate } from './index.js';
import { describeSqlGateContract } from '../testing/gate-contract.js';

describeSqlGateContract('SQLite', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gate-sql-'));
  const path = join(directory, 'orders.db');
  const database = new Database(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  const reader = new Database(path, { readonly: false });
  return {
    gate: (resource, grants, coordinator) =>
      sqliteFenceGate({
        database,
        resource,
        verifier: grants.verifier,
        ...(coordinator === undefined ? {} : { coordinator }),
      }),
    execute: async (sql) => {
      reader.exec(sql);
    },
    createWrites: async () => {
      database.exec(
        'CREATE TABLE writes (id INTEGER PRIMARY KEY AUTOINCREMENT, holder_id TEXT NOT NULL, fence INTEGER NOT NULL)',
      );
    },
    write: async (tx, holderId, fence) => {
      tx.prepare('INSERT INTO writes (holder_id, fence) VALUES (?, ?)').run(holderId, fence);
    },
    writes: async () =>
      (
        reader.prepare('SELECT holder_id, fence FROM writes ORDER BY id').all() as {
          holder_id: string;
          fence: number;
        }[]
      ).map((row) => ({ holderId: row.holder_id, fence: row.fence })),
    committedFloor: async (resource) => {
      const row = reader
        .prepare('SELECT floor_fence, floor_holder_id FROM lease_fence_floors WHERE resource = ?')
        .get(resource) as { floor_fence: number | null; floor_holder_id: string | null } | undefined;
      return row === undefined || row.floor_fence === null || row.floor_holder_id === null
        ? undefined
        : { fence: row.floor_fence, holderId: row.floor_holder_id };
    },
    child: { dialect: 'sqlite', target: path },
    waitUntilWriterBlocked: () => new Promise((resolve) => setTimeout(resolve, 500)),
    close: async () => {
      database.close();
      reader.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
});
