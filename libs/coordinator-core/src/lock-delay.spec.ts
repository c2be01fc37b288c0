import { createManualClock, type ManualClock } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableCoordinator, type DurableCoordinatorOptions } from './durable-coordinator.js';
import { checkLockDelayRules, lockDelayMillisFor } from './lock-delay.js';
import type { EventLog } from './ports/event-log.js';
import { createTestEventLog, createTestEventLogStorage } from './testing/test-event-log.js';

describe('lockDelayMillisFor', () => {
  const rules = [
    { pattern: '*', millis: 100 },
    { pattern: 'deploy-*', millis: 5000 },
    { pattern: 'deploy-prod-*', millis: 9000 },
    { pattern: 'deploy-canary', millis: 0 },
  ];

  it.each([
    ['db', 100],
    ['deploy-web', 5000],
    ['deploy-prod-eu', 9000],
    ['deploy-canary', 0],
  ])('gives %s the delay of the most specific rule covering it: %s ms', (resource, millis) => {
    expect(lockDelayMillisFor(rules, resource)).toBe(millis);
    expect(lockDelayMillisFor([...rules].reverse(), resource)).toBe(millis);
  });

  it('gives 0 when no rule covers the resource', () => {
    expect(lockDelayMillisFor([{ pattern: 'deploy-*', millis: 5000 }], 'db')).toBe(0);
    expect(lockDelayMillisFor([], 'db')).toBe(0);
  });
});

describe('checkLockDelayRules', () => {
  it.each([
    [
      'a bad pattern',
      [{ pattern: 'a*b', millis: 1 }],
      /lockDelays\.0\.pattern may contain `\*` only as its last character/,
    ],
    [
      'a pattern listed twice',
      [
        { pattern: 'db', millis: 1 },
        { pattern: 'db', millis: 2 },
      ],
      /lockDelays\.1\.pattern "db" is listed twice/,
    ],
    ['a negative delay', [{ pattern: 'db', millis: -1 }], /lockDelays\.0\.millis must be an integer of milliseconds/],
    ['a fractional delay', [{ pattern: 'db', millis: 1.5 }], /lockDelays\.0\.millis/],
    ['a delay over 2^31 - 1', [{ pattern: 'db', millis: 2 ** 31 }], /lockDelays\.0\.millis/],
    ['not an array', 'db=5', /lockDelays must be an array/],
  ])('refuses %s, naming the rule and the field', (_name, rules, message) => {
    expect(() => checkLockDelayRules('test', rules)).toThrow(message);
  });
});

describe('DurableCoordinator with lock-delay rules', () => {
  const opened: DurableCoordinator[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });
  let boots = 0;
  const open = async (log: EventLog, clock: ManualClock, options: Partial<DurableCoordinatorOptions> = {}) => {
    const coordinator = await DurableCoordinator.open({
      log,
      clock,
      namespace: 'default',
      defaultTtlMillis: 1000,
      runTimers: false,
      lockDelays: [{ pattern: 'deploy-*', millis: 5000 }],
      ...options,
    });
    opened.push(coordinator);
    return coordinator;
  };

  it('delays the resources its rules cover after an expiry, across a restart, and no others', async () => {
    // Given boot 1: deploy-web and db expire at 1000 (ttl 1 s) and boot 1 is last seen at 2000
    const storage = createTestEventLogStorage();
    const boot1 = createManualClock(`lock-delay-boot-${++boots}`, { start: 0 });
    const dead = await open(createTestEventLog(storage), boot1);
    await dead.acquire({ resource: 'deploy-web', holderId: 'agent-a', requestId: 'a-1' });
    await dead.acquire({ resource: 'db', holderId: 'agent-a', requestId: 'a-2' });
    boot1.advance(1000);
    expect(await dead.expireDue()).toBe(2);
    boot1.advance(1000);
    expect(await dead.acquire({ resource: 'deploy-web', holderId: 'agent-b', requestId: 'b-1' })).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: 4000,
    });
    expect(await dead.acquire({ resource: 'db', holderId: 'agent-b', requestId: 'b-2' })).toMatchObject({ ok: true });
    expect(await dead.checkpoint()).toBe(true);

    // When boot 2 recovers from the log (its clock reads 300)
    const boot2 = createManualClock(`lock-delay-boot-${++boots}`, { start: 300 });
    const coordinator = await open(createTestEventLog(storage), boot2);

    // Then the 4000 ms left of the delay still hold, counted from the restart
    expect(await coordinator.acquire({ resource: 'deploy-web', holderId: 'agent-b', requestId: 'b-3' })).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: 4000,
    });
    boot2.advance(3999);
    expect(await coordinator.acquire({ resource: 'deploy-web', holderId: 'agent-b', requestId: 'b-3' })).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: 1,
    });
    boot2.advance(1);
    expect(await coordinator.acquire({ resource: 'deploy-web', holderId: 'agent-b', requestId: 'b-3' })).toMatchObject({
      ok: true,
      grant: { fence: 4 },
    });
  });

  it('does not delay after a release', async () => {
    const clock = createManualClock(`lock-delay-boot-${++boots}`, { start: 0 });
    const coordinator = await open(createTestEventLog(), clock);
    const granted = await coordinator.acquire({ resource: 'deploy-web', holderId: 'agent-a', requestId: 'a-1' });
    expect(granted.ok).toBe(true);
    expect(await coordinator.release({ resource: 'deploy-web', holderId: 'agent-a', fence: 1 })).toEqual({ ok: true });
    expect(await coordinator.acquire({ resource: 'deploy-web', holderId: 'agent-b', requestId: 'b-1' })).toMatchObject({
      ok: true,
      grant: { fence: 2 },
    });
  });

  it('refuses bad rules at open, naming the rule, and writes nothing', async () => {
    const log = createTestEventLog();
    const clock = createManualClock(`lock-delay-boot-${++boots}`, { start: 0 });
    await expect(open(log, clock, { lockDelays: [{ pattern: 'deploy-*', millis: -5 }] })).rejects.toThrow(
      'DurableCoordinator.open: lockDelays.0.millis',
    );
    expect(await log.version()).toBe(0);
  });
});
