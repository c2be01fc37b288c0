/**
 * `@lease-fence/gate-sql`: transactional SQL gates. The fence check, the raised floor and the
 * outbox of refusals are rows in the resource's own database (PostgreSQL or SQLite), written in
 * the same transaction as the data they guard ({@link fencedTransaction}); the SDK's reporters
 * drain them to the coordinator ({@link drainSqlGate}).
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 * @packageDocumentation
 */
/** The transactional SQL gate: the fence check, raised floor and refusal outbox in the guarded data's own transaction (PostgreSQL, SQLite). */
export {
  fencedTransaction,
  migrate,
  postgresFenceGate,
  sqliteFenceGate,
  sqlGateGuard,
  SqlFenceGate,
  type GateRecoverySource,
  type PostgresFenceGateOptions,
  type SqlFenceGateOptions,
  type SqliteFenceGateOptions,
  DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MILLIS,
} from './sql-fence-gate.js';
/** The PostgreSQL pool shape the gate needs (satisfied by `pg`'s Pool), and the error of a transaction PostgreSQL ended as idle. */
export { IdleTransactionEndedError, type PostgresPool } from './postgres-gate.js';
/** The driver port between the SQL gate and a database, and the rows it reads. */
export type { FloorRow, GateRowState, LockedFloor, SqlGateDriver } from './sql-gate-driver.js';
/** The SQL gate's outbox of refusals and the drainer that reports it and the floor to the coordinator. */
export { drainSqlGate, SqlGateOutbox, type SqlGateDrainer, type SqlGateDrainerOptions } from './sql-outbox.js';
