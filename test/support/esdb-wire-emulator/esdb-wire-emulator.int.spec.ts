/**
 * The wire emulator (a test double) against the real `@kurrent/kurrentdb-client`: each case pins
 * a documented server behaviour the EventStoreDB adapter relies on, through the same client calls.
 */
import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  jsonEvent,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEsdbWireEmulator, type EsdbWireEmulator } from './index.js';

const event = (n: number, id: string = randomUUID()) => jsonEvent({ id, type: 'Counted', data: { n } });

async function readAll(
  client: KurrentDBClient,
  stream: string,
  options: Parameters<KurrentDBClient['readStream']>[1] = {},
): Promise<ResolvedEvent[]> {
  const out: ResolvedEvent[] = [];
  for await (const resolved of client.readStream(stream, options)) out.push(resolved);
  return out;
}

const numbers = (events: readonly ResolvedEvent[]) => events.map((e) => (e.event?.data as { n: number }).n);
const revisions = (events: readonly ResolvedEvent[]) => events.map((e) => e.event?.revision);

describe.each([
  { path: 'BatchAppend', batchAppend: true },
  { path: 'Append', batchAppend: false },
])('esdb wire emulator with the Kurrent client appending through $path', ({ path, batchAppend }) => {
  // One emulator and client per append path (the client's Rust bridge waits ~500 ms before its
  // first read); every test works on streams of its own.
  let emulator: EsdbWireEmulator;
  let client: KurrentDBClient;
  let tests = 0;
  let s = '';

  beforeAll(async () => {
    emulator = await startEsdbWireEmulator({ batchAppend });
    client = KurrentDBClient.connectionString(emulator.connectionString);
  });
  afterAll(async () => {
    await client.dispose();
    await emulator.stop();
  });
  beforeEach(() => {
    s = `stream-${++tests}`;
  });

  describe('appendToStream', () => {
    it('numbers revisions from 0 and reports the new revision after each append', async () => {
      const first = await client.appendToStream(s, [event(1), event(2)], { streamState: NO_STREAM });
      const second = await client.appendToStream(s, event(3), { streamState: 1n });

      expect(first.nextExpectedRevision).toBe(1n);
      expect(second.nextExpectedRevision).toBe(2n);
      expect(revisions(await readAll(client, s))).toEqual([0n, 1n, 2n]);
      expect(emulator.calls).toContain(path);
    });

    it('refuses a stale expected revision with the actual revision and writes nothing', async () => {
      await client.appendToStream(s, [event(1), event(2)], { streamState: NO_STREAM });

      const refused = client.appendToStream(s, event(3), { streamState: 0n });

      await expect(refused).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(refused).rejects.toMatchObject({ expectedState: 0n, actualState: 1n });
      expect(numbers(await readAll(client, s))).toEqual([1, 2]);
    });

    it('refuses NO_STREAM on an existing stream and STREAM_EXISTS on a missing one', async () => {
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });

      await expect(client.appendToStream(s, event(2), { streamState: NO_STREAM })).rejects.toMatchObject({
        actualState: 0n,
        expectedState: 'no_stream',
      });
      await expect(
        client.appendToStream(`missing-${s}`, event(1), { streamState: STREAM_EXISTS }),
      ).rejects.toMatchObject({ actualState: 'no_stream', expectedState: 'stream_exists' });
      await expect(client.appendToStream(`missing-${s}`, event(1), { streamState: 5n })).rejects.toMatchObject({
        actualState: 'no_stream',
        expectedState: 5n,
      });
    });

    it('appends with ANY whatever the stream holds', async () => {
      await client.appendToStream(s, event(1), { streamState: ANY });
      const result = await client.appendToStream(s, event(2), { streamState: ANY });

      expect(result.nextExpectedRevision).toBe(1n);
    });

    it('treats a retry of the same event ids after the same revision as already done', async () => {
      const id = randomUUID();
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });
      await client.appendToStream(s, event(2, id), { streamState: 0n });

      const retry = await client.appendToStream(s, event(2, id), { streamState: 0n });

      expect(retry.nextExpectedRevision).toBe(1n);
      expect(numbers(await readAll(client, s))).toEqual([1, 2]);
    });
  });

  describe('readStream (through the Rust bridge)', () => {
    it('reads forwards from a revision, inclusive, up to maxCount', async () => {
      await client.appendToStream(
        s,
        [1, 2, 3, 4, 5].map((n) => event(n)),
        { streamState: NO_STREAM },
      );

      const events = await readAll(client, s, { fromRevision: 2n, direction: FORWARDS, maxCount: 2 });

      expect(numbers(events)).toEqual([3, 4]);
      expect(revisions(events)).toEqual([2n, 3n]);
    });

    it('reads the last event backwards from END', async () => {
      await client.appendToStream(
        s,
        [1, 2, 3].map((n) => event(n)),
        { streamState: NO_STREAM },
      );

      const events = await readAll(client, s, { fromRevision: END, direction: BACKWARDS, maxCount: 1 });

      expect(numbers(events)).toEqual([3]);
    });

    it('fails with StreamNotFoundError for a stream that has no event', async () => {
      await expect(readAll(client, `missing-${s}`, { fromRevision: START })).rejects.toBeInstanceOf(
        StreamNotFoundError,
      );
    });

    it('stamps each event with the server creation time, which the bridge rounds down to whole seconds', async () => {
      const beforeMillis = Date.now();
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });

      const [read] = await readAll(client, s);

      const createdMillis = read?.event?.created.getTime() ?? Number.NaN;
      expect(createdMillis % 1000).toBe(0);
      expect(createdMillis).toBeGreaterThanOrEqual(Math.floor(beforeMillis / 1000) * 1000);
    });
  });

  describe('stream metadata', () => {
    it('hides all but the newest $maxCount events while revisions keep counting', async () => {
      await client.setStreamMetadata(`snapshots-${s}`, { maxCount: 2 });
      await client.appendToStream(
        `snapshots-${s}`,
        [1, 2, 3, 4].map((n) => event(n)),
        { streamState: ANY },
      );

      const events = await readAll(client, `snapshots-${s}`);
      const metadata = await client.getStreamMetadata(`snapshots-${s}`);

      expect(numbers(events)).toEqual([3, 4]);
      expect(revisions(events)).toEqual([2n, 3n]);
      expect(metadata.metadata).toMatchObject({ maxCount: 2 });
    });
  });

  describe('subscribeToStream', () => {
    it('delivers the events after the start revision, reports caught up, then delivers live appends', async () => {
      await client.appendToStream(
        s,
        [1, 2, 3].map((n) => event(n)),
        { streamState: NO_STREAM },
      );
      const subscription = client.subscribeToStream(s, { fromRevision: 0n });
      const caughtUp = new Promise<void>((resolve) => subscription.once('caughtUp', () => resolve()));
      const received: number[] = [];
      const done = (async () => {
        for await (const resolved of subscription) {
          received.push((resolved.event?.data as { n: number }).n);
          if (received.length === 3) break;
        }
      })();

      await caughtUp;
      await client.appendToStream(s, event(4), { streamState: 2n });
      await done;

      expect(received).toEqual([2, 3, 4]);
    });

    it('waits on a stream that does not exist yet and delivers its first event', async () => {
      const subscription = client.subscribeToStream(`later-${s}`, { fromRevision: START });
      await new Promise<void>((resolve) => subscription.once('caughtUp', () => resolve()));

      await client.appendToStream(`later-${s}`, event(1), { streamState: NO_STREAM });
      const iterator = subscription[Symbol.asyncIterator]();
      const first = await iterator.next();
      await subscription.unsubscribe();

      expect((first.value as ResolvedEvent).event?.revision).toBe(0n);
    });
  });

  describe('suspend and resume', () => {
    it('fails calls with UnavailableError while suspended and serves them again after resume, with nothing lost', async () => {
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });

      emulator.suspend();
      const whileSuspended = client.appendToStream(s, event(2), { streamState: 0n });
      await expect(whileSuspended).rejects.toBeInstanceOf(UnavailableError);
      emulator.resume();
      await client.appendToStream(s, event(3), { streamState: 0n });

      expect(numbers(await readAll(client, s))).toEqual([1, 3]);
    });

    it('holds calls while stalled and completes them after resume', async () => {
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });

      emulator.stall();
      const held = client.appendToStream(s, event(2), { streamState: 0n });
      await new Promise((resolve) => setImmediate(resolve));
      const revisionWhileStalled = emulator.store.lastRevision(s);
      emulator.resume();

      expect(revisionWhileStalled).toBe(0n);
      expect((await held).nextExpectedRevision).toBe(1n);
    });

    it('can lose the reply of an append that landed: the client sees the connection fail, the events are stored', async () => {
      await client.appendToStream(s, event(1), { streamState: NO_STREAM });

      emulator.loseNextAppendReply();
      const lost = client.appendToStream(s, event(2), { streamState: 0n });
      await expect(lost).rejects.toBeInstanceOf(UnavailableError);
      emulator.resume();

      expect(numbers(await readAll(client, s))).toEqual([1, 2]);
    });
  });
});
