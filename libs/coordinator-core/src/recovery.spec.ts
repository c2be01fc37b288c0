import type { CoordinatorEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { toSnapshot } from './decider/state.js';
import { EventLogCorruptError } from './ports/event-log-errors.js';
import type { EventLog } from './ports/event-log.js';
import { replayLog } from './recovery.js';
import { coordinatorStarted, leaseGranted, leaseReleased } from './testing/event-builders.js';
import { createTestEventLog, createTestEventLogStorage, type TestEventLog } from './testing/test-event-log.js';

/** A boot, then `n` grants of distinct resources at fences 1..n: positions 1..n + 1. */
const history = (n: number): CoordinatorEvent[] => [
  coordinatorStarted({ bootId: 'boot-1' }),
  ...Array.from({ length: n }, (_, i) => leaseGranted(`resource-${i + 1}`, 'agent-a', i + 1, { atMillis: i + 1 })),
];

/** A memory log (the test double, whose stored records a test may rewrite) holding `events`. */
async function logOf(events: readonly CoordinatorEvent[]): Promise<TestEventLog> {
  const log = createTestEventLog(createTestEventLogStorage());
  await log.append(events, { expectedVersion: 0 });
  return log;
}

/** The same log seen through a decorator that forwards every method but `readPages` (which is optional on the port). */
const withoutReadPages = (log: EventLog): EventLog => ({
  name: log.name,
  append: (events, options) => log.append(events, options),
  read: (range) => log.read(range),
  version: () => log.version(),
  subscribe: (options) => log.subscribe(options),
  latestSnapshot: () => log.latestSnapshot(),
  saveSnapshot: (snapshot) => log.saveSnapshot(snapshot),
  close: () => log.close(),
});

const readers = [
  ['in pages (readPages)', (log: EventLog): EventLog => log],
  ['one by one (a log without readPages)', withoutReadPages],
] as const;

describe('replayLog', () => {
  it.each(readers)('folds a log of several pages read %s into the state of every event', async (_reader, view) => {
    // Given a log of 1 + 1300 events (three pages of the memory log)
    const log = view(await logOf(history(1300)));
    // When it is replayed
    const result = await replayLog(log);
    // Then every event was folded, in order
    expect(result).toMatchObject({ eventsReplayed: 1301, fromSnapshot: false });
    expect(result.state.position).toBe(1301);
    expect(result.state.table.issuedFence).toBe(1300);
    expect(result.state.table.lease('resource-1300')).toMatchObject({ holderId: 'agent-a', fence: 1300 });
  });

  it('restores the same state whether the log is read in pages or one by one', async () => {
    const log = await logOf(history(1300));
    const inPages = await replayLog(log);
    const oneByOne = await replayLog(withoutReadPages(log));
    expect(toSnapshot(inPages.state)).toEqual(toSnapshot(oneByOne.state));
  });

  it.each(readers)('replays only the events after the snapshot when read %s', async (_reader, view) => {
    // Given a log with a snapshot at position 601 and 700 events after it
    const memory = await logOf(history(1300));
    const atSnapshot = await replayLog(await logOf(history(600)));
    await memory.saveSnapshot(toSnapshot(atSnapshot.state));
    // When it is replayed
    const result = await replayLog(view(memory));
    // Then only the events after the snapshot were folded, onto the snapshot's state
    expect(result).toMatchObject({ eventsReplayed: 700, fromSnapshot: true });
    expect(result.state.table.issuedFence).toBe(1300);
  });

  it.each(readers)(
    'stops at a record that does not decode, in the middle of a page read %s, naming its position',
    async (_reader, view) => {
      // Given a log whose record at position 700 (inside the second page) is damaged
      const memory = await logOf(history(1300));
      memory.storage.records[699] = { ...memory.storage.records[699]!, data: '{"resource":"resource-699"}' };
      // When it is replayed
      const error = await replayLog(view(memory)).catch((e: unknown) => e);
      // Then recovery stops there
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 700 });
    },
  );

  it.each(readers)(
    'names the first bad position when an event before a damaged record in the same page contradicts the state (read %s)',
    async (_reader, view) => {
      // Given a release of a lease that is not current at position 600, and a damaged record at 700 in the same page
      const events = history(1300);
      events[599] = leaseReleased('resource-9999', 'agent-a', 1, { atMillis: 599 });
      const memory = await logOf(events);
      memory.storage.records[699] = { ...memory.storage.records[699]!, data: '[]' };
      // When it is replayed
      const error = await replayLog(view(memory)).catch((e: unknown) => e);
      // Then the error names the release, the first position that does not fold
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 600 });
    },
  );
});
