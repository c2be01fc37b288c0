import type { CoordinatorStarted } from '@lease-fence/protocol';
import { createManualClock, Instant, type Clock, type ManualClock } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableCoordinator } from './durable-coordinator.js';
import { EventLogCorruptError, EventLogUnavailableError } from './ports/event-log-errors.js';
import type { EventLog, RecordedEvent, Subscription } from './ports/event-log.js';
import { StandbyCoordinator, type StandbyCoordinatorOptions } from './standby-coordinator.js';
import { readAll } from './testing/event-log-contract.js';
import { describeStandbyScenarios } from './testing/standby-scenarios.js';
import {
  createTestEventLog,
  createTestEventLogStorage,
  type TestEventLog,
  type TestEventLogStorage,
} from './testing/test-event-log.js';

const TTL_MILLIS = 10_000;
const SILENCE_MILLIS = 3_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openActive(log: EventLog, clock: ManualClock): Promise<DurableCoordinator> {
  const coordinator = await DurableCoordinator.open({
    log,
    namespace: 'default',
    clock,
    defaultTtlMillis: TTL_MILLIS,
    runTimers: false,
  });
  cleanups.push(() => coordinator.close());
  return coordinator;
}

function follow(log: EventLog, clock: Clock, options: Partial<StandbyCoordinatorOptions> = {}): StandbyCoordinator {
  const standby = StandbyCoordinator.follow({
    log,
    namespace: 'default',
    clock,
    defaultTtlMillis: TTL_MILLIS,
    runTimers: false,
    silenceMillis: SILENCE_MILLIS,
    ...options,
  });
  cleanups.push(() => standby.close());
  return standby;
}

/** An active coordinator that granted `slot-1` to agent-a (fence 1) at t=1000 with ttl 10 s, and a standby that has seen it. */
async function activeWithStandby(standbyLog?: (storage: TestEventLogStorage) => EventLog) {
  const storage = createTestEventLogStorage();
  const activeClock = createManualClock('boot-active', { start: 1_000 });
  const active = await openActive(createTestEventLog(storage), activeClock);
  await active.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });
  const standbyClock = createManualClock('boot-standby', { start: 50_000 });
  const standby = follow(standbyLog?.(storage) ?? createTestEventLog(storage), standbyClock);
  await standby.waitForPosition(active.position);
  return { storage, active, activeClock, standby, standbyClock };
}

const startedEvents = (records: readonly RecordedEvent[]): CoordinatorStarted[] =>
  records.flatMap((r) => (r.event.type === 'CoordinatorStarted' ? [r.event] : []));

// The scenarios every log runs (test/esdb runs them on SQLite and EventStoreDB too): takeover and
// deposition, no takeover while the active coordinator appends, a takeover that loses a race.
describeStandbyScenarios('the in-memory test log', async () => {
  const storage = createTestEventLogStorage();
  return { active: createTestEventLog(storage), standby: createTestEventLog(storage) };
});

