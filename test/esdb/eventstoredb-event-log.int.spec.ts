/**
 * What the EventStoreDB adapter does beyond the shared contract — connection loss, truncated or
 * foreign streams, the snapshot stream's cap, the storage format — through the real Kurrent client
 * against the wire emulator (a test double).
 */
import { ANY, KurrentDBClient, jsonEvent, type ResolvedEvent } from '@kurrent/kurrentdb-client';
import {
  EventLogCorruptError,
  EventLogUnavailableError,
  type EventLog,
  type RecordedEvent,
} from '@lease-fence/coordinator-core';
import { leaseGranted, readAll } from '@lease-fence/coordinator-core/testing';
import {
  connectEventStoreDbEventLog,
  createEventStoreDbEventLog,
  type EventStoreDbEventLog,
} from '@lease-fence/event-log-eventstoredb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startEsdbWireEmulator, type EsdbWireEmulator } from '../support/esdb-wire-emulator/index.js';

const grants = (n: number, firstFence = 1) =>
  Array.from({ length: n }, (_, i) =>
    leaseGranted(`resource-${firstFence + i}`, 'agent-a', firstFence + i, { atMillis: firstFence + i }),
  );

let emulator: EsdbWireEmulator;
let client: KurrentDBClient;
let namespaces = 0;
let log: EventStoreDbEventLog;
const opened: EventLog[] = [];

beforeAll(async () => {
  emulator = await startEsdbWireEmulator();
  client = KurrentDBClient.connectionString(emulator.connectionString);
});
afterAll(async () => {
  await client.dispose();
  await emulator.stop();
});
beforeEach(() => {
  log = createEventStoreDbEventLog(client, { namespace: `adapter-${++namespaces}` });
  opened.push(log);
});
afterEach(async () => {
  emulator.resume();
  await Promise.all(opened.splice(0).map((handle) => handle.close()));
});

/** The first event of a subscription, then the subscription is closed. */
async function* takeFirst(
  subscription: AsyncIterable<RecordedEvent> & { close(): Promise<void> },
): AsyncGenerator<RecordedEvent> {
  try {
    for await (const recorded of subscription) {
      yield recorded;
      return;
    }
  } finally {
    await subscription.close();
  }
}

async function rawEvents(stream: string): Promise<ResolvedEvent[]> {
  const out: ResolvedEvent[] = [];
  for await (const resolved of client.readStream(stream)) out.push(resolved);
  return out;
}

