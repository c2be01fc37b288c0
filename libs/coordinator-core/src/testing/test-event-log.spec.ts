import { describe, expect, it } from 'vitest';
import { leaseGranted } from './event-builders.js';
import { readAll } from './event-log-contract.js';
import { createTestEventLog, createTestEventLogStorage } from './test-event-log.js';

// The log's semantics are the memory log's, contract-tested in ../ports/memory-event-log.spec.ts;
// these cases cover only what the double adds.
describe('createTestEventLog', () => {
  describe('holdAppends', () => {
    it('keeps appends waiting until release, then lands them in call order', async () => {
      // Arrange
      const log = createTestEventLog();
      const release = log.holdAppends();
      // Act
      const first = log.append([leaseGranted('a', 'agent-a', 1)], { expectedVersion: 0 });
      const second = log.append([leaseGranted('b', 'agent-a', 2)], { expectedVersion: 1 });
      await log.whenAppendsHeld(2);
      // Assert
      expect(log.heldAppends).toBe(2);
      expect(await log.version()).toBe(0);
      release();
      expect(await Promise.all([first, second])).toEqual([
        { fromPosition: 1, toPosition: 1 },
        { fromPosition: 2, toPosition: 2 },
      ]);
      expect(log.heldAppends).toBe(0);
    });
  });

  describe('appendCalls and appendSizes', () => {
    it('counts every append called and the size of each one that landed', async () => {
      const log = createTestEventLog();
      await log.append([leaseGranted('a', 'agent-a', 1), leaseGranted('b', 'agent-a', 2)], { expectedVersion: 0 });
      await log.append([leaseGranted('c', 'agent-a', 3)], { expectedVersion: 0 }).catch(() => undefined);
      await log.append([leaseGranted('c', 'agent-a', 3)], { expectedVersion: 2 });
      expect(log.appendCalls).toBe(3);
      expect(log.appendSizes).toEqual([2, 1]);
    });
  });

  describe('storage', () => {
    it('shows the stored records, so a second handle on it reads what the first wrote, stamped at wall time 0', async () => {
      const storage = createTestEventLogStorage();
      await createTestEventLog(storage).append([leaseGranted('a', 'agent-a', 1)], { expectedVersion: 0 });
      expect(storage.records).toHaveLength(1);
      expect(
        (await readAll(createTestEventLog(storage).read({ from: 1 }))).map((r) => [r.event, r.recordedAtMillis]),
      ).toEqual([[leaseGranted('a', 'agent-a', 1), 0]]);
    });
  });
});
