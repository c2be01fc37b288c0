/**
 * The standby scenarios: two coordinators on one log, written once and run on every log that a
 * standby can follow (coordinator-core's test log, and in `test/esdb` the SQLite file and the
 * EventStoreDB adapter). The active coordinator grants; a {@link StandbyCoordinator} follows the
 * log with a catch-up subscription and takes over when the active one falls silent. Time is
 * driven by manual clocks; nothing waits on a timer.
 *
 * @see ../standby-coordinator.ts, docs/design.md § "The event-sourced coordinator" (single writer)
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { createManualClock } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableCoordinator } from '../durable-coordinator.js';
import { CoordinatorUnavailableError } from '../errors.js';
import type { EventLog, ReadRange } from '../ports/event-log.js';
import { readPagesOf } from '../ports/paged-read.js';
import { StandbyCoordinator } from '../standby-coordinator.js';
import { readAll } from './event-log-contract.js';

/** Two live handles on one fresh, empty log: the active coordinator's and the standby's. */
export interface SharedLog {
  readonly active: EventLog;
  readonly standby: EventLog;
}

const NAMESPACE = 'default';
const TTL_MILLIS = 10_000;
const SILENCE_MILLIS = 3_000;

const grantedFences = (records: readonly RecordedEvent[]): number[] =>
  records.flatMap((r) => (r.event.type === 'LeaseGranted' ? [r.event.data.fence] : []));

/**
 * Registers the standby scenarios as a vitest `describe` named after `name`.
 * @param openSharedLog - Opens two handles on one fresh, empty log for each test; the suite closes them.
 */
