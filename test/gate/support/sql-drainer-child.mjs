// A drainer process for test/gate/sql-drainer-kill.int.spec.ts: drains one SQLite gate's outbox to
// the coordinator with drainSqlGate, as a service beside the database would, until it is killed.
// argv: database file, resource, coordinator base URL, gate token.
// Prints "draining" once started, then "reported <seq>" after each refusal the coordinator
// acknowledged and the outbox table recorded.
import { FenceGateClient, FenceTokenVerifier } from '@lease-fence/client';
import { drainSqlGate, sqliteFenceGate } from '@lease-fence/gate-sql';
import Database from 'better-sqlite3';

const [file, resource, baseUrl, gateToken] = process.argv.slice(2);
const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${baseUrl}/v1/keys` } });
const gate = sqliteFenceGate({ database: new Database(file, { timeout: 5000 }), resource, verifier });
drainSqlGate(gate, new FenceGateClient({ baseUrl, token: gateToken }), {
  pollIntervalMillis: 50,
  onReported: (refusal) => process.stdout.write(`reported ${refusal.seq}\n`),
});
process.stdout.write('draining\n');
