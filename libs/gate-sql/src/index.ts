/**
 * `@lease-fence/gate-sql`: transactional SQL gates. The fence check, the raised floor and the
 * outbox of refusals are rows in the resource's own database (PostgreSQL or SQLite), written in
 * the same transaction as the data they guard ({@link fencedTransaction}); the SDK's reporters
 * drain them to the coordinator ({@link drainSqlGate}).
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 * @packageDocumentation
 */
export {
  fencedTransaction,
  migrate,
  postgresFenceGate,
  sqliteFenceGate,
  SqlFenceGate,
  type PostgresFenceGateOptions,
  type SqlFenceGateOptions,
  type SqliteFenceGateOptions,
} from './sql-fence-gate.js';
export type { PostgresPool } from './postgres-gate.js';
export type { FloorRow, GateRowState, LockedFloor, SqlGateDriver } from './sql-gate-driver.js';
export { drainSqlGate, SqlGateOutbox, type SqlGateDrainer, type SqlGateDrainerOptions } from './sql-outbox.js';