describe('StandbyCoordinator', () => {
  describe('follow', () => {
    it.each([
      ['silenceMillis', { silenceMillis: 0 }],
      ['silenceMillis', { silenceMillis: 2.5 }],
      ['resubscribeDelayMillis', { resubscribeDelayMillis: -1 }],
      ['defaultTtlMillis', { defaultTtlMillis: 0 }],
      ['namespace', { namespace: '' }],
    ])('refuses a bad option naming %s, before following anything', (field, options) => {
      // Arrange
      const log = createTestEventLog();

      // Act / Assert
      expect(() =>
        StandbyCoordinator.follow({
          log,
          namespace: 'default',
          clock: createManualClock('standby'),
          defaultTtlMillis: TTL_MILLIS,
          silenceMillis: SILENCE_MILLIS,
          ...(options as Partial<StandbyCoordinatorOptions>),
        }),
      ).toThrow(field);
    });

    it('follows the log from its first event and counts silence from the last one it saw', async () => {
      // Given a standby that has seen the active coordinator's grant
      const { standby, standbyClock, active } = await activeWithStandby();
      expect(standby.position).toBe(active.position);
      expect(standby.millisUntilSilent()).toBe(SILENCE_MILLIS);

      // When time passes on the standby's clock
      standbyClock.advance(SILENCE_MILLIS - 1);

      // Then the log is not yet silent, and is after one more millisecond
      expect(standby.isActiveSilent()).toBe(false);
      expect(standby.millisUntilSilent()).toBe(1);
      standbyClock.advance(1);
      expect(standby.isActiveSilent()).toBe(true);
    });
  });

  describe('takeOverIfSilent', () => {
    it('re-anchors the carried leases exactly as a restart of the same log would, and grants above every issued fence', async () => {
      // Given a lease granted at t=1000 (ttl 10 s) and an uptime checkpoint at t=5000 in the active boot
      const { storage, active, activeClock, standby, standbyClock } = await activeWithStandby();
      activeClock.advance(4_000);
      expect(await active.checkpoint()).toBe(true);
      await standby.waitForPosition(active.position);
      standbyClock.advance(SILENCE_MILLIS);
      // and a copy of the log as it stands, to recover on as a plain restart would
      const restartStorage = createTestEventLogStorage();
      restartStorage.records.push(...storage.records);

      // When the standby takes over at t=53000 of its clock, and a plain restart recovers the copy at the same reading
      const successor = await standby.takeOverIfSilent({
        clock: createManualClock('boot-successor', { start: 53_000 }),
      });
      cleanups.push(async () => successor?.close());
      const restarted = await openActive(
        createTestEventLog(restartStorage),
        createManualClock('boot-successor', { start: 53_000 }),
      );

      // Then both appended the same CoordinatorStarted: the lease carried with its 6 s left, in the new boot's domain
      const [takeover] = startedEvents(await readAll(createTestEventLog(storage).read({ from: 1 }))).slice(-1);
      const [restart] = startedEvents(await readAll(createTestEventLog(restartStorage).read({ from: 1 }))).slice(-1);
      expect(takeover!.data.carriedLeases).toEqual(restart!.data.carriedLeases);
      expect(takeover!.data).toMatchObject({
        graceDeadlineMillis: restart!.data.graceDeadlineMillis,
        recoveredFence: restart!.data.recoveredFence,
        previousBootId: 'boot-active',
      });
      expect(takeover!.data.carriedLeases).toEqual([
        { resource: 'slot-1', holderId: 'agent-a', fence: 1, expiresAtMillis: 59_000 },
      ]);
      expect(successor!.leases()).toEqual([
        expect.objectContaining({
          resource: 'slot-1',
          fence: 1,
          inGrace: true,
          expiresAt: Instant.of(59_000, 'boot-successor'),
        }),
      ]);
      expect(restarted.recovery).toMatchObject({ carriedLeases: 1, recoveredFence: 1 });

      // And the successor honours the carried lease and never reissues its fence
      expect(await successor!.acquire({ resource: 'slot-1', holderId: 'agent-b', requestId: 'b-1' })).toMatchObject({
        ok: false,
        reason: 'held',
        heldBy: 'agent-a',
      });
      expect(
        await successor!.renew({ resource: 'slot-1', holderId: 'agent-a', fence: 1, requestId: 'a-2' }),
      ).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(await successor!.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-2' })).toMatchObject({
        ok: true,
        grant: { fence: 2 },
      });
    });

    it('appends nothing when the log moved past the version it saw go silent, and keeps following', async () => {
      // Given a standby whose subscription is stuck at the grant (it does not see later appends)
      let frozenAt = 0;
      const { storage, active, standby, standbyClock } = await activeWithStandby((s) => {
        const log = createTestEventLog(s);
        return { ...log, subscribe: (options) => frozen(log.subscribe(options), () => frozenAt) };
      });
      frozenAt = active.position;

      // When the active coordinator appends, unseen, and the standby believes it silent
      await active.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' });
      standbyClock.advance(SILENCE_MILLIS);
      const versionBefore = storage.records.length;
      const successor = await standby.takeOverIfSilent();

      // Then the takeover did not happen, nothing was appended, and the active coordinator still grants
      expect(successor).toBeUndefined();
      expect(storage.records.length).toBe(versionBefore);
      expect(await active.acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-1' })).toMatchObject({
        ok: true,
        grant: { fence: 3 },
      });
      expect(active.status).toBe('ready');
    });

    it('keeps following after a takeover whose append failed, and a later attempt with a fresh boot clock takes over', async () => {
      // Given a silent log, and a standby whose first takeover append lands but reports failure (unknown outcome)
      let standbyLog!: TestEventLog;
      const { storage, standby, standbyClock } = await activeWithStandby((s) => (standbyLog = createTestEventLog(s)));
      standbyClock.advance(SILENCE_MILLIS);
      standbyLog.failNextAppend(new EventLogUnavailableError('test', { message: 'connection lost' }), {
        persist: true,
      });

      // When it tries to take over
      const failed = standby.takeOverIfSilent({ clock: createManualClock('boot-attempt-1', { start: 60_000 }) });

      // Then the failure surfaces, the standby follows on and sees the attempt's own CoordinatorStarted
      await expect(failed).rejects.toBeInstanceOf(EventLogUnavailableError);
      await standby.waitForPosition(storage.records.length);
      expect(standby.isActiveSilent()).toBe(false);

      // And once the log is silent again, a new attempt with a new boot id takes over
      standbyClock.advance(SILENCE_MILLIS);
      const successor = await standby.takeOverIfSilent({
        clock: createManualClock('boot-attempt-2', { start: 70_000 }),
      });
      cleanups.push(async () => successor?.close());
      expect(successor?.bootId).toBe('boot-attempt-2');
      expect(successor?.recovery).toMatchObject({ carriedLeases: 1, recoveredFence: 1 });
    });

    it('shares one attempt between concurrent calls', async () => {
      const { standby, standbyClock } = await activeWithStandby();
      standbyClock.advance(SILENCE_MILLIS);
      const [first, second] = await Promise.all([standby.takeOverIfSilent(), standby.takeOverIfSilent()]);
      cleanups.push(async () => first?.close());
      expect(first).toBeInstanceOf(DurableCoordinator);
      expect(second).toBe(first);
    });

    it('refuses to run after the standby was closed', async () => {
      const { standby } = await activeWithStandby();
      await standby.close();
      await expect(standby.takeOverIfSilent()).rejects.toThrow(TypeError);
      await expect(standby.waitForPosition(1_000)).rejects.toThrow(/closed/);
    });
  });

  describe('when following fails', () => {
    it('subscribes again after losing the log, and reports the loss as retrying', async () => {
      // Given a standby whose first subscription fails with the log unavailable
      const storage = createTestEventLogStorage();
      const active = await openActive(createTestEventLog(storage), createManualClock('boot-active', { start: 1_000 }));
      const log = createTestEventLog(storage);
      let subscriptions = 0;
      const errors: { error: unknown; retrying: boolean }[] = [];
      const standby = follow(
        {
          ...log,
          subscribe: (options) =>
            ++subscriptions === 1
              ? failing(new EventLogUnavailableError('test', { message: 'connection lost' }))
              : log.subscribe(options),
        },
        createManualClock('standby'),
        { resubscribeDelayMillis: 1, onFollowError: (error, { retrying }) => errors.push({ error, retrying }) },
      );

      // When the active coordinator appends
      await active.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });

      // Then the standby sees it through its second subscription
      await standby.waitForPosition(active.position);
      expect(subscriptions).toBe(2);
      expect(errors).toEqual([{ error: expect.any(EventLogUnavailableError), retrying: true }]);
    });

    it('stops for good on a corrupt log: waiting for a position rejects with the cause', async () => {
      // Arrange
      const corrupt = new EventLogCorruptError({
        position: 1,
        issues: [{ path: 'type', message: 'unknown event type' }],
      });
      const errors: boolean[] = [];
      const standby = follow(
        { ...createTestEventLog(), subscribe: () => failing(corrupt) },
        createManualClock('standby'),
        {
          onFollowError: (_error, { retrying }) => errors.push(retrying),
        },
      );

      // Act / Assert
      await expect(standby.waitForPosition(1)).rejects.toBe(corrupt);
      expect(errors).toEqual([false]);
    });
  });
});

/** A subscription that fails with `error` on its first read. */
function failing(error: unknown): Subscription {
  return {
    [Symbol.asyncIterator]: (): AsyncIterator<RecordedEvent> => ({ next: () => Promise.reject(error) }),
    close: async () => undefined,
  };
}

/** Passes on the events of `inner` up to position `frozenAt()`, and holds every later one until closed. */
function frozen(inner: Subscription, frozenAt: () => number): Subscription {
  let closed = false;
  let wake: (() => void) | undefined;
  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<RecordedEvent> {
      for await (const recorded of inner) {
        if (frozenAt() > 0 && recorded.position > frozenAt()) {
          if (!closed)
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          return;
        }
        yield recorded;
      }
    },
    async close() {
      closed = true;
      wake?.();
      await inner.close();
    },
  };
}
