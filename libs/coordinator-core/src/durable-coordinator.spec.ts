import type { CoordinatorEvent } from '@lease-fence/protocol';
import fc from 'fast-check';
import {
  createManualClock,
  createMonotonicClock,
  Instant,
  isTtlMillis,
  ProtocolMisuseError,
  type ManualClock,
} from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { replayLog } from './recovery.js';
import { DurableCoordinator, type DurableCoordinatorOptions } from './durable-coordinator.js';
import { CoordinatorUnavailableError } from './errors.js';
import {
  EventLogCorruptError,
  EventLogUnavailableError,
  ExpectedVersionConflictError,
} from './ports/event-log-errors.js';
import type { EventLog } from './ports/event-log.js';
import { readAll, takeUntil } from './testing/event-log-contract.js';
import { createTestEventLog, createTestEventLogStorage, type TestEventLog } from './testing/test-event-log.js';

const opened: DurableCoordinator[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

let bootCounter = 0;
/** A manual clock for a new boot (fresh domain), starting at `start` ms. */
const bootClock = (start = 0): ManualClock => createManualClock(`boot-${++bootCounter}`, { start });

/** Opens a coordinator without timers on `log` (a new handle on fresh storage by default). */
async function openCoordinator(
  options: Partial<DurableCoordinatorOptions> & { log?: EventLog } = {},
): Promise<{ coordinator: DurableCoordinator; log: TestEventLog; clock: ManualClock }> {
  const log = (options.log ?? createTestEventLog()) as TestEventLog;
  const clock = (options.clock as ManualClock | undefined) ?? bootClock();
  const coordinator = await DurableCoordinator.open({
    namespace: 'default',
    defaultTtlMillis: 10_000,
    runTimers: false,
    wallClock: () => 1_700_000_000_000,
    ...options,
    log,
    clock,
  });
  opened.push(coordinator);
  return { coordinator, log, clock };
}

const eventsOf = async (log: EventLog): Promise<CoordinatorEvent[]> =>
  (await readAll(log.read({ from: 1 }))).map((r) => r.event);
const typesOf = async (log: EventLog): Promise<string[]> => (await eventsOf(log)).map((e) => e.type);
const request = (resource: string, holderId: string, requestId = `${resource}/${holderId}`) => ({
  resource,
  holderId,
  requestId,
});
/** Grants fences 1 (`a`, then released) and 2 (`b`, current) on `slot`: the history of {@link reportOfALateWrite}. */
async function handOverSlot(coordinator: DurableCoordinator): Promise<void> {
  await coordinator.acquire(request('slot', 'a'));
  await coordinator.release({ resource: 'slot', holderId: 'a', fence: 1 });
  await coordinator.acquire(request('slot', 'b'));
}
/** gate-1's report, as its refusal `seq`, of `a`'s late write on `slot` after {@link handOverSlot}. */
const reportOfALateWrite = (seq: number) =>
  ({
    gateId: 'gate-1',
    resource: 'slot',
    seq,
    kind: 'stale',
    rejected: { holderId: 'a', fence: 1 },
    current: { holderId: 'b', fence: 2 },
  }) as const;
const unavailable = (reason: string) =>
  expect.objectContaining({
    name: 'CoordinatorUnavailableError',
    code: 'coordinator-unavailable',
    reason,
    retryable: true,
  });

describe('DurableCoordinator', () => {
  describe('open', () => {
    it('starts a fresh log with CoordinatorStarted and is ready', async () => {
      const { coordinator, log, clock } = await openCoordinator({ clock: bootClock(250) });
      expect(coordinator.status).toBe('ready');
      expect(coordinator.bootId).toBe(clock.domain);
      expect(coordinator.position).toBe(1);
      expect(coordinator.recovery).toMatchObject({
        eventsReplayed: 0,
        fromSnapshot: false,
        recoveredFence: 0,
        carriedLeases: 0,
        graceDeadline: Instant.of(250, clock.domain),
      });
      expect(await eventsOf(log)).toEqual([
        expect.objectContaining({
          type: 'CoordinatorStarted',
          data: expect.objectContaining({
            bootId: clock.domain,
            namespace: 'default',
            atMillis: 250,
            wallMillis: 1_700_000_000_000,
          }),
        }),
      ]);
    });

    it.each([
      ['defaultTtlMillis', { defaultTtlMillis: 0 }],
      ['defaultTtlMillis', { defaultTtlMillis: 20_000, maxTtlMillis: 10_000 }],
      ['maxBatch', { maxBatch: 0 }],
      ['maxAppendsInFlight', { maxAppendsInFlight: 0 }],
      ['snapshotEvery', { snapshotEvery: 1.5 }],
      ['namespace', { namespace: '' }],
      ['clock.domain', { clock: createManualClock(' spaced ') }],
    ])('refuses a bad option, naming %s, and writes nothing', async (field, options) => {
      const log = createTestEventLog();
      await expect(openCoordinator({ log, ...options } as Partial<DurableCoordinatorOptions>)).rejects.toThrow(field);
      expect(await log.version()).toBe(0);
    });

    it('refuses a clock whose domain an earlier boot of this log used', async () => {
      const storage = createTestEventLogStorage();
      const { clock } = await openCoordinator({ log: createTestEventLog(storage) });
      await expect(openCoordinator({ log: createTestEventLog(storage), clock })).rejects.toBeInstanceOf(
        ProtocolMisuseError,
      );
    });

    it('refuses a log of another namespace', async () => {
      const storage = createTestEventLogStorage();
      await openCoordinator({ log: createTestEventLog(storage) });
      await expect(openCoordinator({ log: createTestEventLog(storage), namespace: 'other' })).rejects.toThrow(
        /namespace/,
      );
    });

    it('takes over only if the log is still at the version the standby expected', async () => {
      const storage = createTestEventLogStorage();
      const { coordinator: active } = await openCoordinator({ log: createTestEventLog(storage) });
      const seen = active.position;
      await active.acquire(request('slot', 'agent-a'));
      await expect(
        openCoordinator({ log: createTestEventLog(storage), takeOverAtVersion: seen }),
      ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      expect(storage.records).toHaveLength(2);
      const { coordinator: standby } = await openCoordinator({
        log: createTestEventLog(storage),
        takeOverAtVersion: 2,
      });
      expect(standby.position).toBe(3);
    });

    it('stops recovery at a corrupt event with an error naming its position', async () => {
      const storage = createTestEventLogStorage();
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage) });
      await coordinator.acquire(request('slot', 'agent-a'));
      storage.records[1] = { ...storage.records[1]!, data: '{"resource":"slot"}' };
      const error = await openCoordinator({ log: createTestEventLog(storage) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ position: 2 });
    });
  });

  describe('persist before acknowledge', () => {
    it('resolves a grant only after its append has landed', async () => {
      // Arrange
      const { coordinator, log } = await openCoordinator();
      const release = log.holdAppends();
      let settled = false;
      // Act
      const outcome = coordinator.acquire(request('slot', 'agent-a')).finally(() => (settled = true));
      await log.whenAppendsHeld(1);
      // Assert
      expect(settled).toBe(false);
      expect(await log.version()).toBe(1);
      expect(coordinator.leases()).toEqual([]);
      release();
      expect(await outcome).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(await log.version()).toBe(2);
    });

    it('group-commits concurrent commands in one append and decides each against the earlier ones', async () => {
      const { coordinator, log } = await openCoordinator();
      const outcomes = await Promise.all([
        coordinator.acquire(request('slot', 'agent-a')),
        coordinator.acquire(request('slot', 'agent-b')),
        coordinator.acquire(request('other', 'agent-b')),
        coordinator.release({ resource: 'slot', holderId: 'agent-a', fence: 1 }),
        coordinator.acquire(request('slot', 'agent-c')),
      ]);
      expect(outcomes).toEqual([
        expect.objectContaining({ ok: true, grant: expect.objectContaining({ fence: 1, holderId: 'agent-a' }) }),
        expect.objectContaining({ ok: false, reason: 'held', heldBy: 'agent-a' }),
        expect.objectContaining({ ok: true, grant: expect.objectContaining({ fence: 2, resource: 'other' }) }),
        { ok: true },
        expect.objectContaining({ ok: true, grant: expect.objectContaining({ fence: 3, holderId: 'agent-c' }) }),
      ]);
      expect(log.appendSizes).toEqual([1, 4]);
      expect(await typesOf(log)).toEqual([
        'CoordinatorStarted',
        'LeaseGranted',
        'LeaseGranted',
        'LeaseReleased',
        'LeaseGranted',
      ]);
    });

    it('appends each command on its own with maxBatch 1, in call order', async () => {
      const { coordinator, log } = await openCoordinator({ maxBatch: 1 });
      const outcomes = await Promise.all(['a', 'b', 'c'].map((r) => coordinator.acquire(request(r, 'agent-a'))));
      expect(outcomes.map((o) => (o.ok ? o.grant.fence : 0))).toEqual([1, 2, 3]);
      expect(log.appendSizes).toEqual([1, 1, 1, 1]);
    });

    it('acknowledges a denial without appending anything', async () => {
      const { coordinator, log } = await openCoordinator();
      await coordinator.acquire(request('slot', 'agent-a'));
      const calls = log.appendCalls;
      expect(await coordinator.renew({ ...request('slot', 'agent-b'), fence: 1 })).toEqual({
        ok: false,
        reason: 'not-holder',
      });
      expect(log.appendCalls).toBe(calls);
    });

    it('refuses a bad command in a batch without affecting the others', async () => {
      const { coordinator } = await openCoordinator();
      const [first, reused, other] = await Promise.allSettled([
        coordinator.acquire({ resource: 'slot', holderId: 'agent-a', requestId: 'r-1' }),
        coordinator.acquire({ resource: 'other', holderId: 'agent-a', requestId: 'r-1' }),
        coordinator.acquire({ resource: 'third', holderId: 'agent-a', requestId: 'r-2' }),
      ]);
      expect(first).toMatchObject({ status: 'fulfilled', value: { ok: true, grant: { fence: 1 } } });
      expect(reused).toMatchObject({ status: 'rejected', reason: expect.any(ProtocolMisuseError) });
      expect(other).toMatchObject({ status: 'fulfilled', value: { ok: true, grant: { fence: 2 } } });
      expect(coordinator.status).toBe('ready');
    });
  });

  describe('pipelined appends', () => {
    /** Records the order in which outcomes settle. */
    const track = <T>(settled: string[], name: string, promise: Promise<T>): Promise<T> =>
      promise.then(
        (value) => (settled.push(name), value),
        (error: unknown) => {
          settled.push(name);
          throw error;
        },
      );

    it('decides the next batch while an append is in flight, expecting the version after it, and acknowledges in order', async () => {
      // Given the first batch's append is held in flight
      const { coordinator, log } = await openCoordinator();
      const release = log.holdAppends();
      const settled: string[] = [];
      const first = track(settled, 'first', coordinator.acquire(request('slot', 'agent-a')));
      await log.whenAppendsHeld(1);
      // When a second command arrives
      const second = track(settled, 'second', coordinator.acquire(request('other', 'agent-b')));
      await log.whenAppendsHeld(2);
      // Then it was decided and appended without waiting, and nothing is acknowledged yet
      expect(settled).toEqual([]);
      expect(coordinator.position).toBe(1);
      release();
      expect(await second).toMatchObject({ ok: true, grant: { fence: 2 } });
      expect(await first).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(settled).toEqual(['first', 'second']);
      expect(log.appendSizes).toEqual([1, 1, 1]);
      expect(await typesOf(log)).toEqual(['CoordinatorStarted', 'LeaseGranted', 'LeaseGranted']);
    });

    it('acknowledges a denial decided against a batch in flight only after that batch lands', async () => {
      const { coordinator, log } = await openCoordinator();
      const release = log.holdAppends();
      const settled: string[] = [];
      const grant = track(settled, 'grant', coordinator.acquire(request('slot', 'agent-a')));
      await log.whenAppendsHeld(1);
      const denial = track(settled, 'denial', coordinator.acquire(request('slot', 'agent-b')));
      await new Promise((resolve) => setImmediate(resolve)); // the denial's batch has been decided
      expect(settled).toEqual([]);
      release();
      expect(await denial).toEqual(expect.objectContaining({ ok: false, reason: 'held', heldBy: 'agent-a' }));
      expect(await grant).toMatchObject({ ok: true });
      expect(settled).toEqual(['grant', 'denial']);
    });

    it('refuses every later batch when an append in flight fails, and burns their fences at the next recovery', async () => {
      // Given two batches in flight, the first of which will fail
      const { coordinator, log } = await openCoordinator();
      const release = log.holdAppends();
      const first = coordinator.acquire(request('slot', 'agent-a'));
      await log.whenAppendsHeld(1);
      const second = coordinator.acquire(request('other', 'agent-b'));
      await log.whenAppendsHeld(2);
      log.failNextAppend(new EventLogUnavailableError('test', { message: 'disk full' }));
      // When the appends go through
      release();
      // Then neither outcome is acknowledged and both fences are burned
      const results = await Promise.allSettled([first, second]);
      expect(results).toEqual([
        { status: 'rejected', reason: unavailable('unhealthy') },
        { status: 'rejected', reason: unavailable('unhealthy') },
      ]);
      expect(coordinator.status).toBe('unhealthy');
      expect(coordinator.highestMintedFence).toBe(2);
      // and nothing of the later batch landed: it was decided on a version that never existed
      expect(await typesOf(log)).toEqual(['CoordinatorStarted']);
      const { coordinator: recovered } = await openCoordinator({
        log,
        burnFencesThrough: coordinator.highestMintedFence,
      });
      expect(recovered.recovery.recoveredFence).toBe(2);
    });

    it('keeps at most maxAppendsInFlight appends in flight and queues the rest', async () => {
      const { coordinator, log } = await openCoordinator({ maxAppendsInFlight: 2 });
      const release = log.holdAppends();
      const outcomes = [coordinator.acquire(request('a', 'agent-a'))];
      await log.whenAppendsHeld(1);
      outcomes.push(coordinator.acquire(request('b', 'agent-a')));
      await log.whenAppendsHeld(2);
      outcomes.push(coordinator.acquire(request('c', 'agent-a')));
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.appendCalls).toBe(3); // CoordinatorStarted, a, b: c waits for a slot
      release();
      expect((await Promise.all(outcomes)).map((o) => (o.ok ? o.grant.fence : 0))).toEqual([1, 2, 3]);
      expect(log.appendSizes).toEqual([1, 1, 1, 1]);
    });

    it('awaits each append before deciding the next batch when the log does not apply appends in call order', async () => {
      // Given a log that makes no ordering promise for concurrent appends
      const storage = createTestEventLogStorage();
      const held = createTestEventLog(storage);
      const unordered: TestEventLog = Object.assign(Object.create(held) as TestEventLog, { appendsInCallOrder: false });
      const { coordinator } = await openCoordinator({ log: unordered });
      const release = held.holdAppends();
      const first = coordinator.acquire(request('a', 'agent-a'));
      await held.whenAppendsHeld(1);
      // When a second command arrives while the first append is in flight
      const second = coordinator.acquire(request('b', 'agent-a'));
      await new Promise((resolve) => setImmediate(resolve));
      // Then it is not appended until the first resolved
      expect(held.appendCalls).toBe(2);
      release();
      expect(await first).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(await second).toMatchObject({ ok: true, grant: { fence: 2 } });
      expect(held.appendSizes).toEqual([1, 1, 1]);
    });
  });

  describe('input validation', () => {
    it("acquires with exactly the TTLs lease-fence's TTL rule accepts within the configured bounds", async () => {
      const bounds = { minTtlMillis: 100, maxTtlMillis: 60_000 };
      const { coordinator } = await openCoordinator({ ...bounds });
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.constantFrom(99, 100, 60_000, 60_001, 100.5, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53),
            fc.integer({ min: -10, max: 70_000 }),
            fc.double(),
          ),
          async (ttlMillis) => {
            const acquired = await coordinator.acquire({ ...request(`slot-${++n}`, 'agent-a'), ttlMillis }).then(
              (outcome) => outcome.ok,
              (error: unknown) => (error instanceof RangeError || error instanceof TypeError ? 'refused' : error),
            );
            expect(acquired).toBe(isTtlMillis(ttlMillis, bounds) ? true : 'refused');
          },
        ),
        { numRuns: 300, seed: 20261201 },
      );
    });

    it.each([
      ['acquire', 'resource', (c: DurableCoordinator) => c.acquire({ ...request('', 'agent-a') }), TypeError],
      [
        'acquire',
        'resource',
        (c: DurableCoordinator) => c.acquire({ ...request('x'.repeat(201), 'agent-a') }),
        RangeError,
      ],
      [
        'acquire',
        'holderId',
        (c: DurableCoordinator) => c.acquire({ resource: 'slot', holderId: 7 as unknown as string, requestId: 'r' }),
        TypeError,
      ],
      [
        'acquire',
        'ttlMillis',
        (c: DurableCoordinator) => c.acquire({ ...request('slot', 'agent-a'), ttlMillis: 0 }),
        RangeError,
      ],
      [
        'acquire',
        'ttlMillis',
        (c: DurableCoordinator) => c.acquire({ ...request('slot', 'agent-a'), ttlMillis: 1.5 }),
        RangeError,
      ],
      [
        'acquire',
        'ttlMillis',
        (c: DurableCoordinator) => c.acquire({ ...request('slot', 'agent-a'), ttlMillis: 60_001 }),
        RangeError,
      ],
      ['renew', 'fence', (c: DurableCoordinator) => c.renew({ ...request('slot', 'agent-a'), fence: 0 }), RangeError],
      [
        'release',
        'fence',
        (c: DurableCoordinator) => c.release({ resource: 'slot', holderId: 'agent-a', fence: Number.NaN }),
        RangeError,
      ],
      [
        'recordRejection',
        'seq',
        (c: DurableCoordinator) =>
          c.recordRejection({
            gateId: 'g',
            resource: 'slot',
            seq: -1,
            kind: 'stale',
            rejected: { holderId: 'a', fence: 1 },
            current: { holderId: 'b', fence: 2 },
          }),
        RangeError,
      ],
      [
        'admitFence',
        'gateId',
        (c: DurableCoordinator) => c.admitFence({ gateId: ' g', resource: 'slot', holderId: 'a', fence: 1 }),
        RangeError,
      ],
    ])('%s refuses a malformed %s, burns no fence and appends nothing', async (api, field, call, type) => {
      const { coordinator, log } = await openCoordinator({ maxTtlMillis: 60_000 });
      const error = await call(coordinator).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toContain(`DurableCoordinator.${api}: ${field}`);
      expect(await log.version()).toBe(1);
      expect((await coordinator.acquire(request('slot', 'agent-a'))).ok && coordinator.issuedFence).toBe(1);
    });
  });

  describe('when an append fails', () => {
    it('acknowledges nothing of the batch, refuses later calls, and reports itself unhealthy', async () => {
      // Given a coordinator whose next append fails
      const statuses: string[] = [];
      const { coordinator, log } = await openCoordinator({ onStatusChange: (status) => statuses.push(status) });
      await coordinator.acquire(request('slot', 'agent-a'));
      log.failNextAppend(new EventLogUnavailableError('test', { message: 'disk full' }));
      // When two commands share the failing batch
      const results = await Promise.allSettled([
        coordinator.acquire(request('b', 'agent-a')),
        coordinator.acquire(request('slot', 'agent-b')),
      ]);
      // Then neither is acknowledged (not even the denial), and it stops
      expect(results).toEqual([
        { status: 'rejected', reason: unavailable('unhealthy') },
        { status: 'rejected', reason: unavailable('unhealthy') },
      ]);
      expect(coordinator.status).toBe('unhealthy');
      expect(statuses).toEqual(['unhealthy']);
      await expect(coordinator.acquire(request('c', 'agent-a'))).rejects.toEqual(unavailable('unhealthy'));
      expect(() => coordinator.leases()).toThrow(CoordinatorUnavailableError);
      expect(coordinator.position).toBe(2);
      expect(await log.version()).toBe(2);
    });

    it('becomes superseded when another writer appended first, and stops granting', async () => {
      const storage = createTestEventLogStorage();
      const { coordinator: first } = await openCoordinator({ log: createTestEventLog(storage) });
      const { coordinator: standby } = await openCoordinator({ log: createTestEventLog(storage) });
      const error = await first.acquire(request('slot', 'agent-a')).catch((e: unknown) => e);
      expect(error).toEqual(unavailable('superseded'));
      expect((error as Error).cause).toBeInstanceOf(ExpectedVersionConflictError);
      expect(first.status).toBe('superseded');
      expect(await standby.acquire(request('slot', 'agent-b'))).toMatchObject({ ok: true, grant: { fence: 1 } });
    });

    it('burns the fences of an append with an unknown outcome when the next recovery is given its highestMintedFence', async () => {
      // Given fence 1 acknowledged and fence 2 minted by an append that failed
      const { coordinator, log } = await openCoordinator();
      await coordinator.acquire(request('slot', 'agent-a'));
      log.failNextAppend(new EventLogUnavailableError('test', { message: 'timeout' }));
      await expect(coordinator.acquire(request('other', 'agent-b'))).rejects.toEqual(unavailable('unhealthy'));
      expect(coordinator.highestMintedFence).toBe(2);
      // When a new coordinator recovers from the same log, burning through the failed one's fences (as the supervisor does)
      const { coordinator: recovered } = await openCoordinator({
        log,
        burnFencesThrough: coordinator.highestMintedFence,
      });
      // Then fence 2 is never handed out
      expect(recovered.recovery.recoveredFence).toBe(2);
      expect(await recovered.acquire(request('other', 'agent-b', 'again'))).toMatchObject({
        ok: true,
        grant: { fence: 3 },
      });
    });

    it('finds the grant in the log when the failed append had in fact landed', async () => {
      const { coordinator, log } = await openCoordinator();
      log.failNextAppend(new EventLogUnavailableError('test', { message: 'timeout after write' }), { persist: true });
      await expect(coordinator.acquire(request('slot', 'agent-a', 'r-1'))).rejects.toEqual(unavailable('unhealthy'));
      const { coordinator: recovered } = await openCoordinator({ log: createTestEventLog(log.storage) });
      expect(recovered.leases()).toEqual([
        expect.objectContaining({ resource: 'slot', holderId: 'agent-a', fence: 1, inGrace: true }),
      ]);
      expect(await recovered.acquire(request('slot', 'agent-a', 'r-1'))).toMatchObject({
        ok: true,
        grant: { fence: 1 },
      });
    });
  });

  describe('restart', () => {
    it('restores the fence counter, the holders and the replay cache, and honours a live lease for its grace', async () => {
      // Given boot 1 granted a 10 s lease at 1000 and was last seen alive at 4000 (a checkpoint)
      const storage = createTestEventLogStorage();
      const boot1 = bootClock(1000);
      const { coordinator: dead } = await openCoordinator({ log: createTestEventLog(storage), clock: boot1 });
      const granted = await dead.acquire(request('slot', 'agent-a', 'r-1'));
      boot1.advance(3000);
      expect(await dead.checkpoint()).toBe(true);
      // When boot 2 recovers (its clock reads 500) without boot 1 shutting down
      const boot2 = bootClock(500);
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage), clock: boot2 });
      // Then the lease is carried with the 7000 ms it had left
      expect(granted).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(coordinator.recovery).toMatchObject({
        eventsReplayed: 3,
        recoveredFence: 1,
        carriedLeases: 1,
        graceDeadline: Instant.of(7500, boot2.domain),
      });
      expect(coordinator.leases()).toEqual([
        expect.objectContaining({
          fence: 1,
          holderId: 'agent-a',
          inGrace: true,
          expiresAt: Instant.of(7500, boot2.domain),
        }),
      ]);
      expect(await coordinator.acquire(request('slot', 'agent-b'))).toEqual({
        ok: false,
        reason: 'held',
        heldBy: 'agent-a',
        retryAfterMillis: 7000,
      });
      expect(await coordinator.acquire(request('slot', 'agent-a', 'r-1'))).toMatchObject({
        ok: true,
        grant: { fence: 1, coordinatorExpiresAt: Instant.of(7500, boot2.domain) },
      });
      expect(await coordinator.renew({ ...request('slot', 'agent-a', 'r-2'), fence: 1 })).toMatchObject({
        ok: true,
        grant: { fence: 1 },
      });
      expect(coordinator.leases()[0]?.inGrace).toBe(false);
      expect(await coordinator.acquire(request('other', 'agent-b'))).toMatchObject({ ok: true, grant: { fence: 2 } });
    });

    it.each([
      ['replaying the log', 10_000],
      ['from a snapshot', 3],
    ])(
      'answers a renewal retried after a restart (%s) with the grant it produced, appending nothing',
      async (_how, snapshotEvery) => {
        // Given boot 1 granted agent-a fence 1 and renewed it with n-1
        const storage = createTestEventLogStorage();
        const boot1 = bootClock(0);
        const { coordinator: dead } = await openCoordinator({
          log: createTestEventLog(storage),
          clock: boot1,
          snapshotEvery,
        });
        await dead.acquire(request('slot', 'agent-a', 'r-1'));
        boot1.advance(2000);
        const renewed = await dead.renew({ ...request('slot', 'agent-a', 'n-1'), fence: 1 });
        expect(renewed).toMatchObject({
          ok: true,
          grant: { requestId: 'n-1', coordinatorExpiresAt: Instant.of(12_000, boot1.domain) },
        });
        expect(await dead.renew({ ...request('slot', 'agent-a', 'n-1'), fence: 1 })).toEqual(renewed);
        // When boot 2 recovers and the reply-less retry of n-1 arrives
        const boot2 = bootClock(0);
        const { coordinator, log } = await openCoordinator({
          log: createTestEventLog(storage),
          clock: boot2,
          snapshotEvery,
        });
        const before = await log.version();
        expect(coordinator.recovery.fromSnapshot).toBe(snapshotEvery === 3);
        boot2.advance(500);
        const retried = await coordinator.renew({ ...request('slot', 'agent-a', 'n-1'), fence: 1 });
        // Then it gets the lease as it stands (carried, in grace) and nothing is appended
        expect(retried).toMatchObject({
          ok: true,
          grant: { fence: 1, requestId: 'n-1', coordinatorExpiresAt: Instant.of(10_000, boot2.domain) },
        });
        expect((await eventsOf(log)).slice(before).map((e) => e.type)).toEqual([]);
        expect((await eventsOf(log)).filter((e) => e.type === 'LeaseRenewed')).toHaveLength(1);
      },
    );

    it("cannot keep a dead holder's lease alive by restarting faster than the ttl", async () => {
      // Given a 10 s lease, and boots that each live 3 s (checkpointing) before dying
      const storage = createTestEventLogStorage();
      const first = bootClock(0);
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage), clock: first });
      await coordinator.acquire(request('slot', 'agent-a'));
      const graces: number[] = [];
      let clock = first;
      let current = coordinator;
      for (let boot = 0; boot < 4; boot += 1) {
        clock.advance(3000);
        await current.checkpoint();
        clock = bootClock(0);
        ({ coordinator: current } = await openCoordinator({ log: createTestEventLog(storage), clock }));
        graces.push(current.recovery.graceDeadline.millis);
      }
      // Then each restart gives less grace, and the lease ends within one ttl of uptime
      expect(graces).toEqual([7000, 4000, 1000, 0]);
      expect(await current.acquire(request('slot', 'agent-b'))).toMatchObject({ ok: true, grant: { fence: 2 } });
    });

    it('never issues a fence twice across restarts', async () => {
      const storage = createTestEventLogStorage();
      const fences: number[] = [];
      for (let boot = 0; boot < 5; boot += 1) {
        const { coordinator, clock } = await openCoordinator({
          log: createTestEventLog(storage),
          defaultTtlMillis: 100,
        });
        for (let i = 0; i < 3; i += 1) {
          const outcome = await coordinator.acquire(request(`r-${boot}-${i}`, 'agent-a'));
          if (outcome.ok) fences.push(outcome.grant.fence);
          clock.advance(50);
        }
      }
      expect(fences).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    });

    it('records a rejection once, even when the gate repeats it after a restart', async () => {
      // Given fences 1 (a, released) and 2 (b) issued on 'slot', and a gate's report of a's late write
      const storage = createTestEventLogStorage();
      const report = reportOfALateWrite(1);
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage) });
      await handOverSlot(coordinator);
      expect(await coordinator.recordRejection(report)).toEqual({ ok: true, duplicate: false });
      // When a new boot receives it again / Then it is a duplicate
      const { coordinator: next } = await openCoordinator({ log: createTestEventLog(storage) });
      expect(await next.recordRejection(report)).toEqual({ ok: true, duplicate: true });
      expect(next.rejections()).toEqual([expect.objectContaining({ seq: 1, position: 5, gateId: 'gate-1' })]);
    });

    it('tells a gate at its start the latest grant on its resource (holder while current) and its last recorded refusal seq', async () => {
      // Given fences 1 (a, released) and 2 (b, current) on 'slot', and gate-1's refusal #1 of a's late write
      const { coordinator } = await openCoordinator();
      expect(coordinator.gateRecovery('gate-1', 'slot')).toEqual({ latestGrant: undefined, lastRejectionSeq: 0 });
      await handOverSlot(coordinator);
      await coordinator.recordRejection(reportOfALateWrite(1));
      // Then gate-1 learns fence 2 and b, and seq 1; another gate no seq; once b released, no holder
      expect(coordinator.gateRecovery('gate-1', 'slot')).toEqual({
        latestGrant: { fence: 2, holderId: 'b' },
        lastRejectionSeq: 1,
      });
      expect(coordinator.gateRecovery('gate-2', 'slot')).toMatchObject({ lastRejectionSeq: 0 });
      await coordinator.release({ resource: 'slot', holderId: 'b', fence: 2 });
      expect(coordinator.gateRecovery('gate-1', 'slot')).toEqual({
        latestGrant: { fence: 2, holderId: undefined },
        lastRejectionSeq: 1,
      });
    });

    it('refuses other content under a recorded seq after a restart from a snapshot, appending nothing', async () => {
      // Given a recorded rejection, covered by a snapshot
      const storage = createTestEventLogStorage();
      const report = reportOfALateWrite(3);
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage), snapshotEvery: 1 });
      await handOverSlot(coordinator);
      await coordinator.recordRejection(report);
      await coordinator.close();
      // When a new boot, recovered from that snapshot, receives the seq with another rejected holder
      const { coordinator: next, log } = await openCoordinator({ log: createTestEventLog(storage) });
      const before = next.position;
      const outcome = await next.recordRejection({ ...report, rejected: { holderId: 'c', fence: 1 } });
      // Then it is refused as a seq-conflict, and the log did not grow
      expect(next.recovery.fromSnapshot).toBe(true);
      expect(outcome).toEqual({
        ok: false,
        reason: 'seq-conflict',
        message: expect.stringContaining('seq 3') as string,
      });
      expect((await eventsOf(log)).slice(before).map((e) => e.type)).toEqual([]);
    });
  });

  describe('gate reports that cannot be true', () => {
    it('refuses rejections and admits naming fences never issued, appending nothing', async () => {
      // Arrange: fence 1 issued on 'slot'
      const outcomes: [string, { ok: boolean; reason?: string }][] = [];
      const { coordinator, log } = await openCoordinator({
        onOutcome: (type, outcome) => outcomes.push([type, outcome]),
      });
      await coordinator.acquire(request('slot', 'agent-a'));
      const before = await log.version();
      // Act
      const rejection = await coordinator.recordRejection({
        gateId: 'g',
        resource: 'slot',
        seq: 1,
        kind: 'stale',
        rejected: { holderId: 'agent-a', fence: 1 },
        current: { holderId: 'x', fence: 900_000_000 },
      });
      const admit = await coordinator.admitFence({
        gateId: 'g',
        resource: 'slot',
        holderId: 'nobody',
        fence: 999_999_999,
      });
      // Assert
      expect(rejection).toMatchObject({ ok: false, reason: 'implausible', field: 'current.fence' });
      expect(admit).toMatchObject({ ok: false, reason: 'implausible', field: 'fence' });
      expect((await eventsOf(log)).slice(before).map((e) => e.type)).toEqual([]);
      expect(outcomes.slice(-2)).toEqual([
        ['RecordFenceRejection', { ok: false, reason: 'implausible' }],
        ['AdmitFence', { ok: false, reason: 'implausible' }],
      ]);
    });
  });

  describe('snapshots', () => {
    it('saves a snapshot every N events, and recovery replays only the events after it', async () => {
      // Given 30 grants with a snapshot every 10 events
      const storage = createTestEventLogStorage();
      const saved: number[] = [];
      const { coordinator } = await openCoordinator({
        log: createTestEventLog(storage),
        snapshotEvery: 10,
        onSnapshot: ({ position }) => saved.push(position),
      });
      for (let i = 0; i < 30; i += 1) await coordinator.acquire(request(`r-${i}`, 'agent-a'));
      await coordinator.close();
      // When recovering
      const log = createTestEventLog(storage);
      const { coordinator: recovered } = await openCoordinator({ log });
      // Then it started from the latest snapshot, and agrees with a full replay
      expect(saved.length).toBeGreaterThanOrEqual(3);
      expect(recovered.recovery.fromSnapshot).toBe(true);
      expect(recovered.recovery.eventsReplayed).toBeLessThan(10);
      const full = await replayLog(log, { ignoreSnapshot: true });
      expect(recovered.issuedFence).toBe(full.state.table.issuedFence);
      expect(recovered.leases()).toEqual(
        [...full.state.table.leases()].map((lease) =>
          expect.objectContaining({ resource: lease.resource, fence: lease.fence, holderId: lease.holderId }),
        ),
      );
      const types = await typesOf(log);
      expect(types.filter((t) => t === 'SnapshotTaken').length).toBe(saved.length);
    });
  });

  describe('timers', () => {
    it('expires a lease at its expiry with a LeaseExpired event', async () => {
      const { coordinator, log } = await openCoordinator({
        clock: createMonotonicClock(`mono-${++bootCounter}`),
        runTimers: true,
        defaultTtlMillis: 20,
      });
      await coordinator.acquire(request('slot', 'agent-a'));
      const events = await takeUntil(log.subscribe({ after: coordinator.position }), coordinator.position + 1);
      expect(events.map((r) => r.event)).toEqual([
        expect.objectContaining({
          type: 'LeaseExpired',
          data: expect.objectContaining({ resource: 'slot', fence: 1 }),
        }),
      ]);
      expect(coordinator.leases()).toEqual([]);
    });

    it('checkpoints while a lease is live and nothing else is appended', async () => {
      const { coordinator, log } = await openCoordinator({
        clock: createMonotonicClock(`mono-${++bootCounter}`),
        runTimers: true,
        checkpointIntervalMillis: 10,
      });
      await coordinator.acquire(request('slot', 'agent-a'));
      const [next] = await takeUntil(log.subscribe({ after: coordinator.position }), coordinator.position + 1);
      expect(next?.event.type).toBe('CoordinatorCheckpointed');
    });
  });

  describe('after the whole log was lost', () => {
    it("raises the fence counter above a gate's reported floor, durably, so no earlier fence is issued again", async () => {
      // Given a coordinator on an empty log (the old one is gone) and a gate whose floor is fence 57
      const storage = createTestEventLogStorage();
      const { coordinator } = await openCoordinator({ log: createTestEventLog(storage), lostFenceMarginFences: 1000 });
      // When the gate reports it, twice
      const first = await coordinator.reportFloor({
        gateId: 'gate-1',
        resource: 'slot',
        holderId: 'agent-a',
        fence: 57,
      });
      const again = await coordinator.reportFloor({
        gateId: 'gate-1',
        resource: 'slot',
        holderId: 'agent-a',
        fence: 57,
      });
      // Then the counter is above it and its margin, once, and survives a restart
      expect([first, again]).toEqual([
        { ok: true, raised: true, fenceCounter: 1057 },
        { ok: true, raised: false, fenceCounter: 1057 },
      ]);
      expect(await coordinator.acquire(request('slot', 'agent-b'))).toMatchObject({ ok: true, grant: { fence: 1058 } });
      const { coordinator: next } = await openCoordinator({ log: createTestEventLog(storage) });
      expect(next.recovery.recoveredFence).toBe(1058);
      expect(await next.renew({ ...request('slot', 'agent-a', 'n-1'), fence: 57 })).toEqual({
        ok: false,
        reason: 'expired',
      });
    });

    it('refuses acquisitions for floorWaitMillis after starting on a log that issued no fence, and only then', async () => {
      // Given a fresh log with a 1 000 ms floor wait
      const storage = createTestEventLogStorage();
      const { coordinator, clock } = await openCoordinator({ log: createTestEventLog(storage), floorWaitMillis: 1000 });
      // Then acquisitions wait (retryable), a floor report goes through, and grants start after the wait
      await expect(coordinator.acquire(request('slot', 'agent-a'))).rejects.toEqual(unavailable('awaiting-floors'));
      expect(
        await coordinator.reportFloor({ gateId: 'gate-1', resource: 'slot', holderId: 'agent-a', fence: 5 }),
      ).toMatchObject({ raised: true });
      clock.advance(1000);
      expect(await coordinator.acquire(request('slot', 'agent-a'))).toMatchObject({
        ok: true,
        grant: { fence: 1_000_006 },
      });
      // And a restart on a log that has issued fences does not wait
      const { coordinator: next } = await openCoordinator({ log: createTestEventLog(storage), floorWaitMillis: 1000 });
      expect(await next.acquire(request('other', 'agent-b'))).toMatchObject({ ok: true });
    });
  });

  describe('grace checkpoints', () => {
    it('checkpoints at the grace interval while a carried lease is in grace, however long the usual interval', async () => {
      // Given a lease carried into a new boot whose usual checkpoint interval is an hour
      const storage = createTestEventLogStorage();
      const { coordinator: dead } = await openCoordinator({ log: createTestEventLog(storage) });
      await dead.acquire(request('slot', 'agent-a'));
      const { coordinator, log } = await openCoordinator({
        log: createTestEventLog(storage),
        clock: createMonotonicClock(`mono-${++bootCounter}`),
        runTimers: true,
        checkpointIntervalMillis: 3_600_000,
        graceCheckpointIntervalMillis: 10,
      });
      expect(coordinator.leases()).toEqual([expect.objectContaining({ inGrace: true })]);
      // When nothing is appended, Then the boot records its uptime on its own
      const [next] = await takeUntil(log.subscribe({ after: coordinator.position }), coordinator.position + 1);
      expect(next?.event).toMatchObject({ type: 'CoordinatorCheckpointed', data: { bootId: coordinator.bootId } });
    });
  });

  describe('checkpoint', () => {
    it('records uptime only while a lease is live, unless heartbeat is on', async () => {
      const { coordinator } = await openCoordinator();
      expect(await coordinator.checkpoint()).toBe(false);
      await coordinator.acquire(request('slot', 'agent-a'));
      expect(await coordinator.checkpoint()).toBe(true);
      const { coordinator: heartbeat, log } = await openCoordinator({ heartbeat: true });
      expect(await heartbeat.checkpoint()).toBe(true);
      expect(await typesOf(log)).toEqual(['CoordinatorStarted', 'CoordinatorCheckpointed']);
    });
  });

  describe('close', () => {
    it('finishes the commands it accepted, then refuses new ones', async () => {
      const { coordinator } = await openCoordinator();
      const pending = coordinator.acquire(request('slot', 'agent-a'));
      const closed = coordinator.close();
      await expect(coordinator.acquire(request('other', 'agent-a'))).rejects.toEqual(unavailable('closed'));
      expect(await pending).toMatchObject({ ok: true });
      await closed;
      expect(coordinator.status).toBe('closed');
    });
  });

  describe('hooks', () => {
    it('reports each append with its sizes and each outcome with its reason', async () => {
      const appends: { events: number; commands: number }[] = [];
      const outcomes: [string, { ok: boolean; reason?: string }][] = [];
      const { coordinator } = await openCoordinator({
        onAppend: ({ events, commands }) => appends.push({ events, commands }),
        onOutcome: (type, outcome) => outcomes.push([type, outcome]),
      });
      await Promise.all([
        coordinator.acquire(request('slot', 'agent-a')),
        coordinator.acquire(request('slot', 'agent-b')),
      ]);
      expect(appends).toEqual([{ events: 1, commands: 2 }]);
      expect(outcomes).toEqual([
        ['AcquireLease', { ok: true }],
        ['AcquireLease', { ok: false, reason: 'held' }],
      ]);
    });

    it("appends a gate's batch of refusals in one append, and reports one RecordFenceRejection outcome per item", async () => {
      const appends: { events: number; commands: number }[] = [];
      const outcomes: [string, { ok: boolean; reason?: string }][] = [];
      const { coordinator, log } = await openCoordinator({
        onAppend: ({ events, commands }) => appends.push({ events, commands }),
        onOutcome: (type, outcome) => outcomes.push([type, outcome]),
      });
      await handOverSlot(coordinator);
      await coordinator.recordRejection(reportOfALateWrite(1));
      appends.length = 0;
      outcomes.length = 0;
      const before = coordinator.position;
      const item = ({ gateId: _gate, resource: _resource, ...rest }: ReturnType<typeof reportOfALateWrite>) => rest;

      const outcome = await coordinator.recordRejections({
        gateId: 'gate-1',
        resource: 'slot',
        items: [1, 2, 3, 5].map((seq) => item(reportOfALateWrite(seq))),
      });

      expect(outcome).toEqual({
        ok: true,
        items: [
          { ok: true, duplicate: true },
          { ok: true, duplicate: false },
          { ok: true, duplicate: false },
          { ok: true, duplicate: false },
        ],
      });
      expect(appends).toEqual([{ events: 4, commands: 1 }]);
      expect((await eventsOf(log)).slice(before).map((e) => e.type)).toEqual([
        'FenceRejected',
        'FenceRejected',
        'RejectionsMissing',
        'FenceRejected',
      ]);
      expect(outcomes).toEqual(Array.from({ length: 4 }, () => ['RecordFenceRejection', { ok: true }]));
      await expect(
        coordinator.recordRejections({ gateId: 'gate-1', resource: 'slot', items: [item(reportOfALateWrite(1.5))] }),
      ).rejects.toThrow(/items\[0\]\.seq/);
    });

    it("hands over a batch's events once its append is posted, before it is durable", async () => {
      const posted: (readonly CoordinatorEvent[])[] = [];
      const { coordinator, log } = await openCoordinator({ onAppendPosted: (events) => posted.push(events) });
      const release = log.holdAppends();
      let settled = false;
      const granted = coordinator.acquire(request('slot', 'agent-a')).finally(() => (settled = true));
      await log.whenAppendsHeld(1);
      expect(posted.map((events) => events.map((e) => e.type))).toEqual([['LeaseGranted']]);
      expect(posted[0]![0]).toMatchObject({ data: { resource: 'slot', holderId: 'agent-a', fence: 1 } });
      expect(settled).toBe(false);
      release();
      expect(await granted).toMatchObject({ ok: true, grant: { fence: 1 } });
    });
  });
});
