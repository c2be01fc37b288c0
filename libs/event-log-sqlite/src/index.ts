/**
 * `@lease-fence/event-log-sqlite`: the embedded EventLog adapter over better-sqlite3
 * (WAL, `synchronous=FULL` in the durable mode).
 */
export { openSqliteEventLog, type SqliteEventLog, type SqliteEventLogOptions } from './sqlite-event-log.js';
export { SCHEMA_VERSION } from './schema.js';
export { EventLogLostError, logIdFileOf } from './log-identity.js';
