/**
 * The EventLog contract: one vitest suite that every adapter runs through a factory (emmett's
 * "one suite, every store"). It pins down ordering, positions, expected-version conflicts
 * between two writers, read ranges (one by one and in pages), the catch-up subscription's
 * switch to live (no gap, no duplicate), snapshots, and reopening after close. It is
 * adapter-neutral: it never looks at files, tables or streams.
 *
 * @see ../ports/event-log.ts for the port's contract.
 */
import type { CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EventLogClosedError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
} from '../ports/event-log-errors.js';
import type { EventLog, ReadRange, Subscription } from '../ports/event-log.js';
import {
  coordinatorCheckpointed,
  coordinatorStarted,
  fenceAdmitted,
  fenceRejected,
  leaseExpired,
  leaseGranted,
  leaseReleased,
  leaseRenewed,
  snapshotTaken,
} from './event-builders.js';

/**
 * How the contract suite gets logs. `open()` is called for every test and must return a fresh,
 * empty log on its own storage; `reopen()` and `openSecondWriter()` refer to the storage of the
 * most recent `open()`.
 */
export interface EventLogFactory {
  /** A new, empty log on fresh storage. */
  open(): Promise<EventLog>;
  /** A new handle on the storage of the most recent `open()`, called after that handle was closed. Omit to skip the reopen cases. */
  reopen?(): Promise<EventLog>;
  /** A second live handle on the same storage (a second writer, as a standby coordinator would be). Omit to skip the two-writer cases. */
  openSecondWriter?(): Promise<EventLog>;
}

/** Collects every event of an async iterable. */
export async function readAll(events: AsyncIterable<RecordedEvent>): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for await (const recorded of events) all.push(recorded);
  return all;
}

/**
 * Takes events from a subscription until one at position `untilPosition` arrives, then closes it.
 * No timer: if the event never comes, the test's own timeout reports it.
 */
export async function takeUntil(subscription: Subscription, untilPosition: number): Promise<RecordedEvent[]> {
  const taken: RecordedEvent[] = [];
  try {
    for await (const recorded of subscription) {
      taken.push(recorded);
      if (recorded.position >= untilPosition) break;
    }
  } finally {
    await subscription.close();
  }
  return taken;
}

/** `n` distinct, valid grant events, fences `firstFence..firstFence + n - 1`. */
const grants = (n: number, firstFence = 1): CoordinatorEvent[] =>
  Array.from({ length: n }, (_, i) =>
    leaseGranted(`resource-${firstFence + i}`, 'agent-a', firstFence + i, { atMillis: firstFence + i }),
  );

const positionsOf = (records: readonly RecordedEvent[]): number[] => records.map((r) => r.position);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Registers the EventLog contract suite for one adapter.
 *
 * @param name - Adapter name shown in the test report (`'sqlite'`).
 * @param factory - Opens fresh logs; see {@link EventLogFactory}.
 * @example
 * ```ts
 * describeEventLogContract('memory', { open: async () => createMemoryEventLog() });
 * ```
 */