describe('EventStoreDB EventLog adapter', () => {
  describe('storage format', () => {
    it('keeps one stream per namespace whose events carry the event type, its data as JSON and its schema version', async () => {
      await log.append(grants(2), { expectedVersion: 0 });

      const [first, second] = await rawEvents(log.streams.events);

      expect(log.streams.events).toBe(`leaseFence-adapter-${namespaces}`);
      expect(first?.event).toMatchObject({
        revision: 0n,
        type: 'LeaseGranted',
        isJson: true,
        data: grants(1)[0]!.data,
        metadata: { schemaVersion: 1 },
      });
      expect(second?.event?.revision).toBe(1n);
    });
  });

  describe('connection loss', () => {
    it('fails append, read and version with a retryable EventLogUnavailableError while the server is unreachable, and appends nothing', async () => {
      // Given a log with two events and the server unreachable
      await log.append(grants(2), { expectedVersion: 0 });
      emulator.suspend();

      // When the coordinator appends and reads
      const append = await log.append(grants(1, 3), { expectedVersion: 2 }).catch((e: unknown) => e);
      const version = await log.version().catch((e: unknown) => e);
      const read = await readAll(log.read({ from: 1 })).catch((e: unknown) => e);

      // Then every call says the log is unavailable, and nothing was appended
      for (const error of [append, version, read]) {
        expect(error).toBeInstanceOf(EventLogUnavailableError);
        expect(error).toMatchObject({ code: 'event-log-unavailable', retryable: true });
      }
      expect(emulator.store.lastRevision(log.streams.events)).toBe(1n);
    });

    it('serves again after reconnecting: same version, and the next append at that version lands', async () => {
      await log.append(grants(2), { expectedVersion: 0 });
      emulator.suspend();
      await expect(log.append(grants(1, 3), { expectedVersion: 2 })).rejects.toBeInstanceOf(EventLogUnavailableError);

      emulator.resume();

      expect(await log.version()).toBe(2);
      expect(await log.append(grants(1, 3), { expectedVersion: 2 })).toEqual({ fromPosition: 3, toPosition: 3 });
      expect((await readAll(log.read({ from: 1 }))).map((r) => r.position)).toEqual([1, 2, 3]);
    });

    it('ends a subscription with EventLogUnavailableError after what it delivered; resubscribing after the last position misses and repeats nothing', async () => {
      // Given a subscription that has delivered positions 1..3
      await log.append(grants(3), { expectedVersion: 0 });
      const subscription = log.subscribe({ after: 0 });
      const iterator = subscription[Symbol.asyncIterator]();
      const delivered: RecordedEvent[] = [];
      for (let i = 0; i < 3; i += 1) delivered.push((await iterator.next()).value as RecordedEvent);

      // When the connection drops
      const pending = iterator.next();
      emulator.suspend();

      // Then the subscription ends with a retryable error
      await expect(pending).rejects.toBeInstanceOf(EventLogUnavailableError);
      emulator.resume();
      await log.append(grants(2, 4), { expectedVersion: 3 });
      const resumed = log.subscribe({ after: delivered.at(-1)!.position });
      const rest: RecordedEvent[] = [];
      for await (const recorded of resumed) {
        rest.push(recorded);
        if (recorded.position === 5) break;
      }
      expect([...delivered, ...rest].map((r) => r.position)).toEqual([1, 2, 3, 4, 5]);
    });
  });

  describe('a server that stops answering', () => {
    it('fails an append with EventLogUnavailableError after operationTimeoutMillis; the append may still land (outcome unknown)', async () => {
      // Given a log with a short operation timeout, and a server that stops answering
      const impatient = createEventStoreDbEventLog(client, {
        namespace: `stalled-${namespaces}`,
        operationTimeoutMillis: 200,
      });
      opened.push(impatient);
      await impatient.append(grants(1), { expectedVersion: 0 });
      emulator.stall();

      // When the coordinator appends
      const error = await impatient.append(grants(1, 2), { expectedVersion: 1 }).catch((e: unknown) => e);

      // Then the append fails as unavailable with an unknown outcome...
      expect(error).toBeInstanceOf(EventLogUnavailableError);
      expect((error as Error).message).toMatch(/no answer from the server within 200 ms; the outcome is unknown/);
      // ...and indeed lands once the server answers again
      emulator.resume();
      const landed = await readAll(takeFirst(impatient.subscribe({ after: 1 })));
      expect(landed.map((r) => r.position)).toEqual([2]);
    });

    it('fails a read with EventLogUnavailableError after operationTimeoutMillis', async () => {
      const impatient = createEventStoreDbEventLog(client, {
        namespace: `stalled-read-${namespaces}`,
        operationTimeoutMillis: 200,
      });
      opened.push(impatient);
      await impatient.append(grants(2), { expectedVersion: 0 });
      emulator.stall();

      const read = await readAll(impatient.read({ from: 1 })).catch((e: unknown) => e);
      const version = await impatient.version().catch((e: unknown) => e);

      expect(read).toBeInstanceOf(EventLogUnavailableError);
      expect(version).toBeInstanceOf(EventLogUnavailableError);
    });

    it('refuses operationTimeoutMillis that is not a positive integer with RangeError naming it', () => {
      expect(() => createEventStoreDbEventLog(client, { namespace: 'x', operationTimeoutMillis: 0 })).toThrow(
        /operationTimeoutMillis/,
      );
    });
  });

  describe('refusing a log it cannot trust', () => {
    it('refuses a log stream truncated by $tb metadata with EventLogCorruptError naming the first missing position', async () => {
      await log.append(grants(4), { expectedVersion: 0 });
      await client.setStreamMetadata(log.streams.events, { truncateBefore: 2 });

      const error = await readAll(log.read({ from: 1 })).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ code: 'event-log-corrupt', position: 1 });
    });

    it("refuses an event another writer put in the stream without this adapter's metadata", async () => {
      await log.append(grants(1), { expectedVersion: 0 });
      await client.appendToStream(
        log.streams.events,
        jsonEvent({ type: 'LeaseGranted', data: grants(1, 2)[0]!.data }),
        { streamState: ANY },
      );

      const error = await readAll(log.read({ from: 1 })).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 2, issues: [{ path: 'metadata' }] });
    });

    it('ends a subscription with EventLogCorruptError at an event that does not decode', async () => {
      await client.appendToStream(
        log.streams.events,
        jsonEvent({ type: 'Unknown', data: {}, metadata: { schemaVersion: 1, recordedAtMillis: 0 } }),
        { streamState: ANY },
      );

      const error = await readAll(log.subscribe({ after: 0 })).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 1, issues: [{ path: 'type' }] });
    });
  });

  describe('snapshots', () => {
    it('caps the snapshot stream with $maxCount metadata so old snapshots are not kept', async () => {
      const capped = createEventStoreDbEventLog(client, { namespace: `capped-${namespaces}`, snapshotsKept: 2 });
      opened.push(capped);
      await capped.append(grants(5), { expectedVersion: 0 });

      for (let position = 1; position <= 5; position += 1)
        await capped.saveSnapshot({ position, state: { position }, schemaVersion: 1 });

      expect((await client.getStreamMetadata(capped.streams.snapshots)).metadata).toMatchObject({ maxCount: 2 });
      expect(
        (await rawEvents(capped.streams.snapshots)).map((e) => (e.event?.data as { position: number }).position),
      ).toEqual([4, 5]);
      expect(await capped.latestSnapshot()).toEqual({ position: 5, state: { position: 5 }, schemaVersion: 1 });
    });

    it('refuses snapshotsKept that is not a positive integer with RangeError naming it', () => {
      expect(() => createEventStoreDbEventLog(client, { namespace: 'x', snapshotsKept: 0 })).toThrow(/snapshotsKept/);
    });
  });

  describe('connectEventStoreDbEventLog', () => {
    it("accepts an esdb:// connection string without the client's deprecation warning", async () => {
      const warn = vi.spyOn(console, 'warn');
      try {
        const connected = await connectEventStoreDbEventLog({
          connectionString: emulator.connectionString.replace('kurrentdb://', 'esdb://'),
          namespace: `connected-${namespaces}`,
        });
        opened.push(connected);

        await connected.append(grants(1), { expectedVersion: 0 });

        expect(await connected.version()).toBe(1);
        expect(warn).not.toHaveBeenCalled();
      } finally {
        warn.mockRestore();
      }
    });
  });
});