export function describeStandbyScenarios(name: string, openSharedLog: () => Promise<SharedLog>): void {
  describe(`standby coordinator on ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** An active coordinator that has granted `slot-1` to agent-a (fence 1), and a standby that has seen it. */
    async function activeWithStandby() {
      const shared = await openSharedLog();
      cleanups.push(
        () => shared.active.close(),
        () => shared.standby.close(),
      );
      const activeClock = createManualClock('boot-active', { start: 1_000 });
      const active = await DurableCoordinator.open({
        log: shared.active,
        namespace: NAMESPACE,
        clock: activeClock,
        defaultTtlMillis: TTL_MILLIS,
        runTimers: false,
      });
      cleanups.push(() => active.close());
      const granted = await active.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });
      const standbyClock = createManualClock('boot-standby', { start: 50_000 });
      const standby = StandbyCoordinator.follow({
        log: shared.standby,
        namespace: NAMESPACE,
        clock: standbyClock,
        defaultTtlMillis: TTL_MILLIS,
        runTimers: false,
        silenceMillis: SILENCE_MILLIS,
      });
      cleanups.push(() => standby.close());
      await standby.waitForPosition(active.position);
      return { shared, active, granted, standby, standbyClock };
    }

    it('takes over a silent active coordinator; the deposed one refuses to grant and no fence is issued twice', async () => {
      // Given an active coordinator that granted fence 1, followed by a standby
      const { shared, active, granted, standby, standbyClock } = await activeWithStandby();
      expect(granted).toMatchObject({ ok: true, grant: { fence: 1 } });

      // When the active one is paused and the standby's clock passes the silence threshold
      standbyClock.advance(SILENCE_MILLIS);
      const successor = await standby.takeOverIfSilent();
      expect(successor).toBeInstanceOf(DurableCoordinator);
      cleanups.push(() => successor!.close());

      // Then the successor carries the lease and grants above every fence issued before
      expect(successor!.recovery).toMatchObject({ recoveredFence: 1, carriedLeases: 1 });
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

      // And when the old coordinator resumes, its next append conflicts: it grants nothing and reports itself superseded
      const late = await active
        .acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-1' })
        .catch((e: unknown) => e);
      expect(late).toBeInstanceOf(CoordinatorUnavailableError);
      expect(late).toMatchObject({ code: 'coordinator-unavailable', reason: 'superseded' });
      expect(active.status).toBe('superseded');
      await expect(active.acquire({ resource: 'slot-4', holderId: 'agent-c', requestId: 'c-2' })).rejects.toMatchObject(
        { reason: 'superseded' },
      );

      // And the log holds each fence once, and nothing from the old boot after the takeover
      const records = await readAll(shared.active.read({ from: 1 }));
      expect(grantedFences(records)).toEqual([1, 2]);
      const takeover = records.findIndex(
        (r) => r.event.type === 'CoordinatorStarted' && r.event.data.bootId === 'boot-standby',
      );
      expect(takeover).toBeGreaterThan(0);
      expect(records.slice(takeover).every((r) => r.event.data.bootId === 'boot-standby')).toBe(true);
    });

    it('does not take over while the active coordinator keeps appending', async () => {
      // Given a standby that has waited most of the silence threshold
      const { active, standby, standbyClock } = await activeWithStandby();
      standbyClock.advance(SILENCE_MILLIS - 1);

      // When the active coordinator appends, the standby sees it, and its clock moves on past the threshold from the start
      await active.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' });
      await standby.waitForPosition(active.position);
      standbyClock.advance(SILENCE_MILLIS - 1);

      // Then it does not take over, and the active coordinator keeps granting
      expect(await standby.takeOverIfSilent()).toBeUndefined();
      expect(await active.acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-1' })).toMatchObject({
        ok: true,
        grant: { fence: 3 },
      });
      expect(active.status).toBe('ready');
    });

    it('loses a takeover that races an append of the active coordinator, and keeps following', async () => {
      // Given a silent active coordinator, and a standby log handle on which the active coordinator
      // appends right before the standby's CoordinatorStarted
      const { shared, active, standby, standbyClock } = await activeWithStandby();
      const raced = raceBeforeFirstAppend(shared.standby, () =>
        active.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' }),
      );
      const racingStandby = StandbyCoordinator.follow({
        log: raced.log,
        namespace: NAMESPACE,
        clock: standbyClock,
        defaultTtlMillis: TTL_MILLIS,
        runTimers: false,
        silenceMillis: SILENCE_MILLIS,
      });
      cleanups.push(() => racingStandby.close());
      await standby.close();
      await racingStandby.waitForPosition(active.position);
      standbyClock.advance(SILENCE_MILLIS);

      // When it tries to take over
      const successor = await racingStandby.takeOverIfSilent();

      // Then the active coordinator's append won: it is still ready and its grant stands; the standby follows on
      expect(successor).toBeUndefined();
      expect(await raced.racedOutcome).toMatchObject({ ok: true, grant: { fence: 2 } });
      expect(active.status).toBe('ready');
      await racingStandby.waitForPosition(active.position);
      expect(racingStandby.position).toBe(active.position);
      expect(grantedFences(await readAll(shared.active.read({ from: 1 })))).toEqual([1, 2]);
    });
  });
}

/**
 * Wraps `log` so that its first append runs `race` to completion first: another writer appends
 * in the gap between this writer's read of the version and its append.
 */
function raceBeforeFirstAppend<T>(
  log: EventLog,
  race: () => Promise<T>,
): { readonly log: EventLog; readonly racedOutcome: Promise<T> } {
  let resolveOutcome!: (outcome: T) => void;
  const racedOutcome = new Promise<T>((resolve) => {
    resolveOutcome = resolve;
  });
  let raced = false;
  return {
    racedOutcome,
    log: {
      name: log.name,
      append: async (events, options) => {
        if (!raced) {
          raced = true;
          resolveOutcome(await race());
        }
        return log.append(events, options);
      },
      read: (range) => log.read(range),
      readPages: (range: ReadRange) => readPagesOf(log, range),
      version: () => log.version(),
      subscribe: (options) => log.subscribe(options),
      latestSnapshot: () => log.latestSnapshot(),
      saveSnapshot: (snapshot) => log.saveSnapshot(snapshot),
      close: () => log.close(),
    },
  };
}
