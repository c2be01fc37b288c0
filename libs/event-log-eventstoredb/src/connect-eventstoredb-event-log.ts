/**
 * The adapter's entry point for a service: a connection string in, an EventLog that owns its
 * client out.
 */
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import {
  createEventStoreDbEventLog,
  type EventStoreDbEventLog,
  type EventStoreDbEventLogOptions,
} from './eventstoredb-event-log.js';
import { toKurrentConnectionString } from './to-eventstoredb.js';

/** Options of {@link connectEventStoreDbEventLog}. */
export interface ConnectEventStoreDbEventLogOptions extends Omit<EventStoreDbEventLogOptions, 'closeClient'> {
  /**
   * Where the server is, e.g. `kurrentdb://localhost:2113?tls=false` or a cluster
   * `kurrentdb+discover://…`; the `esdb://` / `esdb+discover://` schemes of EventStoreDB are
   * accepted too. The coordinator reads it from `EVENTSTORE_CONNECTION_STRING`.
   */
  readonly connectionString: string;
}

/**
 * Creates a KurrentDB client from `options.connectionString` and the EventLog of
 * `options.namespace` on it; closing the log disposes the client. The client connects lazily,
 * so an unreachable server is reported by the first call (as `EventLogUnavailableError`), not here.
 *
 * @throws `TypeError` naming `connectionString` or `namespace` when malformed; the client's own
 *   parse error for an unknown option in the connection string.
 * @throws `RangeError` naming `snapshotsKept` or `operationTimeoutMillis` when it is out of range.
 * @example
 * ```ts
 * const log = await connectEventStoreDbEventLog({
 *   connectionString: process.env.EVENTSTORE_CONNECTION_STRING ?? 'kurrentdb://localhost:2113?tls=false',
 *   namespace: 'default',
 * });
 * ```
 */
export async function connectEventStoreDbEventLog(
  options: ConnectEventStoreDbEventLogOptions,
): Promise<EventStoreDbEventLog> {
  const { connectionString, ...logOptions } = options;
  const client = KurrentDBClient.connectionString(toKurrentConnectionString(connectionString));
  try {
    return createEventStoreDbEventLog(client, { ...logOptions, closeClient: true });
  } catch (error) {
    await client.dispose();
    throw error;
  }
}
