// A writer process for the cross-process tests of testing/gate-contract.ts: opens its own
// connection and runs one fenced transaction that inserts a `writes` row.
// argv: dialect (postgres | sqlite), url or path, resource, signed token, holderId, fence, mode:
// - hang: prints "inside" from within the transaction and never finishes (the parent SIGKILLs it);
// - hold: prints "inside", commits once a line arrives on stdin;
// - once: prints "starting", then runs the transaction at once.
// Prints "committed" or "refused <kind>" at the end. env WRITER_JWKS: the verifier's key set.
import { FenceTokenVerifier } from '@lease-fence/client';
import { createInterface } from 'node:readline';
import { fencedTransaction, postgresFenceGate, sqliteFenceGate } from '../dist/index.js';

const [dialect, target, resource, signedToken, holderId, fence, mode] = process.argv.slice(2);
const verifier = new FenceTokenVerifier({
  namespace: 'default',
  keys: { jwks: JSON.parse(process.env.WRITER_JWKS ?? '') },
});
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const afterWrite = async () => {
  if (mode === 'once') return;
  process.stdout.write('inside\n');
  if (mode === 'hang') await new Promise(() => undefined);
  await lines.next();
};
let gate;
let insert;
if (dialect === 'postgres') {
  const { default: pg } = await import('pg');
  // no idle bound: a 'hold' writer sits idle inside its transaction while the parent waits for the
  // other writer to start, which on a loaded machine can outlast the default bound
  gate = postgresFenceGate({
    pool: new pg.Pool({ connectionString: target, max: 1 }),
    resource,
    verifier,
    idleInTransactionTimeoutMillis: 0,
  });
  insert = (tx) => tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', [holderId, Number(fence)]);
} else {
  const { default: Database } = await import('better-sqlite3');
  const database = new Database(target, { timeout: 20_000 });
  gate = sqliteFenceGate({ database, resource, verifier });
  insert = async (tx) => tx.prepare('INSERT INTO writes (holder_id, fence) VALUES (?, ?)').run(holderId, Number(fence));
}
if (mode === 'once') process.stdout.write('starting\n');
try {
  await fencedTransaction(gate, signedToken, async (tx) => {
    await insert(tx);
    await afterWrite();
  });
  process.stdout.write('committed\n');
} catch (error) {
  process.stdout.write(`refused ${error?.code ?? error?.message}\n`);
}
process.exit(0);
