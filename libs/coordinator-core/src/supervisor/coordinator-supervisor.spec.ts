import { createManualClock, type ManualClock } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableCoordinator } from '../durable-coordinator.js';
import { CoordinatorUnavailableError } from '../errors.js';
import { EventLogCorruptError, EventLogUnavailableError } from '../ports/event-log-errors.js';
import type { EventLog, RecordedEvent } from '../ports/event-log.js';
import { createTestEventLog, type TestEventLog } from '../testing/test-event-log.js';
import {
  CoordinatorNotServingError,
  CoordinatorSupervisor,
  type CoordinatorSupervisorOptions,
  type SupervisorEvent,
  type SupervisorState,
} from './coordinator-supervisor.js';

/** The service's defaults (`apps/coordinator/src/config/config.ts`): waits of 100 ms doubling up to 5 s. */
const REOPEN = { reopenInitialDelayMillis: 100, reopenMaxDelayMillis: 5_000 };

/** Timers that run only when the test fires them. */
class ManualTimers {
  private readonly timers: { readonly delayMillis: number; readonly run: () => void; done: boolean }[] = [];

  readonly schedule = (delayMillis: number, run: () => void) => {
    const timer = { delayMillis, run, done: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.done = true;
      },
    };
  };

  /** Delays of every timer scheduled so far, in order. */
  get delays(): number[] {
    return this.timers.map((t) => t.delayMillis);
  }

  /** Timers scheduled and neither fired nor cancelled. */
  get pending(): number {
    return this.timers.filter((t) => !t.done).length;
  }

  /** Runs the oldest pending timer. */
  fireNext(): void {
    const timer = this.timers.find((t) => !t.done);
    if (timer === undefined) throw new Error('no pending timer');
    timer.done = true;
    timer.run();
  }
}

/** A log in front of `inner` that fails every call with EventLogUnavailableError while `down`. */
function switchableLog(inner: EventLog): EventLog & { down: boolean } {
  const unavailable = () => new EventLogUnavailableError(inner.name, { message: 'connection refused' });
  const log: EventLog & { down: boolean } = {
    down: false,
    name: inner.name,
    append: (events, options) => (log.down ? Promise.reject(unavailable()) : inner.append(events, options)),
    read: (range) => (log.down ? failingIterable(unavailable()) : inner.read(range)),
    version: () => (log.down ? Promise.reject(unavailable()) : inner.version()),
    subscribe: (options) => inner.subscribe(options),
    latestSnapshot: () => (log.down ? Promise.reject(unavailable()) : inner.latestSnapshot()),
    saveSnapshot: (snapshot) => inner.saveSnapshot(snapshot),
    close: () => inner.close(),
  };
  return log;
}

function failingIterable(error: unknown): AsyncIterable<RecordedEvent> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
  };
}

const supervisors: CoordinatorSupervisor[] = [];
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.close()));
});

/** Boot ids handed out so far, across supervisors (two on one log must never share one). */
let bootsStarted = 0;

/** Options of a supervisor under test, beyond the log. */
type Setup = Partial<
  Pick<
    CoordinatorSupervisorOptions,
    'role' | 'takeoverAfterMillis' | 'reopenInitialDelayMillis' | 'reopenMaxDelayMillis'
  >
> & { readonly heartbeat?: boolean };

/** A supervisor on `log` with manual timers, zero jitter (waits of exactly half the ceiling), manual clocks, boot ids `boot-<N>`, and the events it reported. */
function host(log: EventLog = createTestEventLog(), setup: Setup = {}) {
  const timers = new ManualTimers();
  const clocks = new Map<string, ManualClock>();
  const events: SupervisorEvent[] = [];
  const watchers = new Set<(event: SupervisorEvent) => void>();
  const outcomes: { command: string; ok: boolean; reason?: string }[] = [];
  /** Resolves once an event of type `type` was reported (before or after the call). */
  const observed = <T extends SupervisorEvent['type']>(type: T): Promise<Extract<SupervisorEvent, { type: T }>> => {
    const seen = events.find((e) => e.type === type);
    if (seen !== undefined) return Promise.resolve(seen as Extract<SupervisorEvent, { type: T }>);
    return new Promise((resolve) => {
      const watch = (event: SupervisorEvent): void => {
        if (event.type !== type) return;
        watchers.delete(watch);
        resolve(event as Extract<SupervisorEvent, { type: T }>);
      };
      watchers.add(watch);
    });
  };
  const { heartbeat, ...options } = setup;
  const subject = new CoordinatorSupervisor({
    ...REOPEN,
    ...options,
    log,
    coordinator: {
      namespace: 'default',
      defaultTtlMillis: 10_000,
      ...(heartbeat === undefined ? {} : { heartbeat }),
      onOutcome: (command, outcome) => outcomes.push({ command, ...outcome }),
    },
    schedule: timers.schedule,
    random: () => 0,
    newBootId: () => `boot-${++bootsStarted}`,
    newClock: (bootId) => {
      const clock = createManualClock(bootId, { start: 1_000 });
      clocks.set(bootId, clock);
      return clock;
    },
    observer: (event) => {
      events.push(event);
      for (const watch of [...watchers]) watch(event);
    },
  });
  supervisors.push(subject);
  return { host: subject, outcomes, log, timers, clocks, observed, types: () => events.map((e) => e.type), events };
}

