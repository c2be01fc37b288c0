/**
 * The durable coordinator on the EventStoreDB adapter when the connection to the server is lost
 * (the wire emulator, a test double, cuts it): nothing is acknowledged while the log is
 * unreachable, nothing acknowledged is lost, and a coordinator recovered from the log once it is
 * back never issues a fence twice — also when an append landed but its reply was lost.
 */
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import {
  CoordinatorUnavailableError,
  DurableCoordinator,
  type EventLog,
  type RecordedEvent,
} from '@lease-fence/coordinator-core';
import { readAll } from '@lease-fence/coordinator-core/testing';
import { createEventStoreDbEventLog } from '@lease-fence/event-log-eventstoredb';
import { createManualClock } from 'lease-fence';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEsdbWireEmulator, type EsdbWireEmulator } from '../support/esdb-wire-emulator/index.js';

const NAMESPACE = 'default';
const TTL_MILLIS = 10_000;

let emulator: EsdbWireEmulator;
let client: KurrentDBClient;
let restartedClient: KurrentDBClient;
let namespaces = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  emulator = await startEsdbWireEmulator();
  client = KurrentDBClient.connectionString(emulator.connectionString);
  restartedClient = KurrentDBClient.connectionString(emulator.connectionString);
});
afterAll(async () => {
  await client.dispose();
  await restartedClient.dispose();
  await emulator.stop();
});
afterEach(async () => {
  emulator.resume();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Opens a coordinator on `log`; `burnFencesThrough` as a supervisor passes it after a failed append. */
async function openCoordinator(log: EventLog, bootId: string, burnFencesThrough = 0): Promise<DurableCoordinator> {
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: NAMESPACE,
    clock: createManualClock(bootId, { start: 1_000 }),
    defaultTtlMillis: TTL_MILLIS,
    runTimers: false,
    burnFencesThrough,
  });
  cleanups.push(() => coordinator.close());
  return coordinator;
}

function openLog(on: KurrentDBClient, namespace: string): EventLog {
  const log = createEventStoreDbEventLog(on, { namespace });
  cleanups.push(() => log.close());
  return log;
}

const grantedFences = (records: readonly RecordedEvent[]): number[] =>
  records.flatMap((r) => (r.event.type === 'LeaseGranted' ? [r.event.data.fence] : []));

describe('DurableCoordinator on EventStoreDB when the connection is lost', () => {
  it('stops acknowledging while the log is unreachable, then a coordinator recovered from the log grants above every minted fence', async () => {
    // Given a coordinator that granted fence 1
    const namespace = `loss-${++namespaces}`;
    const log = openLog(client, namespace);
    const first = await openCoordinator(log, 'boot-1');
    await first.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });

    // When the connection is lost during the next grant
    emulator.suspend();
    const refused = await first
      .acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' })
      .catch((e: unknown) => e);

    // Then nothing is acknowledged and the coordinator says why (the service answers 503 with the reason)
    expect(refused).toBeInstanceOf(CoordinatorUnavailableError);
    expect(refused).toMatchObject({ code: 'coordinator-unavailable', reason: 'unhealthy', retryable: true });
    expect(first.status).toBe('unhealthy');

    // When the server is reachable again and the coordinator is recovered from the log, burning what the failed one minted
    emulator.resume();
    const second = await openCoordinator(log, 'boot-2', first.highestMintedFence);

    // Then the acknowledged lease is still held, and the fence minted for the unacknowledged grant is burned
    expect(second.recovery).toMatchObject({ carriedLeases: 1 });
    expect(second.recovery.recoveredFence).toBeGreaterThanOrEqual(2);
    expect(await second.renew({ resource: 'slot-1', holderId: 'agent-a', fence: 1, requestId: 'a-2' })).toMatchObject({
      ok: true,
    });
    expect(await second.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-2' })).toMatchObject({
      ok: true,
      grant: { fence: 3 },
    });
    expect(grantedFences(await readAll(log.read({ from: 1 })))).toEqual([1, 3]);
  });

  it('recovers a grant whose append landed but whose reply was lost, and answers its retry with the same fence', async () => {
    // Given a coordinator whose grant of fence 2 reaches the log but whose reply is lost
    const namespace = `lost-reply-${++namespaces}`;
    const first = await openCoordinator(openLog(client, namespace), 'boot-1');
    await first.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });
    emulator.loseNextAppendReply();
    await expect(first.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' })).rejects.toMatchObject({
      reason: 'unhealthy',
    });
    emulator.resume();

    // When a restarted process (its own connection) recovers from the log
    const log = openLog(restartedClient, namespace);
    const second = await openCoordinator(log, 'boot-2');

    // Then the grant found in the log is carried, its retry gets it, and no one else gets fence 2
    expect(second.recovery).toMatchObject({ recoveredFence: 2, carriedLeases: 2 });
    expect(await second.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' })).toMatchObject({
      ok: true,
      grant: { fence: 2 },
    });
    expect(await second.acquire({ resource: 'slot-2', holderId: 'agent-c', requestId: 'c-1' })).toMatchObject({
      ok: false,
      reason: 'held',
      heldBy: 'agent-b',
    });
    expect(await second.acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-2' })).toMatchObject({
      ok: true,
      grant: { fence: 3 },
    });
    expect(grantedFences(await readAll(log.read({ from: 1 })))).toEqual([1, 2, 3]);
  });
});
