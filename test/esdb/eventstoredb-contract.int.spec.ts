/**
 * The EventLog contract for the EventStoreDB adapter, run in CI against the wire emulator (a test
 * double: test/support/esdb-wire-emulator) through the real `@kurrent/kurrentdb-client`. The same
 * suite runs against a real server in libs/event-log-eventstoredb when EVENTSTORE_CONNECTION_STRING is set.
 *
 * One client is shared by the logs of a test (as a service would share it), a second client plays
 * the second writer (a standby coordinator's own connection).
 */
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { describeEventLogContract } from '@lease-fence/coordinator-core/testing';
import { createEventStoreDbEventLog } from '@lease-fence/event-log-eventstoredb';
import { afterAll, beforeAll } from 'vitest';
import { startEsdbWireEmulator, type EsdbWireEmulator } from '../support/esdb-wire-emulator/index.js';

let emulator: EsdbWireEmulator;
let client: KurrentDBClient;
let secondClient: KurrentDBClient;
let namespaces = 0;
let namespace = 'contract-0';

beforeAll(async () => {
  emulator = await startEsdbWireEmulator();
  client = KurrentDBClient.connectionString(emulator.connectionString);
  secondClient = KurrentDBClient.connectionString(emulator.connectionString);
});

afterAll(async () => {
  await client.dispose();
  await secondClient.dispose();
  await emulator.stop();
});

describeEventLogContract('eventstoredb (wire emulator)', {
  open: async () => {
    namespace = `contract-${++namespaces}`;
    return createEventStoreDbEventLog(client, { namespace });
  },
  reopen: async () => createEventStoreDbEventLog(client, { namespace }),
  openSecondWriter: async () => createEventStoreDbEventLog(secondClient, { namespace }),
});
