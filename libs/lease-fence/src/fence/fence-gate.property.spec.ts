/**
 * FenceGate under concurrent async writes, interleaved by fast-check's scheduler: whatever the
 * interleaving, a write starts only if its fence is at or above every fence that started before
 * it, and the gate's decisions match a sequential oracle applied in call order. Seeded.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DoubleGrantError, StaleFenceError } from '../errors.js';
import { FenceGate } from './fence-gate.js';

const seed = Number(process.env['FC_SEED'] ?? 20_261_130);

type Verdict = 'admitted' | 'stale' | 'double-grant';

const tokenArbitrary = fc.record({
  holderId: fc.constantFrom('agent-a', 'agent-b', 'agent-c'),
  fence: fc.integer({ min: 1, max: 8 }),
});

describe('FenceGate (interleaved async commits)', () => {
  it(`starts writes in non-decreasing fence order and decides each call as a sequential oracle would (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(tokenArbitrary, { minLength: 1, maxLength: 16 }), async (s, tokens) => {
        const gate = new FenceGate('slot');
        const calls: { holderId: string; fence: number; verdict: Verdict }[] = [];
        const startedFences: number[] = [];

        const tasks = tokens.map((token) =>
          s.schedule(Promise.resolve(token)).then(async (t) => {
            const call = { ...t, verdict: 'admitted' as Verdict };
            calls.push(call);
            try {
              await gate.commit({ resource: 'slot', ...t }, async () => {
                startedFences.push(t.fence);
                await s.schedule(Promise.resolve('write lands'));
              });
            } catch (error) {
              if (error instanceof StaleFenceError) call.verdict = 'stale';
              else if (error instanceof DoubleGrantError) call.verdict = 'double-grant';
              else throw error;
            }
          }),
        );
        await s.waitAll();
        await Promise.all(tasks);

        // Oracle: the gate's rule applied in call order.
        let floor: { fence: number; holderId: string } | undefined;
        const expected = calls.map(({ holderId, fence }): Verdict => {
          if (floor === undefined || fence > floor.fence) {
            floor = { fence, holderId };
            return 'admitted';
          }
          if (fence === floor.fence) return holderId === floor.holderId ? 'admitted' : 'double-grant';
          return 'stale';
        });
        expect(calls.map((c) => c.verdict)).toEqual(expected);
        expect(startedFences).toEqual([...startedFences].sort((a, b) => a - b));
        expect(gate.floor).toEqual(floor);
        expect(gate.rejections.map((r) => r.seq)).toEqual(gate.rejections.map((_, i) => i + 1));
        expect(gate.rejections.every((r) => r.rejected.fence <= r.current.fence)).toBe(true);
      }),
      { seed, numRuns: 200 },
    );
  });
});
