/**
 * The EventLog contract against a real KurrentDB / EventStoreDB server, whenever
 * `EVENTSTORE_CONNECTION_STRING` is set (e.g. `kurrentdb://localhost:2113?tls=false` with
 * `docker compose -f docker/compose.yml up kurrentdb`). Skipped otherwise, with the reason in the
 * suite name. In CI the same suite runs against the wire emulator:
 * test/esdb/eventstoredb-contract.int.spec.ts (the emulator lives in the test project, which this
 * library must not import).
 *
 * A real server keeps its streams, so every run uses namespaces of its own.
 */
import { randomUUID } from 'node:crypto';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { describeEventLogContract, leaseGranted } from '@lease-fence/coordinator-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEventStoreDbEventLog } from './connect-eventstoredb-event-log.js';
import { createEventStoreDbEventLog } from './eventstoredb-event-log.js';

const connectionString = process.env['EVENTSTORE_CONNECTION_STRING'];
const SKIP_REASON = 'EVENTSTORE_CONNECTION_STRING is not set, so there is no server to run against';
if (connectionString === undefined || connectionString === '')
  console.info(`eventstoredb real-server contract skipped: ${SKIP_REASON}`);

describe.skipIf(connectionString === undefined || connectionString === '')(
  `EventStoreDB adapter against a real server${connectionString ? '' : ` (skipped: ${SKIP_REASON})`}`,
  () => {
    const run = randomUUID().slice(0, 8);
    let client: KurrentDBClient;
    let secondClient: KurrentDBClient;
    let namespaces = 0;
    let namespace = '';

    beforeAll(() => {
      client = KurrentDBClient.connectionString(connectionString!);
      secondClient = KurrentDBClient.connectionString(connectionString!);
    });
    afterAll(async () => {
      await client.dispose();
      await secondClient.dispose();
    });

    describeEventLogContract('eventstoredb (real server)', {
      open: async () => {
        namespace = `contract-${run}-${++namespaces}`;
        return createEventStoreDbEventLog(client, { namespace });
      },
      reopen: async () => createEventStoreDbEventLog(client, { namespace }),
      openSecondWriter: async () => createEventStoreDbEventLog(secondClient, { namespace }),
    });

    describe('connectEventStoreDbEventLog', () => {
      it('connects from the connection string and appends and reads through its own client', async () => {
        const log = await connectEventStoreDbEventLog({
          connectionString: connectionString!,
          namespace: `connect-${run}`,
        });
        try {
          await log.append([leaseGranted('slot', 'agent-a', 1)], { expectedVersion: 0 });
          expect(await log.version()).toBe(1);
        } finally {
          await log.close();
        }
      });
    });
  },
);
