/**
 * The crash/recovery worlds again, on the SQLite event log (a temp file per run, reopened by
 * every coordinator boot): a smaller fixed seed set than the memory-log suite, since each run
 * opens real database files. FC_SEED overrides the seed.
 */
import { describe, expect, it } from 'vitest';
import { DEFECTS } from './defects.js';
import { SCENARIOS, onSqlite } from './scenarios.js';
import { describeSearch, search, seedFromEnvironment } from './search.js';

const SEED = seedFromEnvironment(20_261_013);

describe('simulation on the SQLite event log', () => {
  it.each([
    ['crash-recovery', 80],
    ['everything', 40],
  ] as const)(
    '%s: finds no invariant violation in %i worlds whose coordinator recovers from a SQLite file',
    async (name, numRuns) => {
      // Act
      const result = await search({ scenario: onSqlite(SCENARIOS[name]), seed: SEED, numRuns });
      // Assert
      expect(result.firstViolation, describeSearch(result)).toBeUndefined();
      expect(result.runs).toBe(numRuns);
      expect(result.totals.coordinatorCrashes).toBeGreaterThan(0);
      expect(result.checks['I5-ack-durable']).toBeGreaterThan(0);
    },
  );

  it('still catches a log adapter that acknowledges before the write is durable', async () => {
    const defect = DEFECTS['ack-before-durable'];
    const result = await search({
      scenario: onSqlite(SCENARIOS[defect.scenario]),
      defect,
      seed: SEED,
      numRuns: 300,
      shrinkBudget: 100,
    });
    expect(result.firstViolation, `not caught in 300 runs (seed ${SEED})`).toBeDefined();
    expect(defect.caughtBy).toContain(result.firstViolation!.invariant);
  });
});
