// Prints what a transactional SQL gate costs against the same transaction without it, in one
// run: requests/s, p50 and p99 of each, and their ratios (issue 13's target: ≤ 1.3× the bare
// transaction). A figure, not a test: nothing here asserts.
//
//   npm run bench:sql-gate [-- --gates postgres,sqlite --count 400 --rounds 5]
//
// Each transaction updates one row (one connection, one writer at a time). "gated" runs it
// through fencedTransaction: verify the signed grant (Ed25519 the first time, then from the
// verifier's cache), lock and read the floor row, FenceGate's rule, the write, commit. "same
// token" is one lease writing again (the floor row is read, not written; the token is cached);
// "new fence" raises the floor every time (the row is written too, and every token is new, so
// its signature is checked). Rounds
// alternate the order of the variants, so a drift of the machine hits both. PostgreSQL runs a
// throwaway server with fsync on; SQLite a file in WAL mode with synchronous = FULL.
import { FenceTokenVerifier } from '@lease-fence/client';
import { createTestSigningKey } from '@lease-fence/client/testing';
import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { fencedTransaction, migrate, postgresFenceGate, sqliteFenceGate } from '../dist/index.js';
import { startPostgresServer } from '../testing/postgres-server.mjs';

const { values } = parseArgs({
  options: {
    gates: { type: 'string', default: 'postgres,sqlite' },
    count: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '5' },
  },
});
const count = Number(values.count);
const rounds = Number(values.rounds);
const RESOURCE = 'orders-db';

const key = await createTestSigningKey();
const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: key.jwks } });
let nextFence = 1;
const sign = (fence) => key.sign({ resource: RESOURCE, holderId: `agent-${fence}`, fence, namespace: 'default' });

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (millis) => {
  const sorted = [...millis].sort((a, b) => a - b);
  const total = millis.reduce((sum, value) => sum + value, 0);
  return { perSecond: (millis.length * 1000) / total, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

/** Runs every variant `rounds` times, alternating their order, and prints the figures. */
const measure = async (label, variants) => {
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const run of Object.values(variants)) {
    const warmUp = Math.min(50, count);
    const tokens = await run.prepare?.(warmUp);
    for (let i = 0; i < warmUp; i += 1) await run(i, tokens);
  }
  for (let round = 0; round < rounds; round += 1) {
    const names = Object.keys(variants);
    for (const name of round % 2 === 0 ? names : names.reverse()) {
      const tokens = await variants[name].prepare?.(count);
      for (let i = 0; i < count; i += 1) {
        const start = process.hrtime.bigint();
        await variants[name](i, tokens);
        samples[name].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
  }
  const bare = summary(samples.bare);
  console.log(`\n${label}: ${rounds} rounds × ${count} transactions per variant`);
  console.log(
    `${'variant'.padEnd(22)} ${'tx/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}   ratio to bare (time per tx, p50, p99)`,
  );
  for (const name of Object.keys(variants)) {
    const figures = summary(samples[name]);
    const ratios =
      name === 'bare'
        ? ''
        : `   ${(bare.perSecond / figures.perSecond).toFixed(2)}×, ${(figures.p50 / bare.p50).toFixed(2)}×, ${(figures.p99 / bare.p99).toFixed(2)}×`;
    console.log(
      `${name.padEnd(22)} ${figures.perSecond.toFixed(0).padStart(8)} ${figures.p50.toFixed(3).padStart(8)} ${figures.p99.toFixed(3).padStart(8)}${ratios}`,
    );
  }
};

/** The gated variants: one lease writing again, and a new fence (the floor raised) every time. */
const gatedVariants = (gate, update) => {
  // a lease taken at the start of each batch (above every fence so far), then writing again
  const same = async (_i, token) => fencedTransaction(gate, token, update);
  same.prepare = () => sign(nextFence++);
  const rising = async (i, tokens) => fencedTransaction(gate, tokens[i], update);
  rising.prepare = (n) => Promise.all(Array.from({ length: n }, () => sign(nextFence++)));
  return { 'gated, same token': same, 'gated, new fence': rising };
};

// The token check alone: the signature check (jose, Ed25519) of a token seen for the first time,
// and a repeated token answered from the verifier's cache (a lease's later writes).
for (const [label, timed] of [
  [
    'first sight (signature checked)',
    new FenceTokenVerifier({ namespace: 'default', keys: { jwks: key.jwks }, tokenCacheCapacity: 0 }),
  ],
  ['repeated (from the cache)', verifier],
]) {
  const token = await sign(nextFence++);
  for (let i = 0; i < 200; i += 1) await timed.verify(token, RESOURCE);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count * rounds; i += 1) await timed.verify(token, RESOURCE);
  console.log(
    `verifier.verify alone, ${label}: ${(Number(process.hrtime.bigint() - start) / 1e6 / (count * rounds)).toFixed(3)} ms per token`,
  );
}

const gates = values.gates.split(',');
if (gates.includes('postgres')) {
  const server = process.env.LEASE_FENCE_PG_URL
    ? { url: process.env.LEASE_FENCE_PG_URL, stop: async () => undefined }
    : await startPostgresServer();
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  try {
    await pool.query(
      'DROP TABLE IF EXISTS bench_orders; CREATE TABLE bench_orders (id INT PRIMARY KEY, n BIGINT NOT NULL); INSERT INTO bench_orders VALUES (1, 0)',
    );
    const gate = postgresFenceGate({ pool, resource: RESOURCE, verifier });
    await migrate(gate);
    await pool.query('DELETE FROM lease_fence_floors; DELETE FROM lease_fence_outbox');
    const update = (client) => client.query('UPDATE bench_orders SET n = n + 1 WHERE id = 1');
    const bare = async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await update(client);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    await measure('PostgreSQL (pg, one connection, fsync on)', { bare, ...gatedVariants(gate, update) });
  } finally {
    await pool.end();
    await server.stop();
  }
}
if (gates.includes('sqlite')) {
  const directory = await mkdtemp(join(tmpdir(), 'sql-gate-bench-'));
  const database = new Database(join(directory, 'bench.db'));
  try {
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.exec(
      'CREATE TABLE bench_orders (id INT PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO bench_orders VALUES (1, 0)',
    );
    const gate = sqliteFenceGate({ database, resource: RESOURCE, verifier });
    await migrate(gate);
    const statement = database.prepare('UPDATE bench_orders SET n = n + 1 WHERE id = 1');
    const update = () => statement.run();
    const bare = async () => {
      database.exec('BEGIN IMMEDIATE');
      update();
      database.exec('COMMIT');
    };
    await measure('SQLite (better-sqlite3, WAL, synchronous = FULL)', { bare, ...gatedVariants(gate, update) });
  } finally {
    database.close();
    await rm(directory, { recursive: true, force: true });
  }
}
