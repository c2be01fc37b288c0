import { describe, expect, it } from 'vitest';
import { describeEventLogContract, readAll } from '../testing/event-log-contract.js';
import { leaseGranted } from '../testing/event-builders.js';
import { EventLogUnavailableError, ExpectedVersionConflictError } from './event-log-errors.js';
import { createMemoryEventLog, createMemoryEventLogStorage, type MemoryEventLogStorage } from './memory-event-log.js';

let storage: MemoryEventLogStorage = createMemoryEventLogStorage();
describeEventLogContract('memory', {
  open: async () => {
    storage = createMemoryEventLogStorage();
    return createMemoryEventLog({ storage });
  },
  reopen: async () => createMemoryEventLog({ storage }),
  openSecondWriter: async () => createMemoryEventLog({ storage }),
});

describe('createMemoryEventLog', () => {
  describe('failNextAppend', () => {
    it('rejects the next append with the injected error and stores nothing', async () => {
      // Arrange
      const log = createMemoryEventLog();
      const injected = new EventLogUnavailableError('memory', { message: 'disk on fire' });
      log.failNextAppend(injected);
      // Act
      const error = await log
        .append([leaseGranted('slot', 'agent-a', 1)], { expectedVersion: 0 })
        .catch((e: unknown) => e);
      // Assert
      expect(error).toBe(injected);
      expect(await log.version()).toBe(0);
      expect(await log.append([leaseGranted('slot', 'agent-a', 1)], { expectedVersion: 0 })).toEqual({
        fromPosition: 1,
        toPosition: 1,
      });
    });

    it('stores the events and still rejects when the failure is after the write (unknown outcome)', async () => {
      const log = createMemoryEventLog();
      log.failNextAppend(new EventLogUnavailableError('memory', { message: 'timeout' }), { persist: true });
      await expect(log.append([leaseGranted('slot', 'agent-a', 1)], { expectedVersion: 0 })).rejects.toBeInstanceOf(
        EventLogUnavailableError,
      );
      expect((await readAll(log.read({ from: 1 }))).map((r) => r.event)).toEqual([leaseGranted('slot', 'agent-a', 1)]);
    });

    it('checks the expected version before the injected failure', async () => {
      const log = createMemoryEventLog();
      log.failNextAppend(new Error('not reached'));
      await expect(log.append([leaseGranted('slot', 'agent-a', 1)], { expectedVersion: 3 })).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
    });
  });

  describe('wallClock', () => {
    it('stamps recordedAtMillis of every event of an append with one reading of the wall clock', async () => {
      // Arrange
      const readings = [1_700_000_000_000, 1_700_000_000_500];
      const log = createMemoryEventLog({ wallClock: () => readings.shift()! });
      // Act
      await log.append([leaseGranted('a', 'agent-a', 1), leaseGranted('b', 'agent-a', 2)], { expectedVersion: 0 });
      await log.append([leaseGranted('c', 'agent-a', 3)], { expectedVersion: 2 });
      // Assert
      expect((await readAll(log.read({ from: 1 }))).map((r) => r.recordedAtMillis)).toEqual([
        1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_500,
      ]);
    });
  });
});
