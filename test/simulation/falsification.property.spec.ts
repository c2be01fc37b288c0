/**
 * Falsification: each defect of `defects.ts` is injected on its own, and the search must find
 * a violation of one of the invariants expected to catch it within its budget — otherwise the
 * simulator would be too weak to trust its silence about the real code. Prints, per defect,
 * how many runs and how much virtual time the search needed, and the shrunk trace's length
 * (`SIM_TRACES=1` prints the traces themselves).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFECTS, REQUIRED_DEFECTS, type DefectName } from './defects.js';
import { falsificationTable } from './report.js';
import { SCENARIOS, inDefaultMode } from './scenarios.js';
import { describeSearch, search, seedFromEnvironment, type SearchResult } from './search.js';

const SEED = seedFromEnvironment(20_261_011);
/** Runs the search may spend to find each defect before the test fails. */
const FIND_BUDGET = 800;
/** Runs spent shrinking each counterexample (a deterministic cap). */
const SHRINK_BUDGET = 500;

const results: SearchResult[] = [];
const defects = Object.keys(DEFECTS) as DefectName[];

describe('falsification: the search catches each defect', () => {
  afterAll(() => {
    if (results.length === 0) return;
    console.log(`falsification (seed ${SEED}, budget ${FIND_BUDGET} runs):\n${falsificationTable(results)}`);
    if (process.env.SIM_TRACES === '1') for (const result of results) console.log(describeSearch(result));
  });

  it('covers every defect the issue names', () => {
    expect(defects).toEqual(expect.arrayContaining([...REQUIRED_DEFECTS]));
  });

  describe.each(defects.map((name) => [name, DEFECTS[name]] as const))('%s', (_name, defect) => {
    it(`is caught by ${defect.caughtBy.join(' or ')} within ${FIND_BUDGET} runs of ${defect.scenario}, shrunk to a timeline`, async () => {
      // Act
      const result = await search({
        scenario: SCENARIOS[defect.scenario],
        defect,
        seed: SEED,
        numRuns: FIND_BUDGET,
        shrinkBudget: SHRINK_BUDGET,
      });
      results.push(result);
      // Assert
      expect(
        result.firstViolation,
        `${defect.name} was not caught in ${FIND_BUDGET} runs (seed ${SEED})`,
      ).toBeDefined();
      expect(defect.caughtBy).toContain(result.firstViolation!.invariant);
      expect(result.shrunk?.violation.invariant).toBe(result.firstViolation!.invariant);
      expect(result.shrunk!.trace.some((line) => line.includes(`VIOLATION ${result.firstViolation!.invariant}`))).toBe(
        true,
      );
    });
  });

  it('shows I10 is not kept in the default mode: the real code, fence-first off, lets an older fence write after a newer grant was acknowledged', async () => {
    // Act: the fence-first world with grants active at once, no defect injected
    const result = await search({
      scenario: inDefaultMode(SCENARIOS['fence-first']),
      seed: SEED,
      numRuns: FIND_BUDGET,
      shrinkBudget: SHRINK_BUDGET,
    });
    results.push(result);
    // Assert
    expect(
      result.firstViolation?.invariant,
      'the default mode kept I10 in every run: the simulation cannot tell the modes apart',
    ).toBe('I10-fenced-before-active');
  });

  it('finds the same counterexample, with the same trace, for the same seed', async () => {
    // Arrange
    const defect = DEFECTS['gate-strict-greater'];
    const options = {
      scenario: SCENARIOS[defect.scenario],
      defect,
      seed: SEED,
      numRuns: FIND_BUDGET,
      shrinkBudget: 60,
    };
    // Act
    const first = await search(options);
    const second = await search(options);
    // Assert
    expect(first.shrunk).toBeDefined();
    expect(second.runs).toBe(first.runs);
    expect(second.path).toBe(first.path);
    expect(second.shrunk!.trace.join('\n')).toBe(first.shrunk!.trace.join('\n'));
  });
});
