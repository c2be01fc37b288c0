/**
 * Keeps the simulation guide (`docs/simulation.md`) honest: each ```text trace in it must be the shrunk
 * counterexample the search prints for its defect with the seed and budgets quoted there.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFECTS, type DefectName } from './defects.js';
import { SCENARIOS } from './scenarios.js';
import { search } from './search.js';

const GUIDE = readFileSync(new URL('../../docs/simulation.md', import.meta.url), 'utf8');

function simulationSection(): string {
  const start = GUIDE.indexOf('<!-- section:simulation:start -->');
  const end = GUIDE.indexOf('<!-- section:simulation:end -->');
  if (start < 0 || end < start) throw new Error('docs/simulation.md has no simulation section markers');
  return GUIDE.slice(start, end);
}

/** The ```text blocks of the section, each with the defect named in backticks in the paragraph before it. */
function traceBlocks(section: string): { defect: DefectName; lines: string[] }[] {
  const blocks: { defect: DefectName; lines: string[] }[] = [];
  const pattern = /`([a-z-]+)` \(I\d\):[^`]*?```text\n([\s\S]*?)\n```/g;
  for (const match of section.matchAll(pattern)) {
    blocks.push({ defect: match[1] as DefectName, lines: match[2]!.split('\n') });
  }
  return blocks;
}

describe('the simulation guide', () => {
  const blocks = traceBlocks(simulationSection());

  it('shows at least one shrunk trace', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((block) => [block.defect, block] as const))(
    '%s: its trace is what the search prints for seed 2026',
    async (name, block) => {
      // Arrange: the long search's parameters (seed 2026, 2000 runs to find, 1500 to shrink)
      const defect = DEFECTS[name];
      // Act
      const result = await search({
        scenario: SCENARIOS[defect.scenario],
        defect,
        seed: 2026,
        numRuns: 2000,
        shrinkBudget: 1500,
      });
      // Assert: every quoted line appears, in order, in the shrunk trace
      const trace = result.shrunk?.trace ?? [];
      let from = 0;
      for (const line of block.lines) {
        const index = trace.indexOf(line, from);
        expect(
          index,
          `guide line not in the trace of ${name}:\n${line}\n--- trace ---\n${trace.join('\n')}`,
        ).toBeGreaterThanOrEqual(from);
        from = index + 1;
      }
    },
  );
});
