/**
 * Two coordinators on one log: the active one grants, a standby (coordinator-core's
 * StandbyCoordinator) follows the log with a catch-up subscription and takes over when the active
 * one falls silent. The scenarios are coordinator-core's `describeStandbyScenarios` (which its
 * own spec runs on the in-memory test log), run here on the EventStoreDB adapter (two
 * connections to the wire emulator, a test double) and on the SQLite adapter (two handles on one
 * file). Time is driven by manual clocks; nothing waits on a timer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { describeStandbyScenarios, type SharedLog } from '@lease-fence/coordinator-core/testing';
import { createEventStoreDbEventLog } from '@lease-fence/event-log-eventstoredb';
import { openSqliteEventLog } from '@lease-fence/event-log-sqlite';
import { afterAll, beforeAll } from 'vitest';
import { startEsdbWireEmulator, type EsdbWireEmulator } from '../support/esdb-wire-emulator/index.js';

let emulator: EsdbWireEmulator;
let activeClient: KurrentDBClient;
let standbyClient: KurrentDBClient;
const directory = mkdtempSync(join(tmpdir(), 'lease-fence-standby-'));
let logs = 0;

beforeAll(async () => {
  emulator = await startEsdbWireEmulator();
  activeClient = KurrentDBClient.connectionString(emulator.connectionString);
  standbyClient = KurrentDBClient.connectionString(emulator.connectionString);
});
afterAll(async () => {
  await activeClient.dispose();
  await standbyClient.dispose();
  await emulator.stop();
  rmSync(directory, { recursive: true, force: true });
});

describeStandbyScenarios('eventstoredb (wire emulator)', async (): Promise<SharedLog> => {
  const namespace = `standby-${++logs}`;
  return {
    active: createEventStoreDbEventLog(activeClient, { namespace }),
    standby: createEventStoreDbEventLog(standbyClient, { namespace }),
  };
});

describeStandbyScenarios('sqlite', async (): Promise<SharedLog> => {
  const file = join(directory, `standby-${++logs}.db`);
  const active = await openSqliteEventLog({ file });
  return { active, standby: await openSqliteEventLog({ file, pollIntervalMillis: 5 }) };
});