export function describeEventLogContract(name: string, factory: EventLogFactory): void {
  describe(`EventLog contract: ${name}`, () => {
    const opened: EventLog[] = [];
    const track = async (log: Promise<EventLog>): Promise<EventLog> => {
      const handle = await log;
      opened.push(handle);
      return handle;
    };
    const open = (): Promise<EventLog> => track(factory.open());
    const reopen = (): Promise<EventLog> => track(factory.reopen!());
    const openSecondWriter = (): Promise<EventLog> => track(factory.openSecondWriter!());

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((log) => log.close()));
    });

    describe('append and read', () => {
      it('starts empty: version 0, no events, no snapshot', async () => {
        const log = await open();
        expect(await log.version()).toBe(0);
        expect(await readAll(log.read({ from: 1 }))).toEqual([]);
        expect(await log.latestSnapshot()).toBeUndefined();
      });

      it('assigns contiguous 1-based positions and returns the range each append landed at', async () => {
        // Arrange
        const log = await open();
        // Act
        const first = await log.append(grants(3, 1), { expectedVersion: 0 });
        const second = await log.append(grants(1, 4), { expectedVersion: 3 });
        // Assert
        expect(first).toEqual({ fromPosition: 1, toPosition: 3 });
        expect(second).toEqual({ fromPosition: 4, toPosition: 4 });
        expect(await log.version()).toBe(4);
        const all = await readAll(log.read({ from: 1 }));
        expect(positionsOf(all)).toEqual([1, 2, 3, 4]);
        expect(all.map((r) => r.event)).toEqual(grants(4, 1));
        for (const recorded of all) expect(Number.isFinite(recorded.recordedAtMillis)).toBe(true);
      });

      it('returns every event type exactly as appended', async () => {
        const events: CoordinatorEvent[] = [
          coordinatorStarted({
            bootId: 'boot-9',
            atMillis: 5,
            wallMillis: 1_700_000_000_000,
            namespace: 'ns',
            carriedLeases: [{ resource: 'r', holderId: 'h', fence: 3, expiresAtMillis: 900 }],
            graceDeadlineMillis: 900,
            recoveredFence: 3,
            eventsReplayed: 12,
            fromSnapshot: true,
            replayMillis: 1.5,
            previousBootId: 'boot-8',
          }),
          leaseGranted('repo:web/deploy-slot', 'agent-a', 4, { atMillis: 10.25, ttlMillis: 5000 }),
          leaseRenewed('repo:web/deploy-slot', 'agent-a', 4, { atMillis: 20 }),
          fenceRejected({ seq: 7, gateWallMillis: 1_700_000_000_001, kind: 'double-grant' }),
          fenceAdmitted('repo:web/deploy-slot', 'agent-a', 4, { gateId: 'gate-2' }),
          leaseReleased('repo:web/deploy-slot', 'agent-a', 4, { atMillis: 30 }),
          leaseExpired('other', 'agent-b', 2, { atMillis: 31 }),
          coordinatorCheckpointed({ atMillis: 40 }),
          snapshotTaken(9, { atMillis: 41 }),
        ];
        const log = await open();
        await log.append(events, { expectedVersion: 0 });
        expect((await readAll(log.read({ from: 1 }))).map((r) => r.event)).toEqual(events);
      });

      it('keeps the order of many sequential appends', async () => {
        const log = await open();
        for (let i = 0; i < 40; i += 1) await log.append(grants(1, i + 1), { expectedVersion: i });
        const all = await readAll(log.read({ from: 1 }));
        expect(positionsOf(all)).toEqual(range(1, 40));
        expect(all.map((r) => (r.event.type === 'LeaseGranted' ? r.event.data.fence : -1))).toEqual(range(1, 40));
      });

      it('refuses an empty batch or a batch with one invalid event with TypeError and appends nothing', async () => {
        const log = await open();
        const invalid = {
          ...leaseGranted('slot', 'agent-a', 2),
          data: { ...leaseGranted('slot', 'agent-a', 2).data, fence: -1 },
        };
        await expect(log.append([], { expectedVersion: 0 })).rejects.toThrow(TypeError);
        await expect(
          log.append([leaseGranted('slot', 'agent-a', 1), invalid as CoordinatorEvent], { expectedVersion: 0 }),
        ).rejects.toThrow(/events\[1\]\.data\.fence/);
        expect(await log.version()).toBe(0);
      });

      it('refuses an expected version that is not a non-negative integer with RangeError', async () => {
        const log = await open();
        await expect(log.append(grants(1), { expectedVersion: -1 })).rejects.toThrow(RangeError);
        await expect(log.append(grants(1), { expectedVersion: 0.5 })).rejects.toThrow(RangeError);
        expect(await log.version()).toBe(0);
      });
    });

    describe('read ranges', () => {
      it('reads from a position, up to an inclusive end, and at most limit events', async () => {
        const log = await open();
        await log.append(grants(10), { expectedVersion: 0 });
        expect(positionsOf(await readAll(log.read({ from: 4 })))).toEqual(range(4, 10));
        expect(positionsOf(await readAll(log.read({ from: 2, to: 5 })))).toEqual([2, 3, 4, 5]);
        expect(positionsOf(await readAll(log.read({ from: 3, limit: 2 })))).toEqual([3, 4]);
        expect(positionsOf(await readAll(log.read({ from: 3, to: 9, limit: 3 })))).toEqual([3, 4, 5]);
      });

      it('returns nothing past the end of the log or for an end before the start', async () => {
        const log = await open();
        await log.append(grants(3), { expectedVersion: 0 });
        expect(await readAll(log.read({ from: 4 }))).toEqual([]);
        expect(await readAll(log.read({ from: 3, to: 2 }))).toEqual([]);
      });

      it('reads more events than one page in order', async () => {
        const log = await open();
        for (let i = 0; i < 3; i += 1) await log.append(grants(700, i * 700 + 1), { expectedVersion: i * 700 });
        expect(positionsOf(await readAll(log.read({ from: 1 })))).toEqual(range(1, 2100));
      });

      it('refuses a start below 1 or a non-positive limit with RangeError', async () => {
        const log = await open();
        await expect(readAll(log.read({ from: 0 }))).rejects.toThrow(RangeError);
        await expect(readAll(log.read({ from: 1, limit: 0 }))).rejects.toThrow(RangeError);
      });
    });

    describe('paged read', () => {
      /** Every page of `log.readPages(readRange)`, failing the test if the adapter lacks it. */
      const pagesOf = async (log: EventLog, readRange: ReadRange): Promise<(readonly RecordedEvent[])[]> => {
        if (log.readPages === undefined) throw new Error(`${name}: the adapter does not implement EventLog.readPages`);
        const pages: (readonly RecordedEvent[])[] = [];
        for await (const page of log.readPages(readRange)) pages.push(page);
        return pages;
      };

      it('hands over the same events as read, in non-empty pages in log order, for every range', async () => {
        // Given a log of 1300 events (more than two pages of most adapters)
        const log = await open();
        for (let i = 0; i < 2; i += 1) await log.append(grants(650, i * 650 + 1), { expectedVersion: i * 650 });
        const ranges: ReadRange[] = [
          { from: 1 },
          { from: 4 },
          { from: 2, to: 5 },
          { from: 3, limit: 2 },
          { from: 3, to: 1200, limit: 700 },
          { from: 1301 },
          { from: 3, to: 2 },
        ];
        for (const readRange of ranges) {
          // When the range is read in pages
          const pages = await pagesOf(log, readRange);
          // Then the pages, flattened, are exactly what read returns, and none is empty
          expect(pages.flat(), JSON.stringify(readRange)).toEqual(await readAll(log.read(readRange)));
          expect(pages.every((page) => page.length > 0)).toBe(true);
        }
      });

      it('refuses a start below 1 or a non-positive limit with RangeError', async () => {
        const log = await open();
        await expect(pagesOf(log, { from: 0 })).rejects.toThrow(RangeError);
        await expect(pagesOf(log, { from: 1, limit: 0 })).rejects.toThrow(RangeError);
      });

      it('rejects on a closed log with EventLogClosedError', async () => {
        const log = await open();
        await log.append(grants(1), { expectedVersion: 0 });
        await log.close();
        await expect(pagesOf(log, { from: 1 })).rejects.toBeInstanceOf(EventLogClosedError);
      });
    });

    describe('expected version', () => {
      it('refuses a stale expected version with ExpectedVersionConflictError and appends nothing', async () => {
        const log = await open();
        await log.append(grants(2), { expectedVersion: 0 });
        const error = await log.append(grants(1, 3), { expectedVersion: 1 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ExpectedVersionConflictError);
        expect(error).toMatchObject({ code: 'expected-version-conflict', expectedVersion: 1 });
        expect((error as ExpectedVersionConflictError).actualVersion ?? 2).toBe(2);
        expect(await log.version()).toBe(2);
      });

      it('lets exactly one of two concurrent appends at the same expected version land', async () => {
        const log = await open();
        const results = await Promise.allSettled([
          log.append(grants(2, 1), { expectedVersion: 0 }),
          log.append(grants(3, 10), { expectedVersion: 0 }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((r) => r.status === 'rejected');
        expect(rejected?.reason).toBeInstanceOf(ExpectedVersionConflictError);
        const winner = results.findIndex((r) => r.status === 'fulfilled');
        expect((await readAll(log.read({ from: 1 }))).map((r) => r.event)).toEqual(
          winner === 0 ? grants(2, 1) : grants(3, 10),
        );
      });

      it.skipIf(factory.openSecondWriter === undefined)(
        'lets exactly one of two writers on the same storage append at the same expected version',
        async () => {
          // Arrange
          const first = await open();
          const second = await openSecondWriter();
          // Act
          const results = await Promise.allSettled([
            first.append(grants(2, 1), { expectedVersion: 0 }),
            second.append(grants(3, 10), { expectedVersion: 0 }),
          ]);
          // Assert
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const rejected = results.find((r) => r.status === 'rejected');
          expect(rejected?.reason).toBeInstanceOf(ExpectedVersionConflictError);
          const fromFirst = (await readAll(first.read({ from: 1 }))).map((r) => r.event);
          const fromSecond = (await readAll(second.read({ from: 1 }))).map((r) => r.event);
          expect(fromFirst).toEqual(fromSecond);
          expect([grants(2, 1), grants(3, 10)]).toContainEqual(fromFirst);
        },
      );

      it.skipIf(factory.openSecondWriter === undefined)(
        "refuses a writer that did not see the other writer's append, then accepts it at the new version",
        async () => {
          const first = await open();
          const second = await openSecondWriter();
          await first.append(grants(1, 1), { expectedVersion: 0 });
          await expect(second.append(grants(1, 2), { expectedVersion: 0 })).rejects.toBeInstanceOf(
            ExpectedVersionConflictError,
          );
          await second.append(grants(1, 2), { expectedVersion: 1 });
          expect(await first.version()).toBe(2);
          expect(positionsOf(await readAll(first.read({ from: 1 })))).toEqual([1, 2]);
        },
      );

      it.skipIf(factory.openSecondWriter === undefined)(
        'with appends in call order: refuses, unwritten, an append called before an earlier one was seen to fail',
        async (context) => {
          // Arrange: a pipelining writer at version 1; another writer appends one event first
          const first = await open();
          if (first.appendsInCallOrder !== true) return context.skip();
          const second = await openSecondWriter();
          await first.append(grants(1, 1), { expectedVersion: 0 });
          await second.append(grants(1, 10), { expectedVersion: 1 });
          // Act: append n (one event, now a conflict) and n+1 decided on it, in the same turn; its
          // expected version happens to match the log, which holds the other writer's event there
          const results = await Promise.allSettled([
            first.append(grants(1, 2), { expectedVersion: 1 }),
            first.append(grants(1, 3), { expectedVersion: 2 }),
          ]);
          // Assert: n is a conflict, n+1 refused as unavailable, nothing of either written
          expect(results[0].status === 'rejected' && results[0].reason).toBeInstanceOf(ExpectedVersionConflictError);
          expect(results[1].status === 'rejected' && results[1].reason).toBeInstanceOf(EventLogUnavailableError);
          expect(await first.version()).toBe(2);
          // And once the failure has been seen, the writer appends at the new version
          expect(await first.append(grants(1, 4), { expectedVersion: 2 })).toEqual({ fromPosition: 3, toPosition: 3 });
        },
      );
    });

    describe('subscribe', () => {
      it('delivers the existing events after the given position, then live ones, in order', async () => {
        const log = await open();
        await log.append(grants(5), { expectedVersion: 0 });
        const subscription = log.subscribe({ after: 2 });
        const taken = takeUntil(subscription, 8);
        await log.append(grants(3, 6), { expectedVersion: 5 });
        const events = await taken;
        expect(positionsOf(events)).toEqual([3, 4, 5, 6, 7, 8]);
        expect(events.map((r) => r.event)).toEqual(grants(8).slice(2));
      });

      it('crosses from catch-up to live without a gap or a duplicate while a writer keeps appending', async () => {
        // Given a log with 300 events and a subscription after position 100
        const log = await open();
        for (let i = 0; i < 3; i += 1) await log.append(grants(100, i * 100 + 1), { expectedVersion: i * 100 });
        const subscription = log.subscribe({ after: 100 });
        const taken = takeUntil(subscription, 450);
        // When 150 more events are appended in small batches while it catches up
        let version = 300;
        while (version < 450) {
          const size = Math.min(7, 450 - version);
          await log.append(grants(size, version + 1), { expectedVersion: version });
          version += size;
          await nextTurn();
        }
        // Then it delivers 101..450 exactly once, in order
        const events = await taken;
        expect(positionsOf(events)).toEqual(range(101, 450));
        expect(events.map((r) => r.event)).toEqual(grants(450).slice(100));
      });

      it('waits at the head of the log for the next append', async () => {
        const log = await open();
        await log.append(grants(2), { expectedVersion: 0 });
        const subscription = log.subscribe({ after: 2 });
        const taken = takeUntil(subscription, 3);
        await nextTurn();
        await log.append(grants(1, 3), { expectedVersion: 2 });
        expect(positionsOf(await taken)).toEqual([3]);
      });

      it.skipIf(factory.openSecondWriter === undefined)(
        'delivers events appended through another handle on the same storage',
        async () => {
          const log = await open();
          const other = await openSecondWriter();
          const taken = takeUntil(log.subscribe({ after: 0 }), 4);
          await other.append(grants(4), { expectedVersion: 0 });
          expect(positionsOf(await taken)).toEqual([1, 2, 3, 4]);
        },
      );

      it('ends the iteration when the subscription is closed while waiting', async () => {
        const log = await open();
        const subscription = log.subscribe({ after: 0 });
        const consumed = readAll(subscription);
        await nextTurn();
        await subscription.close();
        expect(await consumed).toEqual([]);
      });

      it('ends the iteration when the log is closed', async () => {
        const log = await open();
        await log.append(grants(1), { expectedVersion: 0 });
        const subscription = log.subscribe({ after: 0 });
        const seen: number[] = [];
        const consumed = (async () => {
          for await (const recorded of subscription) {
            seen.push(recorded.position);
            if (recorded.position === 1) void log.close();
          }
        })();
        await consumed;
        expect(seen).toEqual([1]);
      });

      it('refuses a negative start position with RangeError', async () => {
        const log = await open();
        expect(() => log.subscribe({ after: -1 })).toThrow(RangeError);
      });
    });

    describe('snapshots', () => {
      it('returns the saved snapshot with the highest position', async () => {
        const log = await open();
        await log.append(grants(5), { expectedVersion: 0 });
        await log.saveSnapshot({
          position: 2,
          state: { leases: [{ resource: 'a', fence: 1 }], note: 'two' },
          schemaVersion: 1,
        });
        expect(await log.latestSnapshot()).toEqual({
          position: 2,
          state: { leases: [{ resource: 'a', fence: 1 }], note: 'two' },
          schemaVersion: 1,
        });
        await log.saveSnapshot({ position: 5, state: { note: 'five' }, schemaVersion: 2 });
        await log.saveSnapshot({ position: 3, state: { note: 'three' }, schemaVersion: 1 });
        expect(await log.latestSnapshot()).toEqual({ position: 5, state: { note: 'five' }, schemaVersion: 2 });
      });

      it('returns a copy: changing the saved object afterwards does not change the snapshot', async () => {
        const log = await open();
        await log.append(grants(1), { expectedVersion: 0 });
        const state = { fence: 1 };
        await log.saveSnapshot({ position: 1, state, schemaVersion: 1 });
        state.fence = 99;
        expect((await log.latestSnapshot())?.state).toEqual({ fence: 1 });
      });

      it("refuses a snapshot beyond the log's version with RangeError and one that is not JSON with TypeError", async () => {
        const log = await open();
        await log.append(grants(2), { expectedVersion: 0 });
        await expect(log.saveSnapshot({ position: 3, state: {}, schemaVersion: 1 })).rejects.toThrow(RangeError);
        await expect(log.saveSnapshot({ position: 1, state: { n: 1n }, schemaVersion: 1 })).rejects.toThrow(TypeError);
        expect(await log.latestSnapshot()).toBeUndefined();
      });
    });

    describe('close and reopen', () => {
      it('rejects every call after close with EventLogClosedError, and close is idempotent', async () => {
        const log = await open();
        await log.close();
        await log.close();
        await expect(log.append(grants(1), { expectedVersion: 0 })).rejects.toBeInstanceOf(EventLogClosedError);
        await expect(log.version()).rejects.toBeInstanceOf(EventLogClosedError);
        await expect(readAll(log.read({ from: 1 }))).rejects.toBeInstanceOf(EventLogClosedError);
        await expect(log.latestSnapshot()).rejects.toBeInstanceOf(EventLogClosedError);
        await expect(log.saveSnapshot({ position: 0, state: {}, schemaVersion: 1 })).rejects.toBeInstanceOf(
          EventLogClosedError,
        );
      });

      it.skipIf(factory.reopen === undefined)(
        'keeps events and the latest snapshot across close and reopen, and continues at the same version',
        async () => {
          // Given a log with events and a snapshot, closed
          const log = await open();
          await log.append(grants(6), { expectedVersion: 0 });
          await log.saveSnapshot({ position: 4, state: { covered: 4 }, schemaVersion: 1 });
          await log.close();
          // When it is reopened
          const reopened = await reopen();
          // Then everything is there and appends continue after it
          expect(await reopened.version()).toBe(6);
          expect((await readAll(reopened.read({ from: 1 }))).map((r) => r.event)).toEqual(grants(6));
          expect(await reopened.latestSnapshot()).toEqual({ position: 4, state: { covered: 4 }, schemaVersion: 1 });
          await expect(reopened.append(grants(1, 7), { expectedVersion: 5 })).rejects.toBeInstanceOf(
            ExpectedVersionConflictError,
          );
          expect(await reopened.append(grants(1, 7), { expectedVersion: 6 })).toEqual({
            fromPosition: 7,
            toPosition: 7,
          });
        },
      );
    });
  });
}
