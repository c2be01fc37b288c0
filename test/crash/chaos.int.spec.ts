/**
 * The short chaos run of `npm test` (see `chaos.ts`): the coordinator and the gate (a
 * `lease-fence-gate` sidecar per resource) killed with SIGKILL in both orders, a few cycles, with
 * the agents on each transport (HTTP, and the agent link WebSocket). `CHAOS_CYCLES` / `CHAOS_SEED` set a
 * longer run (`npm run chaos -- --cycles 50` does), which also prints its figures.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COORDINATOR_MAIN } from '../support/coordinator-process.js';
import { GATE_MAIN, runChaos } from './chaos.js';

const cycles = Number(process.env['CHAOS_CYCLES'] ?? '2');
const seed = Number(process.env['CHAOS_SEED'] ?? '2026');

describe.skipIf(!existsSync(COORDINATOR_MAIN) || !existsSync(GATE_MAIN))(
  'chaos: coordinator and gate killed with SIGKILL under the demo workload',
  () => {
    it.each(['http', 'websocket'] as const)(
      `loses no refusal and no acknowledged grant over ${cycles} kill cycles in both orders (seed ${seed}), agents over %s`,
      async (transport) => {
        // Arrange / Act
        const report = await runChaos({
          cycles,
          seed,
          transport,
          log: process.env['CHAOS_VERBOSE'] === '1' ? (line) => console.log(line) : undefined,
        });
        console.log(`chaos figures: ${JSON.stringify(report)}`);

        // Assert
        expect(report.refusalsDurable).toBeGreaterThan(0);
        expect(report.refusalsAnswered).toBeGreaterThan(0);
        expect(report.coordinatorFirst + report.gateFirst).toBe(cycles);
        expect(report).toMatchObject({
          refusalsMissingFromLog: 0,
          refusalsLoggedTwice: 0,
          refusalsWithOtherContent: 0,
          seqGaps: 0,
          rejectionsMissingEvents: 0,
          grantsLost: 0,
        });
        expect(report.refusalsLogged).toBe(report.refusalsDurable);
      },
      300_000 + cycles * 60_000,
    );
  },
);
