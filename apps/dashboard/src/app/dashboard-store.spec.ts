import { describe, expect, it } from 'vitest';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { DashboardStore } from './dashboard-store.js';

describe('DashboardStore', () => {
  it('batches many events into one notification per scheduled frame', () => {
    // Arrange
    const queued: (() => void)[] = [];
    const store = new DashboardStore({ schedule: (cb) => queued.push(cb) });
    let notified = 0;
    store.subscribe(() => (notified += 1));
    const log = new LogBuilder();
    for (let i = 1; i <= 100; i += 1) log.granted(`r${i}`, 'a', i);

    // Act
    log.events.forEach((e) => store.appendEvent(e));
    queued.splice(0).forEach((cb) => cb());

    // Assert
    expect(notified).toBe(1);
    expect(store.history.position).toBe(100);
  });

  it('learns the head and the coordinator clock offset from frames', () => {
    const store = new DashboardStore({ schedule: (cb) => cb() });
    store.applyFrame({ type: 'heartbeat', position: 42, wallMillis: 10_500 }, 10_000);
    store.applyFrame({ type: 'caught-up', position: 40 }, 10_000);
    expect([store.headPosition, store.clockOffsetMillis, store.caughtUp]).toEqual([42, 500, true]);
  });

  it('clears connection problems once the stream is live again, and keeps data problems until dismissed', () => {
    // Arrange
    const store = new DashboardStore({ schedule: (cb) => cb() });
    store.reportProblem('could not reach the coordinator: Failed to fetch', 'connection', 1_000);
    store.reportProblem('invalid frame at position 7', 'data', 2_000);

    // Act
    store.setConnection({ status: 'reconnecting', after: 7, attempt: 1, retryInMillis: 500, reason: 'closed' });
    const whileDown = store.problems.map((p) => p.message);
    store.setConnection({ status: 'live' });

    // Assert
    expect(whileDown).toHaveLength(2);
    expect(store.problems).toEqual([{ message: 'invalid frame at position 7', kind: 'data', atMillis: 2_000 }]);
    store.dismissProblems();
    expect(store.problems).toEqual([]);
  });

  it('publishes a frozen snapshot: the same object until a change, a new one that says what changed after it', () => {
    // Arrange
    const store = new DashboardStore({ schedule: (cb) => cb() });
    const before = store.getSnapshot();
    const log = new LogBuilder();
    log.granted('deploy', 'agent-a', 1);

    // Act
    const unchanged = store.getSnapshot();
    log.events.forEach((e) => store.appendEvent(e));
    store.applyFrame({ type: 'heartbeat', position: 7, wallMillis: 10_500 }, 10_000);
    store.setHeld(true);
    const after = store.getSnapshot();

    // Assert
    expect(unchanged).toBe(before);
    expect(Object.isFrozen(after)).toBe(true);
    expect(after).not.toBe(before);
    expect([before.loadedPosition, before.headPosition, before.held]).toEqual([0, 0, false]);
    expect([after.loadedPosition, after.headPosition, after.clockOffsetMillis, after.held]).toEqual([1, 7, 500, true]);
    expect(store.getSnapshot()).toBe(after);
  });
});
