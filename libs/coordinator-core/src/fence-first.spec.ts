import type { CoordinatorEvent } from '@lease-fence/protocol';
import { createManualClock, type ManualClock } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { decide } from './decider/decide.js';
import { evolve } from './decider/evolve.js';
import { createInitialState, fromSnapshot, toSnapshot } from './decider/state.js';
import { DurableCoordinator, type DurableCoordinatorOptions } from './durable-coordinator.js';
import type { FenceAdmitRequest, FenceFirstOptions } from './fence-first-options.js';
import type { EventLog } from './ports/event-log.js';
import { replayLog } from './recovery.js';
import { startCoordinator } from './testing/decider-specification.js';
import { readAll } from './testing/event-log-contract.js';
import { createTestEventLog, createTestEventLogStorage, type TestEventLogStorage } from './testing/test-event-log.js';

const opened: DurableCoordinator[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

let bootCounter = 0;
const bootClock = (): ManualClock => createManualClock(`ff-boot-${++bootCounter}`, { start: 0 });

/** A gate port the test answers by hand: each admit request waits until the test settles it. */
function manualGates(appliesTo: (resource: string) => boolean = (r) => r.startsWith('deploy')) {
  const asked: { request: FenceAdmitRequest; answer(gateId: string | undefined): void }[] = [];
  const options: FenceFirstOptions = {
    appliesTo,
    timeoutMillis: 2_000,
    admit: (request) =>
      new Promise((resolve) =>
        asked.push({ request, answer: (gateId) => resolve(gateId === undefined ? undefined : { gateId }) }),
      ),
  };
  /** Waits until `count` requests were asked (the shell asks after its reservation is durable). */
  const untilAsked = async (count: number): Promise<void> => {
    for (let turn = 0; turn < 1000 && asked.length < count; turn += 1) await new Promise((r) => setImmediate(r));
    expect(asked).toHaveLength(count);
  };
  return { options, asked, untilAsked };
}

async function openOn(
  storage: TestEventLogStorage,
  fenceFirst?: FenceFirstOptions,
  extra: Partial<DurableCoordinatorOptions> = {},
): Promise<{ coordinator: DurableCoordinator; log: EventLog }> {
  const log = createTestEventLog(storage);
  const coordinator = await DurableCoordinator.open({
    namespace: 'default',
    defaultTtlMillis: 10_000,
    runTimers: false,
    wallClock: () => 1_700_000_000_000,
    log,
    clock: bootClock(),
    ...(fenceFirst === undefined ? {} : { fenceFirst }),
    ...extra,
  });
  opened.push(coordinator);
  return { coordinator, log };
}

const eventsOf = async (log: EventLog): Promise<CoordinatorEvent[]> =>
  (await readAll(log.read({ from: 1 }))).map((r) => r.event);
const typesOf = async (log: EventLog): Promise<string[]> => (await eventsOf(log)).map((e) => e.type);

describe('fence-first handover', () => {
  it('grants only after a gate admitted the reserved fence: FenceReserved, then FenceAdmitted + LeaseGranted', async () => {
    const gates = manualGates();
    const { coordinator, log } = await openOn(createTestEventLogStorage(), gates.options);
    const acquiring = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' });
    await gates.untilAsked(1);
    expect(gates.asked[0]!.request).toMatchObject({
      resource: 'deploy-slot',
      holderId: 'agent-b',
      fence: 1,
      requestId: 'b-1',
      timeoutMillis: 2_000,
    });
    expect(await typesOf(log)).toEqual(['CoordinatorStarted', 'FenceReserved']);
    expect(coordinator.leases()).toEqual([]);

    gates.asked[0]!.answer('gate-1');
    expect(await acquiring).toMatchObject({ ok: true, grant: { fence: 1, holderId: 'agent-b', requestId: 'b-1' } });
    expect(await typesOf(log)).toEqual(['CoordinatorStarted', 'FenceReserved', 'FenceAdmitted', 'LeaseGranted']);
    expect((await eventsOf(log))[2]).toMatchObject({ data: { gateId: 'gate-1', fence: 1, holderId: 'agent-b' } });
    expect(coordinator.leases()).toEqual([
      expect.objectContaining({ resource: 'deploy-slot', fence: 1, holderId: 'agent-b' }),
    ]);
  });

  it('while a fence is pending, another holder is held off and the same requestId joins the same handover', async () => {
    const gates = manualGates();
    const { coordinator, log } = await openOn(createTestEventLogStorage(), gates.options);
    const first = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' });
    await gates.untilAsked(1);
    const retried = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' });
    expect(await coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-c', requestId: 'c-1' })).toMatchObject(
      { ok: false, reason: 'held', heldBy: 'agent-b' },
    );
    gates.asked[0]!.answer('gate-1');
    const [a, b] = await Promise.all([first, retried]);
    expect(a).toEqual(b);
    expect(gates.asked).toHaveLength(1);
    expect((await typesOf(log)).filter((t) => t === 'LeaseGranted')).toHaveLength(1);
  });

  it('burns the fence when no gate admits it: fence-unavailable, and the next acquire (same requestId too) gets a higher fence', async () => {
    const gates = manualGates();
    const outcomes: [string, { ok: boolean; reason?: string }][] = [];
    const { coordinator, log } = await openOn(createTestEventLogStorage(), gates.options, {
      onOutcome: (command, outcome) => outcomes.push([command, outcome]),
    });
    const acquiring = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' });
    await gates.untilAsked(1);
    gates.asked[0]!.answer(undefined);
    expect(await acquiring).toEqual({ ok: false, reason: 'fence-unavailable', fence: 1 });
    expect(outcomes).toContainEqual(['BurnReservedFence', { ok: false, reason: 'fence-unavailable' }]); // metrics count it as a denial
    expect((await eventsOf(log)).at(-1)).toMatchObject({
      type: 'FenceBurned',
      data: { fence: 1, reason: 'fence-unavailable' },
    });
    expect(coordinator.leases()).toEqual([]);

    const retry = coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' });
    await gates.untilAsked(2);
    expect(gates.asked[1]!.request.fence).toBe(2);
    gates.asked[1]!.answer('gate-1');
    expect(await retry).toMatchObject({ ok: true, grant: { fence: 2 } });
  });

  it('a restart while a fence is pending burns it durably: the next boot never issues it', async () => {
    const storage = createTestEventLogStorage();
    const gates = manualGates();
    const { coordinator } = await openOn(storage, gates.options);
    void coordinator.acquire({ resource: 'deploy-slot', holderId: 'agent-b', requestId: 'b-1' }).catch(() => undefined);
    await gates.untilAsked(1); // a gate may already have raised its floor to fence 1, then the coordinator died

    const { coordinator: next, log } = await openOn(storage, gates.options);
    const events = await eventsOf(log);
    expect(events.slice(-2)).toMatchObject([
      { type: 'CoordinatorStarted', data: { recoveredFence: 1 } },
      { type: 'FenceBurned', data: { fence: 1, reason: 'coordinator-restarted' } },
    ]);
    const plain = await next.acquire({ resource: 'other-slot', holderId: 'agent-c', requestId: 'c-1' });
    expect(plain).toMatchObject({ ok: true, grant: { fence: 2 } });
    expect(await replayLog(log)).toMatchObject({ state: { reservations: new Map() } });
  });

  it('a resource fence-first does not apply to is granted at once', async () => {
    const gates = manualGates();
    const { coordinator, log } = await openOn(createTestEventLogStorage(), gates.options);
    expect(await coordinator.acquire({ resource: 'other-slot', holderId: 'agent-a', requestId: 'a-1' })).toMatchObject({
      ok: true,
      grant: { fence: 1 },
    });
    expect(gates.asked).toHaveLength(0);
    expect(await typesOf(log)).toEqual(['CoordinatorStarted', 'LeaseGranted']);
  });

  it('refuses a fenceFirst option without a positive timeout, naming it', async () => {
    const gates = manualGates();
    await expect(openOn(createTestEventLogStorage(), { ...gates.options, timeoutMillis: 0 })).rejects.toThrow(
      'fenceFirst.timeoutMillis',
    );
  });
});

describe('fence-first decider', () => {
  const boot = 'boot-x';
  const at = (millis: number) => ({ instant: createManualClock(boot, { start: millis }).now(), wallMillis: 0 });
  const started = () => {
    const state = createInitialState();
    for (const event of decide(startCoordinator(), state, at(0)).events) evolve(state, event);
    return state;
  };
  const reserve = {
    type: 'ReserveFence',
    resource: 'r',
    holderId: 'h',
    requestId: 'q',
    ttlMillis: 1000,
    timeoutMillis: 500,
  } as const;

  it('a pending reservation holds off plain acquires until its deadline, and survives a snapshot', () => {
    const state = started();
    const decision = decide(reserve, state, at(100));
    expect(decision.events).toMatchObject([{ type: 'FenceReserved', data: { fence: 1, deadlineMillis: 600 } }]);
    for (const event of decision.events) evolve(state, event);
    expect(
      decide(
        { type: 'AcquireLease', resource: 'r', holderId: 'other', requestId: 'x', ttlMillis: 1000 },
        state,
        at(200),
      ).outcome,
    ).toEqual({ ok: false, reason: 'held', heldBy: 'h', retryAfterMillis: 400 });
    expect(state.table.issuedFence).toBe(1);
    const restored = fromSnapshot(toSnapshot(state))!;
    expect(restored.reservations).toEqual(state.reservations);
    expect(
      decide({ type: 'ActivateReservedLease', resource: 'r', fence: 1, gateId: 'g' }, restored, at(300)).events.map(
        (e) => e.type,
      ),
    ).toEqual(['FenceAdmitted', 'LeaseGranted']);
  });

  it('a gate report naming a reserved fence as its floor is plausible, pending or burned (a gate may hold it)', () => {
    const state = started();
    for (const event of decide(reserve, state, at(100)).events) evolve(state, event);
    const report = {
      type: 'RecordFenceRejection',
      gateId: 'g',
      resource: 'r',
      seq: 1,
      kind: 'stale',
      rejected: { holderId: 'old', fence: 1 },
      current: { holderId: 'h', fence: 1 },
    } as const;
    const stale = { ...report, current: { holderId: 'h', fence: 1 }, rejected: { holderId: 'old', fence: 1 } };
    expect(decide({ ...stale, kind: 'double-grant' }, state, at(150)).outcome).toEqual({ ok: true, duplicate: false });
    for (const event of decide({ type: 'BurnReservedFence', resource: 'r', fence: 1 }, state, at(700)).events)
      evolve(state, event);
    expect(decide({ ...stale, kind: 'double-grant' }, fromSnapshot(toSnapshot(state))!, at(800)).outcome).toEqual({
      ok: true,
      duplicate: false,
    });
    expect(decide({ ...report, resource: 'other', kind: 'double-grant' }, state, at(800)).outcome).toMatchObject({
      ok: false,
      reason: 'implausible',
      field: 'rejected.fence',
    });
  });

  it('activating or burning a fence that is not pending changes nothing', () => {
    const state = started();
    expect(decide({ type: 'ActivateReservedLease', resource: 'r', fence: 7, gateId: 'g' }, state, at(1))).toEqual({
      events: [],
      outcome: { ok: false, reason: 'not-pending', fence: 7 },
    });
    expect(decide({ type: 'BurnReservedFence', resource: 'r', fence: 7 }, state, at(1))).toEqual({
      events: [],
      outcome: { ok: false, reason: 'not-pending', fence: 7 },
    });
  });
});
