import { describe, expect, it, vi } from 'vitest';
import { DoubleGrantError, ProtocolMisuseError, StaleFenceError } from '../errors.js';
import type { FenceToken } from '../lease/outcomes.js';
import { FenceGate } from './fence-gate.js';
import { UNKNOWN_FLOOR_HOLDER, type RejectionRecord } from './rejection.js';

const token = (holderId: string, fence: number, resource = 'deploy-slot'): FenceToken => ({
  resource,
  holderId,
  fence,
});

describe('FenceGate', () => {
  describe('commit', () => {
    it('runs the write and returns its result when there is no floor yet', () => {
      // Arrange
      const gate = new FenceGate('deploy-slot');
      // Act
      const result = gate.commit(token('agent-a', 1), () => 'written');
      // Assert
      expect(result).toBe('written');
      expect(gate.floor).toEqual({ fence: 1, holderId: 'agent-a' });
    });

    it('still refuses a holder id outside the id rule after a valid holder wrote, changing nothing', () => {
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      for (const holderId of ['agent-a ', '', 'agent-\u00e9', 'a'.repeat(201)]) {
        expect(() => gate.commit(token(holderId, 2), () => undefined), JSON.stringify(holderId)).toThrow(
          /token\.holderId/,
        );
      }
      expect(gate.floor).toEqual({ fence: 1, holderId: 'agent-a' });
    });

    it('admits a higher fence and raises the floor to it', () => {
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      gate.commit(token('agent-b', 5), () => undefined);
      expect(gate.floor).toEqual({ fence: 5, holderId: 'agent-b' });
    });

    it('admits the same holder writing again with the floor fence', () => {
      const gate = new FenceGate('deploy-slot');
      const writes: number[] = [];
      gate.commit(token('agent-a', 3), () => writes.push(1));
      gate.commit(token('agent-a', 3), () => writes.push(2));
      expect(writes).toEqual([1, 2]);
      expect(gate.rejections).toHaveLength(0);
    });

    it('refuses a fence below the floor with StaleFenceError and records both holders and fences', () => {
      // Arrange
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-b', 2), () => undefined);
      const write = vi.fn();
      // Act
      const act = (): void => gate.commit(token('agent-a', 1), write);
      // Assert
      expect(act).toThrow(StaleFenceError);
      expect(write).not.toHaveBeenCalled();
      expect(gate.rejections).toEqual([
        {
          seq: 1,
          resource: 'deploy-slot',
          kind: 'stale',
          rejected: { holderId: 'agent-a', fence: 1 },
          current: { holderId: 'agent-b', fence: 2 },
        },
      ]);
      expect(gate.floor).toEqual({ fence: 2, holderId: 'agent-b' });
    });

    it('throws a StaleFenceError whose code and rejection match the recorded rejection', () => {
      const gate = new FenceGate('deploy-slot');
      gate.admit(token('agent-b', 2));
      const error = captureError(() => gate.commit(token('agent-a', 1), () => undefined));
      expect(error).toBeInstanceOf(StaleFenceError);
      expect((error as StaleFenceError).code).toBe('stale-fence');
      expect((error as StaleFenceError).name).toBe('StaleFenceError');
      expect((error as StaleFenceError).rejection).toBe(gate.rejections[0]);
      expect((error as StaleFenceError).message).toContain('agent-a');
      expect((error as StaleFenceError).message).toContain('agent-b');
    });

    it('refuses an equal fence from another holder as a double grant, records it and never admits it', () => {
      // Arrange
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 7), () => undefined);
      const write = vi.fn();
      // Act
      const error = captureError(() => gate.commit(token('agent-b', 7), write));
      // Assert
      expect(error).toBeInstanceOf(DoubleGrantError);
      expect((error as DoubleGrantError).code).toBe('double-grant');
      expect(write).not.toHaveBeenCalled();
      expect(gate.rejections).toEqual([
        {
          seq: 1,
          resource: 'deploy-slot',
          kind: 'double-grant',
          rejected: { holderId: 'agent-b', fence: 7 },
          current: { holderId: 'agent-a', fence: 7 },
        },
      ]);
      expect(gate.floor).toEqual({ fence: 7, holderId: 'agent-a' });
    });

    it('numbers rejections consecutively from initialSeq', () => {
      const gate = new FenceGate('deploy-slot', { initialSeq: 40 });
      gate.admit(token('agent-b', 9));
      for (const fence of [3, 4, 5]) expect(() => gate.admit(token('agent-a', fence))).toThrow(StaleFenceError);
      expect(gate.rejections.map((r) => r.seq)).toEqual([40, 41, 42]);
      expect(gate.nextSeq).toBe(43);
    });

    it('raises the floor before the callback runs, so a reentrant stale commit is refused', () => {
      // Arrange
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      let inner: unknown;
      // Act: the newer holder's write re-enters the gate with the older fence
      gate.commit(token('agent-b', 2), () => {
        expect(gate.floor).toEqual({ fence: 2, holderId: 'agent-b' });
        inner = captureError(() => gate.commit(token('agent-a', 1), () => 'stale write'));
      });
      // Assert
      expect(inner).toBeInstanceOf(StaleFenceError);
      expect(gate.rejections).toHaveLength(1);
    });

    it('leaves the floor raised when the callback throws', () => {
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      expect(() =>
        gate.commit(token('agent-b', 2), () => {
          throw new Error('half-written');
        }),
      ).toThrow('half-written');
      expect(gate.floor).toEqual({ fence: 2, holderId: 'agent-b' });
      expect(() => gate.commit(token('agent-a', 1), () => undefined)).toThrow(StaleFenceError);
    });

    it('raises the floor before an async callback settles and keeps it raised when it rejects', async () => {
      // Arrange
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      let release!: () => void;
      const started = new Promise<void>((resolve) => {
        release = resolve;
      });
      // Act
      const pending = gate.commit(token('agent-b', 2), async () => {
        await started;
        throw new Error('async write failed');
      });
      const staleDuringWrite = captureError(() => gate.commit(token('agent-a', 1), () => undefined));
      release();
      // Assert
      expect(staleDuringWrite).toBeInstanceOf(StaleFenceError);
      await expect(pending).rejects.toThrow('async write failed');
      expect(gate.floor).toEqual({ fence: 2, holderId: 'agent-b' });
    });

    it('returns the async callback promise as is', async () => {
      const gate = new FenceGate('deploy-slot');
      await expect(gate.commit(token('agent-a', 1), async () => 42)).resolves.toBe(42);
    });

    it('refuses a token for another resource with ProtocolMisuseError and records nothing', () => {
      const gate = new FenceGate('deploy-slot');
      const write = vi.fn();
      expect(() => gate.commit(token('agent-a', 1, 'other-slot'), write)).toThrow(ProtocolMisuseError);
      expect(write).not.toHaveBeenCalled();
      expect(gate.floor).toBeUndefined();
      expect(gate.rejections).toHaveLength(0);
    });

    it.each([
      ['a zero fence', { resource: 'deploy-slot', holderId: 'agent-a', fence: 0 }, RangeError],
      ['a NaN fence', { resource: 'deploy-slot', holderId: 'agent-a', fence: Number.NaN }, RangeError],
      ['a fractional fence', { resource: 'deploy-slot', holderId: 'agent-a', fence: 1.5 }, RangeError],
      ['a string fence', { resource: 'deploy-slot', holderId: 'agent-a', fence: '2' }, TypeError],
      ['an empty holder', { resource: 'deploy-slot', holderId: '', fence: 2 }, TypeError],
      ['no token', null, TypeError],
    ])('refuses %s without recording a rejection or moving the floor', (_label, bad, errorClass) => {
      const gate = new FenceGate('deploy-slot', { initialFloor: { fence: 1, holderId: 'agent-a' } });
      expect(() => gate.commit(bad as unknown as FenceToken, () => undefined)).toThrow(errorClass);
      expect(gate.floor).toEqual({ fence: 1, holderId: 'agent-a' });
      expect(gate.rejections).toHaveLength(0);
    });

    it('refuses a non-function callback before touching the floor', () => {
      const gate = new FenceGate('deploy-slot');
      expect(() => gate.commit(token('agent-a', 1), 'write' as unknown as () => void)).toThrow(TypeError);
      expect(gate.floor).toBeUndefined();
    });
  });

  describe('admit', () => {
    it('raises the floor without a write so the previous holder is refused before the new one writes', () => {
      const gate = new FenceGate('deploy-slot');
      gate.commit(token('agent-a', 1), () => undefined);
      gate.admit(token('agent-b', 2));
      expect(() => gate.commit(token('agent-a', 1), () => undefined)).toThrow(StaleFenceError);
    });

    it('refuses a stale admission like a stale commit', () => {
      const gate = new FenceGate('deploy-slot', { initialFloor: { fence: 4, holderId: 'agent-b' } });
      expect(() => gate.admit(token('agent-a', 3))).toThrow(StaleFenceError);
      expect(gate.rejections[0]?.kind).toBe('stale');
    });
  });

  describe('wouldAdmit', () => {
    it('answers like commit would, without recording or raising anything', () => {
      const gate = new FenceGate('deploy-slot', { initialFloor: { fence: 4, holderId: 'agent-b' } });
      expect(gate.wouldAdmit(token('agent-a', 5))).toBe(true);
      expect(gate.wouldAdmit(token('agent-b', 4))).toBe(true);
      expect(gate.wouldAdmit(token('agent-a', 4))).toBe(false);
      expect(gate.wouldAdmit(token('agent-a', 3))).toBe(false);
      expect(gate.floor).toEqual({ fence: 4, holderId: 'agent-b' });
      expect(gate.rejections).toHaveLength(0);
    });
  });

  describe('options', () => {
    it('starts from initialFloor, so a resource restart does not readmit stale holders', () => {
      const gate = new FenceGate('deploy-slot', { initialFloor: { fence: 10, holderId: 'agent-c' } });
      expect(gate.floor).toEqual({ fence: 10, holderId: 'agent-c' });
      expect(() => gate.commit(token('agent-a', 9), () => undefined)).toThrow(StaleFenceError);
    });

    it('takes a bare fence number as initialFloor, refusing lower fences and admitting higher ones', () => {
      // Arrange
      const gate = new FenceGate('deploy-slot', { initialFloor: 10 });
      // Act / Assert
      expect(gate.floor).toEqual({ fence: 10, holderId: UNKNOWN_FLOOR_HOLDER });
      expect(captureError(() => gate.commit(token('agent-a', 9), () => undefined))).toMatchObject({
        rejection: {
          kind: 'stale',
          rejected: { holderId: 'agent-a', fence: 9 },
          current: { holderId: UNKNOWN_FLOOR_HOLDER, fence: 10 },
        },
      });
      expect(gate.commit(token('agent-b', 11), () => 'written')).toBe('written');
      expect(gate.floor).toEqual({ fence: 11, holderId: 'agent-b' });
    });

    it.each(['agent-a', UNKNOWN_FLOOR_HOLDER])(
      'refuses an equal fence from any holder (%s) as a possible double grant when the floor holder is unknown',
      (holderId) => {
        // Arrange: a bare number, and the floor such a gate reports, restored
        const bare = new FenceGate('deploy-slot', { initialFloor: 10 });
        const restored = new FenceGate('deploy-slot', { initialFloor: bare.floor! });
        for (const gate of [bare, restored]) {
          // Act / Assert
          expect(gate.wouldAdmit(token(holderId, 10))).toBe(false);
          expect(() => gate.commit(token(holderId, 10), () => undefined)).toThrow(DoubleGrantError);
          expect(gate.floor).toEqual({ fence: 10, holderId: UNKNOWN_FLOOR_HOLDER });
        }
      },
    );

    it('passes every rejection to onRejection before throwing', () => {
      const forwarded: RejectionRecord[] = [];
      const gate = new FenceGate('deploy-slot', { onRejection: (r) => forwarded.push(r) });
      gate.admit(token('agent-b', 2));
      expect(() => gate.admit(token('agent-a', 1))).toThrow(StaleFenceError);
      expect(() => gate.admit(token('agent-c', 2))).toThrow(DoubleGrantError);
      expect(forwarded).toEqual(gate.rejections);
      expect(forwarded.map((r) => r.kind)).toEqual(['stale', 'double-grant']);
    });

    it('still throws the refusal when onRejection throws, carrying the callback error', () => {
      const failure = new Error('forwarder down');
      const gate = new FenceGate('deploy-slot', {
        onRejection: () => {
          throw failure;
        },
      });
      gate.admit(token('agent-b', 2));
      const error = captureError(() => gate.commit(token('agent-a', 1), () => undefined));
      expect(error).toBeInstanceOf(StaleFenceError);
      expect((error as StaleFenceError).onRejectionError).toBe(failure);
      expect(gate.rejections).toHaveLength(1);
    });

    it('keeps at most maxRejectionsKept rejections, dropping the oldest', () => {
      const gate = new FenceGate('deploy-slot', {
        maxRejectionsKept: 2,
        initialFloor: { fence: 9, holderId: 'agent-b' },
      });
      for (const fence of [1, 2, 3]) expect(() => gate.admit(token('agent-a', fence))).toThrow(StaleFenceError);
      expect(gate.rejections.map((r) => r.rejected.fence)).toEqual([2, 3]);
      expect(gate.nextSeq).toBe(4);
    });

    it.each([
      ['an empty resource', () => new FenceGate(''), TypeError, 'resource'],
      [
        'a zero initial floor',
        () => new FenceGate('r', { initialFloor: { fence: 0, holderId: 'a' } }),
        RangeError,
        'initialFloor.fence',
      ],
      ['a zero bare initial floor', () => new FenceGate('r', { initialFloor: 0 }), RangeError, 'initialFloor'],
      ['a fractional bare initial floor', () => new FenceGate('r', { initialFloor: 1.5 }), RangeError, 'initialFloor'],
      [
        'a string initial floor',
        () => new FenceGate('r', { initialFloor: '10' as unknown as number }),
        TypeError,
        'initialFloor',
      ],
      [
        'an initial floor without holder',
        () => new FenceGate('r', { initialFloor: { fence: 1, holderId: '' } }),
        TypeError,
        'initialFloor.holderId',
      ],
      ['a negative initialSeq', () => new FenceGate('r', { initialSeq: -1 }), RangeError, 'initialSeq'],
      ['a zero maxRejectionsKept', () => new FenceGate('r', { maxRejectionsKept: 0 }), RangeError, 'maxRejectionsKept'],
      [
        'a non-function onRejection',
        () => new FenceGate('r', { onRejection: 'log' as unknown as () => void }),
        TypeError,
        'onRejection',
      ],
    ])('refuses %s with an error naming the field', (_label, make, errorClass, field) => {
      const error = captureError(make);
      expect(error).toBeInstanceOf(errorClass);
      expect((error as Error).message).toContain(`FenceGate: ${field}`);
    });
  });
});

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}
