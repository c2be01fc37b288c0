// A writer process for the kill -9 tests: opens its own connection, starts a fenced transaction
// that writes a row, prints "inside" and never finishes, so the parent can SIGKILL it mid-transaction.
// argv: dialect (postgres | sqlite), url or path, resource, signed token; env WRITER_JWKS: the verifier's key set.
import { FenceTokenVerifier } from '@lease-fence/client';
import { fencedTransaction, postgresFenceGate, sqliteFenceGate } from '../dist/index.js';

const [dialect, target, resource, signedToken] = process.argv.slice(2);
const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: JSON.parse(process.env.WRITER_JWKS ?? '') } });
const hang = () => {
  process.stdout.write('inside\n');
  return new Promise(() => undefined);
};
if (dialect === 'postgres') {
  const { default: pg } = await import('pg');
  const gate = postgresFenceGate({ pool: new pg.Pool({ connectionString: target, max: 1 }), resource, verifier });
  await fencedTransaction(gate, signedToken, async (tx) => {
    await tx.query('INSERT INTO writes (holder_id, fence) VALUES ($1, $2)', ['killed-writer', 0]);
    return hang();
  });
} else {
  const { default: Database } = await import('better-sqlite3');
  const database = new Database(target);
  database.pragma('journal_mode = WAL');
  const gate = sqliteFenceGate({ database, resource, verifier });
  await fencedTransaction(gate, signedToken, async (tx) => {
    tx.prepare('INSERT INTO writes (holder_id, fence) VALUES (?, ?)').run('killed-writer', 0);
    return hang();
  });
}