/** Resolves with the host's state once `predicate` holds for it (now or after a later transition). */
function until(
  subject: CoordinatorSupervisor,
  predicate: (state: SupervisorState) => boolean,
): Promise<SupervisorState> {
  if (predicate(subject.state)) return Promise.resolve(subject.state);
  return new Promise((resolve) => {
    const stop = subject.onStateChange((state) => {
      if (!predicate(state)) return;
      stop();
      resolve(state);
    });
  });
}
const kind = (k: SupervisorState['kind']) => (state: SupervisorState) => state.kind === k;

const grantedFences = async (log: EventLog): Promise<number[]> => {
  const fences: number[] = [];
  for await (const r of log.read({ from: 1 })) if (r.event.type === 'LeaseGranted') fences.push(r.event.data.fence);
  return fences;
};

describe('CoordinatorSupervisor', () => {
  describe('recovery', () => {
    it('is not ready and refuses commands as recovering before recovery has run', () => {
      // Arrange
      const { host: subject } = host();

      // Act
      const readiness = subject.readiness();

      // Assert
      expect(readiness).toMatchObject({
        ready: false,
        status: 'recovering',
        reason: expect.stringMatching(/^recovering: /),
      });
      expect(() => subject.current()).toThrow(CoordinatorNotServingError);
      expect(() => subject.current()).toThrow(
        expect.objectContaining({ code: 'coordinator-unavailable', reason: 'recovering', retryable: true }),
      );
    });

    it('is ready once recovery has finished, with the boot id as the clock domain of its grants', async () => {
      // Arrange
      const { host: subject } = host();

      // Act
      const recovered = await subject.recovered();
      const outcome = await subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q' });

      // Assert
      expect(recovered.ok).toBe(true);
      expect(subject.readiness()).toEqual({ ready: true, status: 'ready', bootId: subject.bootId, position: 2 });
      expect(outcome.ok && outcome.grant.coordinatorExpiresAt.domain).toBe(subject.bootId);
    });

    it("passes the coordinator options' hooks through: each acknowledged outcome reaches onOutcome, denials with their reason", async () => {
      const { host: subject, outcomes } = host();
      await subject.recovered();
      await subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q1' });
      await subject.current().acquire({ resource: 'r', holderId: 'b', requestId: 'q2' });
      expect(outcomes).toEqual([
        { command: 'AcquireLease', ok: true },
        { command: 'AcquireLease', ok: false, reason: 'held' },
      ]);
    });

    it('fails for good on a corrupt log: not ready with the cause, commands refused as unhealthy, nothing retried', async () => {
      // Arrange: a log whose replay meets an event it cannot decode
      const corrupt = new EventLogCorruptError({
        position: 1,
        issues: [{ path: 'type', message: 'unknown event type' }],
      });
      const log = createTestEventLog();
      const { host: subject, timers } = host({
        name: log.name,
        append: (events, options) => log.append(events, options),
        read: () => failingIterable(corrupt),
        version: () => log.version(),
        subscribe: (options) => log.subscribe(options),
        latestSnapshot: () => log.latestSnapshot(),
        saveSnapshot: (snapshot) => log.saveSnapshot(snapshot),
        close: () => log.close(),
      });

      // Act
      const recovered = await subject.recovered();

      // Assert
      expect(recovered).toEqual({ ok: false, error: corrupt });
      expect(subject.readiness()).toMatchObject({
        ready: false,
        status: 'failed',
        reason: expect.stringContaining('unknown event type'),
      });
      expect(() => subject.current()).toThrow(CoordinatorUnavailableError);
      expect(() => subject.current()).toThrow(expect.objectContaining({ reason: 'unhealthy' }));
      expect(timers.pending).toBe(0);
    });
  });

  describe('when the event log is unavailable', () => {
    it('keeps retrying a log that is unreachable at start-up, then recovers once it answers, with a new boot id', async () => {
      // Given a log that refuses every call
      const log = switchableLog(createTestEventLog());
      log.down = true;
      const { host: subject, timers } = host(log);
      const firstBootId = subject.bootId;
      const recovered = subject.recovered();

      // When the first attempt fails
      await until(subject, kind('waiting-for-log'));

      // Then commands and /readyz answer event-log-unavailable, and nothing has exited or given up
      expect(() => subject.current()).toThrow(EventLogUnavailableError);
      expect(subject.readiness()).toMatchObject({
        ready: false,
        status: 'unhealthy',
        reason: expect.stringMatching(/^event-log-unavailable: .*connection refused.*next attempt in 50 ms/),
      });

      // When the log answers again and the timer fires
      log.down = false;
      timers.fireNext();

      // Then the coordinator recovers, with a boot id never used before
      const result = await recovered;
      expect(result.ok).toBe(true);
      expect(subject.readiness()).toMatchObject({ ready: true, status: 'ready' });
      expect(subject.bootId).not.toBe(firstBootId);
      expect(result.ok && result.coordinator.bootId).toBe(subject.bootId);
    });

    it('backs off exponentially (capped, with jitter) while the log stays down, probing it before each attempt', async () => {
      // Given a log that stays down, and a host with waits of 100 ms doubling up to 1 s (jitter 0: half of each ceiling)
      const log = switchableLog(createTestEventLog());
      log.down = true;
      const { host: subject, timers } = host(log, { reopenInitialDelayMillis: 100, reopenMaxDelayMillis: 1_000 });
      void subject.recovered();
      await until(subject, kind('waiting-for-log'));

      // When six attempts fail in a row
      for (let failures = 2; failures <= 6; failures += 1) {
        timers.fireNext();
        await until(subject, (state) => state.kind === 'waiting-for-log' && state.failures === failures);
      }

      // Then the waits grew and stopped at the cap
      expect(timers.delays).toEqual([50, 100, 200, 400, 500, 500]);
      expect(subject.state).toMatchObject({ kind: 'waiting-for-log', failures: 6, delayMillis: 500 });
    });

    it('after a failed append refuses commands as event-log-unavailable, then re-opens on the same log: the minted fence is burned and the holder renews', async () => {
      // Given a coordinator that granted fence 1 to agent-a
      const log: TestEventLog = createTestEventLog();
      const { host: subject, timers, types, events } = host(log);
      await subject.recovered();
      const failedBootId = subject.bootId;
      expect(
        await subject.current().acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' }),
      ).toMatchObject({ ok: true, grant: { fence: 1 } });

      // When the log fails the next grant (fence 2 minted, outcome unknown)
      log.failNextAppend(new EventLogUnavailableError('memory', { message: 'disk I/O error' }));
      const refused = await subject
        .current()
        .acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' })
        .catch((e: unknown) => e);

      // Then nothing was acknowledged, and the host waits for the log instead of staying down
      expect(refused).toMatchObject({ code: 'coordinator-unavailable', reason: 'unhealthy' });
      expect(subject.state).toMatchObject({ kind: 'waiting-for-log', failures: 1 });
      expect(() => subject.current()).toThrow(expect.objectContaining({ code: 'event-log-unavailable' }));
      expect(subject.readiness()).toMatchObject({
        ready: false,
        status: 'unhealthy',
        reason: expect.stringMatching(/^event-log-unavailable: /),
        position: 2,
      });

      // When the backoff ends and the probe finds the log answering
      timers.fireNext();
      await until(subject, kind('ready'));

      // Then a new boot serves: fence 2 is burned, agent-a renews fence 1, the next grant gets fence 3
      expect(subject.bootId).not.toBe(failedBootId);
      expect(subject.current().recovery).toMatchObject({ recoveredFence: 2, carriedLeases: 1 });
      expect(
        await subject.current().renew({ resource: 'slot-1', holderId: 'agent-a', fence: 1, requestId: 'a-2' }),
      ).toMatchObject({ ok: true, grant: { fence: 1 } });
      expect(
        await subject.current().acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-2' }),
      ).toMatchObject({ ok: true, grant: { fence: 3 } });
      expect(await grantedFences(log)).toEqual([1, 3]);

      // And each transition was reported, the burn point with the failed coordinator
      expect(types()).toEqual(['serving', 'stopped', 'waiting-for-log', 'log-answers', 'serving']);
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'stopped', status: 'unhealthy', bootId: failedBootId, burnFencesThrough: 2 }),
          expect.objectContaining({ type: 'waiting-for-log', failures: 1, delayMillis: 50 }),
          expect.objectContaining({ type: 'serving', attempt: 2, tookOver: false }),
        ]),
      );
    });

    it('waits again when the log is still down at the probe, without opening a coordinator', async () => {
      // Given a coordinator whose append failed, on a log that is then down
      const memory = createTestEventLog();
      const log = switchableLog(memory);
      const { host: subject, timers } = host(log);
      await subject.recovered();
      log.down = true;
      await subject
        .current()
        .acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' })
        .catch(() => undefined);
      const versionWhileDown = await memory.version();

      // When the first wait ends while the log is still down
      timers.fireNext();
      const state = await until(subject, (s) => s.kind === 'waiting-for-log' && s.failures === 2);

      // Then the host waits longer and appended nothing
      expect(state).toMatchObject({ delayMillis: 100 });
      expect(await memory.version()).toBe(versionWhileDown);
    });

    it('stops retrying at shutdown', async () => {
      // Given a host waiting for a log that is down
      const log = switchableLog(createTestEventLog());
      log.down = true;
      const { host: subject, timers } = host(log);
      void subject.recovered();
      await until(subject, kind('waiting-for-log'));

      // When the application shuts down
      await subject.close();

      // Then the pending attempt is cancelled and the host is closed
      expect(timers.pending).toBe(0);
      expect(subject.readiness()).toMatchObject({ ready: false, status: 'closed' });
    });
  });

  describe('when superseded', () => {
    it('is not ready and never retries once another coordinator appended to its log', async () => {
      // Arrange
      const { host: subject, log, timers, events } = host();
      await subject.recovered();
      const { host: successor } = host(createTestEventLog((log as TestEventLog).storage));
      await successor.recovered();

      // Act
      const refused = subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q' });

      // Assert
      await expect(refused).rejects.toMatchObject({ reason: 'superseded' });
      expect(subject.readiness()).toMatchObject({
        ready: false,
        status: 'superseded',
        reason: expect.stringContaining('another coordinator'),
      });
      expect(() => subject.current()).toThrow(expect.objectContaining({ reason: 'superseded' }));
      expect(timers.pending).toBe(0);
      expect(events).toContainEqual(expect.objectContaining({ type: 'stopped', status: 'superseded' }));
    });
  });

  describe('as a standby', () => {
    const standbyConfig: Setup = { role: 'standby', takeoverAfterMillis: 3_000, heartbeat: true };

    /** An active coordinator that granted `slot-1` to agent-a, and a standby host on another handle of its log. */
    async function activeAndStandby(standbyLog: (log: EventLog) => EventLog = (log) => log) {
      const activeLog = createTestEventLog();
      const active = await DurableCoordinator.open({
        log: activeLog,
        namespace: 'default',
        clock: createManualClock('boot-active', { start: 1_000 }),
        defaultTtlMillis: 10_000,
        runTimers: false,
      });
      await active.acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' });
      const standby = host(standbyLog(createTestEventLog(activeLog.storage)), standbyConfig);
      void standby.host.recovered();
      const standbyClock = standby.clocks.get(standby.host.bootId)!;
      const state = standby.host.state;
      if (state.kind !== 'standby') throw new Error(`expected a standby, got ${state.kind}`);
      await state.standby.waitForPosition(active.position);
      return { active, activeLog, standby, standbyClock, follower: state.standby };
    }

    it('refuses commands and readiness as standby while the active coordinator is alive', async () => {
      // Arrange
      const { standby, active } = await activeAndStandby();

      // Act / Assert
      expect(() => standby.host.current()).toThrow(CoordinatorNotServingError);
      expect(() => standby.host.current()).toThrow(
        expect.objectContaining({ code: 'coordinator-unavailable', reason: 'standby', retryable: true }),
      );
      expect(standby.host.readiness()).toMatchObject({
        ready: false,
        status: 'standby',
        reason: expect.stringMatching(/^standby: /),
        position: active.position,
      });
      expect(standby.timers.delays).toEqual([3_000]);
      await active.close();
    });

    it('checks again instead of taking over when the active coordinator appended in time', async () => {
      // Given a standby whose check comes due after the active coordinator appended
      const { standby, active, standbyClock, follower } = await activeAndStandby();
      standbyClock.advance(2_000);
      await active.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-1' });
      await follower.waitForPosition(active.position);
      standbyClock.advance(1_000);

      // When the check runs
      standby.timers.fireNext();

      // Then it schedules the next check for 3 s after the append it saw, and the active coordinator still grants
      expect(standby.timers.delays).toEqual([3_000, 2_000]);
      expect(standby.host.state.kind).toBe('standby');
      expect(await active.acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-1' })).toMatchObject({
        ok: true,
      });
      await active.close();
    });

    it('takes over a silent log: it carries the lease, grants above every fence, and the old coordinator is superseded', async () => {
      // Given a standby that has seen the grant, and an active coordinator that then falls silent
      const { standby, active, standbyClock } = await activeAndStandby();
      standbyClock.advance(3_000);

      // When the check runs
      standby.timers.fireNext();
      const recovered = await standby.host.recovered();

      // Then the standby serves, with a new boot id, honouring agent-a's lease
      expect(recovered.ok).toBe(true);
      expect(standby.host.readiness()).toMatchObject({ ready: true, status: 'ready' });
      const successor = standby.host.current();
      expect(successor.recovery).toMatchObject({ carriedLeases: 1, recoveredFence: 1 });
      expect(await successor.acquire({ resource: 'slot-1', holderId: 'agent-b', requestId: 'b-1' })).toMatchObject({
        ok: false,
        reason: 'held',
        heldBy: 'agent-a',
      });
      expect(
        await successor.renew({ resource: 'slot-1', holderId: 'agent-a', fence: 1, requestId: 'a-2' }),
      ).toMatchObject({ ok: true });
      expect(await successor.acquire({ resource: 'slot-2', holderId: 'agent-b', requestId: 'b-2' })).toMatchObject({
        ok: true,
        grant: { fence: 2 },
      });
      expect(standby.types()).toEqual(expect.arrayContaining(['takeover-started', 'serving']));
      expect(standby.events).toContainEqual(expect.objectContaining({ type: 'serving', tookOver: true }));

      // And the old coordinator's next append conflicts
      await expect(active.acquire({ resource: 'slot-3', holderId: 'agent-c', requestId: 'c-1' })).rejects.toMatchObject(
        { reason: 'superseded' },
      );
    });

    it('keeps following when the log is unavailable at takeover, and takes over at a later check once it answers', async () => {
      // Given a silent log that the standby cannot reach when its check comes due
      let log!: EventLog & { down: boolean };
      const { standby, standbyClock } = await activeAndStandby((inner) => (log = switchableLog(inner)));
      standbyClock.advance(3_000);
      log.down = true;

      // When the check runs
      standby.timers.fireNext();
      expect(await standby.observed('takeover-failed')).toMatchObject({ retryInMillis: 50 });

      // Then it is still a standby, checking again after the backoff
      expect(standby.host.state.kind).toBe('standby');
      expect(standby.timers.delays).toEqual([3_000, 50]);

      // And once the log answers, the next check takes over
      log.down = false;
      standby.timers.fireNext();
      expect((await standby.host.recovered()).ok).toBe(true);
    });
  });

  it('refuses bad options naming the field, before anything runs', () => {
    const coordinator = { namespace: 'default', defaultTtlMillis: 10_000 };
    const log = createTestEventLog();
    expect(() => new CoordinatorSupervisor({ log, coordinator, role: 'standby' })).toThrow(
      /takeoverAfterMillis must be a positive integer/,
    );
    expect(() => new CoordinatorSupervisor({ log, coordinator, role: 'leader' as 'active' })).toThrow(
      /role must be 'active' or 'standby'/,
    );
    expect(() => new CoordinatorSupervisor({ log, coordinator, reopenInitialDelayMillis: 0 })).toThrow(
      /initialDelayMillis must be a positive integer/,
    );
    expect(log.appendCalls).toBe(0);
  });

  it('closes the coordinator before shutdown, after which it is not ready', async () => {
    const { host: subject } = host();
    await subject.recovered();
    await subject.close();
    expect(subject.readiness()).toMatchObject({ ready: false, status: 'closed' });
  });
});
