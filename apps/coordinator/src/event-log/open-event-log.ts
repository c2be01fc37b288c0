/**
 * Opens the EventLog adapter the configuration names. The adapters are plain factories with no
 * Nest imports; this is the only file that chooses between them.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventLog } from '@lease-fence/coordinator-core';
import { createMemoryEventLog } from '@lease-fence/event-log-memory';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import type { Config } from '../config/config.js';

/** The SQLite file of a namespace inside the data directory: `<dataDir>/<namespace>.events.sqlite`. */
export function sqliteFileOf(config: Pick<Config, 'dataDir' | 'namespace'>): string {
  return join(config.dataDir, `${config.namespace}.events.sqlite`);
}

/**
 * Opens the configured log: `sqlite` (the data directory is created if absent) or `memory`
 * (nothing survives the process; for tests and demos).
 * @throws the adapter's `EventLogCorruptError` / `EventLogUnavailableError` when the file cannot be used.
 */
export async function openEventLog(config: Config): Promise<EventLog> {
  switch (config.eventLog) {
    case 'memory':
      return createMemoryEventLog();
    case 'sqlite':
      await mkdir(config.dataDir, { recursive: true });
      return openSqliteEventLog({ file: sqliteFileOf(config), durability: config.sqliteDurability });
  }
}
