/**
 * Opens the EventLog adapter the configuration names. The adapters are plain factories with no
 * Nest imports; this is the only file that chooses between them.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemoryEventLog, type EventLog } from '@lease-fence/coordinator-core';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import type { Config } from '../config/config.js';

/** The SQLite file of a namespace inside the data directory: `<dataDir>/<namespace>.events.sqlite`. */
export function sqliteFileOf(config: Pick<Config, 'dataDir' | 'namespace'>): string {
  return join(config.dataDir, `${config.namespace}.events.sqlite`);
}

/**
 * Opens the configured log: `sqlite` (the data directory is created if absent), `memory`
 * (nothing survives the process; for tests and demos) or `eventstoredb` (stream
 * `leaseFence-<namespace>` on the server `EVENTSTORE_CONNECTION_STRING` names; the log owns its
 * client, so closing it at shutdown disposes the client). The EventStoreDB client connects
 * lazily: an unreachable server is not an error here but the first call's
 * `EventLogUnavailableError`, which the coordinator supervisor retries; until the server has answered
 * once, each such failure replaces the client (`openFirstContactEventLog`, see
 * `libs/event-log-eventstoredb/src/first-contact-event-log.ts`). The EventStoreDB adapter and its
 * client (`@kurrent/kurrentdb-client`, ~300 ms and ~30 MiB to load) are imported only when that
 * log is chosen.
 * The SQLite adapter checks the log's identity against the marker `<file>.id` it keeps beside the
 * log in the data directory: a log lost, emptied or replaced since the last start is refused
 * (`EventLogLostError`, an `EventLogCorruptError`), so the coordinator exits 1 instead of issuing
 * fences again from 1. A standby opens the same file and marker, and only ever records the id the
 * file holds.
 * @throws the adapter's `EventLogCorruptError` (`EventLogLostError` included) / `EventLogUnavailableError` when the SQLite file cannot be used.
 * @throws `TypeError` from the EventStoreDB adapter or its client when the connection string does not parse.
 */
export async function openEventLog(config: Config): Promise<EventLog> {
  switch (config.eventLog) {
    case 'memory':
      return createMemoryEventLog();
    case 'sqlite':
      await mkdir(config.dataDir, { recursive: true });
      return openSqliteEventLog({
        file: sqliteFileOf(config),
        durability: config.sqliteDurability,
        writer: config.sqliteWriter,
      });
    case 'eventstoredb': {
      const { eventStoreConnectionString: connectionString, namespace } = config;
      if (connectionString === undefined) {
        throw new TypeError(
          'openEventLog: eventStoreConnectionString (EVENTSTORE_CONNECTION_STRING) is required when eventLog is eventstoredb, got undefined',
        );
      }
      const { connectEventStoreDbEventLog, openFirstContactEventLog } =
        await import('@lease-fence/event-log-eventstoredb');
      return openFirstContactEventLog(() => connectEventStoreDbEventLog({ connectionString, namespace }));
    }
  }
}
