import { describe, expect, it } from 'vitest';
import { VirtualScheduler } from './scheduler.js';

describe('VirtualScheduler', () => {
  describe('runNext', () => {
    it('runs actions in time order and moves the current time to each', () => {
      // Arrange
      const scheduler = new VirtualScheduler();
      const seen: string[] = [];
      scheduler.at(30, () => seen.push(`c@${scheduler.nowMillis}`));
      scheduler.at(10, () => seen.push(`a@${scheduler.nowMillis}`));
      scheduler.after(20, () => seen.push(`b@${scheduler.nowMillis}`));
      // Act
      while (scheduler.runNext()) {
        // drain
      }
      // Assert
      expect(seen).toEqual(['a@10', 'b@20', 'c@30']);
      expect(scheduler.nowMillis).toBe(30);
    });

    it('runs actions due at the same time in the order they were scheduled', () => {
      const scheduler = new VirtualScheduler();
      const seen: number[] = [];
      for (let index = 0; index < 20; index += 1) scheduler.at(5, () => seen.push(index));
      while (scheduler.runNext()) {
        // drain
      }
      expect(seen).toEqual(Array.from({ length: 20 }, (_, index) => index));
    });

    it('skips cancelled actions and stops at the given time without moving past it', () => {
      const scheduler = new VirtualScheduler();
      const seen: string[] = [];
      const cancelled = scheduler.at(1, () => seen.push('cancelled'));
      scheduler.at(2, () => seen.push('kept'));
      scheduler.at(50, () => seen.push('later'));
      scheduler.cancel(cancelled);
      while (scheduler.runNext(10)) {
        // drain up to t=10
      }
      expect(seen).toEqual(['kept']);
      expect(scheduler.nowMillis).toBe(2);
      expect(scheduler.actionsRun).toBe(1);
    });
  });

  describe('at', () => {
    it('refuses a time before now with a RangeError naming the field', () => {
      const scheduler = new VirtualScheduler();
      scheduler.at(10, () => undefined);
      scheduler.runNext();
      expect(() => scheduler.at(9, () => undefined)).toThrow(/atMillis.*10 ms.*got 9/);
      expect(() => scheduler.after(Number.NaN, () => undefined)).toThrow(RangeError);
    });
  });
});
