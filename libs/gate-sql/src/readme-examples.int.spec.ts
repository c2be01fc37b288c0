/**
 * The example of this package's README, run against the real PostgreSQL server of the test run
 * and the coordinator test double (real signed grants, `/v1/keys`, rejection reports). The README
 * quotes the `#region` block verbatim after its import lines; the last test fails when they
 * drift apart or an import names something that is not exported.
 */
import { FenceGateClient, FenceTokenVerifier, LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { readFile } from 'node:fs/promises';
import { StaleFenceError } from 'lease-fence';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainSqlGate, fencedTransaction, migrate, postgresFenceGate } from './index.js';
import { createTestDatabase } from '../testing/databases.js';

describe('README example', () => {
  let double: CoordinatorTestDouble;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let databaseUrl: string;
  let baseUrl: string;
  const gateToken = 'token-gate';

  beforeEach(async () => {
    double = await openCoordinatorTestDouble({
      tokens: [
        { token: 'token-agent-1', role: 'agent', holderId: 'agent-1' },
        { token: 'token-agent-2', role: 'agent', holderId: 'agent-2' },
        { token: gateToken, role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] },
      ],
    });
    baseUrl = double.url;
    database = await createTestDatabase();
    databaseUrl = database.url;
    const setup = new pg.Client({ connectionString: databaseUrl });
    await setup.connect();
    await setup.query(
      "CREATE TABLE orders (id INT PRIMARY KEY, state TEXT NOT NULL); INSERT INTO orders VALUES (7, 'paid')",
    );
    await setup.end();
  });

  afterEach(async () => {
    await double.close();
    await database.drop();
  });

  it('ships an order under the current fence, refuses the previous holder, and reports the refusal', async () => {
    // Arrange: two agents, one after the other, each with a signed grant from the coordinator
    const agent1 = new LeaseFenceClient({ baseUrl, token: 'token-agent-1', holderId: 'agent-1', clockSkewMillis: 0 });
    const agent2 = new LeaseFenceClient({ baseUrl, token: 'token-agent-2', holderId: 'agent-2', clockSkewMillis: 0 });
    const first = await agent1.acquire('orders-db');
    if (!first.ok) throw new Error('agent-1 got no lease');
    await agent1.release(first.lease);
    const second = await agent2.acquire('orders-db');
    if (!second.ok) throw new Error('agent-2 got no lease');

    // Act
    // #region postgres
    const pool = new pg.Pool({ connectionString: databaseUrl });
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${baseUrl}/v1/keys` } });
    // the coordinator (a gate token): read before the first write, so a database restored from a
    // backup refuses tokens superseded since and numbers its refusals after those already recorded
    const coordinator = new FenceGateClient({ baseUrl, token: gateToken });
    const gate = postgresFenceGate({ pool, resource: 'orders-db', verifier, coordinator });
    await migrate(gate); // creates lease_fence_floors and lease_fence_outbox if they do not exist

    // reports refusals to the coordinator in seq order (until acknowledged), and the floor
    const drainer = drainSqlGate(gate, coordinator);

    // every write: the agent sends lease.signedToken with it; the floor, a refusal, and your
    // statements commit in the same transaction (or a refusal alone, then StaleFenceError)
    const ship = (signedToken: string, orderId: number) =>
      fencedTransaction(gate, signedToken, (tx) =>
        tx.query("UPDATE orders SET state = 'shipped' WHERE id = $1", [orderId]),
      );
    // #endregion
    await ship(second.lease.signedToken, 7);
    const stale = await ship(first.lease.signedToken, 7).catch((error: unknown) => error);
    await drainer.flush();
    await drainer.close();

    // Assert
    expect(stale).toBeInstanceOf(StaleFenceError);
    expect((await pool.query('SELECT state FROM orders WHERE id = 7')).rows).toEqual([{ state: 'shipped' }]);
    expect(double.rejections.map((entry) => entry.body)).toMatchObject([
      {
        seq: 1,
        resource: 'orders-db',
        kind: 'stale',
        rejected: { holderId: 'agent-1', fence: first.lease.fence },
        current: { holderId: 'agent-2', fence: second.lease.fence },
      },
    ]);
    await pool.end();
  });

  it('is quoted verbatim, imports included, by this package README', async () => {
    // Arrange
    const spec = await readFile(new URL(import.meta.url), 'utf8');
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const match = /\/\/ #region postgres\n([\s\S]*?)\n\s*\/\/ #endregion/.exec(spec);
    const lines = (match?.[1] ?? '').split('\n');
    const indent = Math.min(
      ...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length),
    );
    const body = lines.map((line) => line.slice(indent)).join('\n');
    const modules: Record<string, () => Promise<Record<string, unknown>>> = {
      '@lease-fence/client': () => import('@lease-fence/client'),
      '@lease-fence/gate-sql': () => import('./index.js'),
      pg: () => import('pg'),
    };

    // Act
    const block = [...readme.matchAll(/```ts\n([\s\S]*?)\n```/g)]
      .map((found) => found[1]!)
      .find((code) => code.endsWith(body));
    const imports = (block ?? '')
      .slice(0, (block ?? '').length - body.length)
      .split('\n')
      .filter((line) => line.trim() !== '');
    const problems: string[] = [];
    for (const line of imports) {
      const named = /^import \{ (.+) \} from '([^']+)';$/.exec(line);
      const defaulted = /^import (\w+) from '([^']+)';$/.exec(line);
      const source = named?.[2] ?? defaulted?.[2] ?? '';
      const load = modules[source];
      if (load === undefined) {
        problems.push(`unexpected import: ${line}`);
        continue;
      }
      const exported = await load();
      const names = named === null ? ['default'] : named[1]!.split(', ').filter((name) => !name.startsWith('type '));
      problems.push(...names.filter((name) => !(name in exported)).map((name) => `${source} has no export ${name}`));
    }

    // Assert
    expect(block, 'a ```ts block of the README ends with the region').toBeDefined();
    expect(imports.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});
