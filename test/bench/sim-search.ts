/**
 * Longer simulation searches than CI's fixed seed set: the real code over every scenario, and
 * optionally the falsification suite with bigger budgets. Prints Markdown tables (the ones in
 * docs/simulation.md) and the shrunk trace of anything found. Exits 1 if the real code shows a
 * violation or a defect escapes its budget.
 *
 *   npm run simulate -- --runs 2000 --seed 7
 *   npm run simulate -- --runs 500 --scenario crash-recovery,everything --sqlite-runs 200 --defects
 *
 * Options: --runs N (per scenario, default 1000), --seed S (default 1), --scenario a,b (default
 * all), --decider-runs N and --sqlite-runs N (crash-recovery and everything on the DeciderShell /
 * the SQLite log, default 0), --defects (run the falsification searches), --defect-runs N
 * (budget per defect, default 2000), --defect a,b (only these defects, default all), --defect-seeds K (search each defect with seeds S … S+K-1,
 * shrinking only the first; default 1), --shrink N (shrink budget, default 1500), --traces (print
 * every shrunk trace), --no-real (skip the real-code searches). With --defects it also searches
 * the fence-first world in the default mode against I10, to show that mode does not keep it.
 */
import { performance } from 'node:perf_hooks';
import { DEFECTS, type DefectName } from '../simulation/defects.js';
import {
  falsificationSeriesTable,
  falsificationTable,
  livenessTable,
  type DefectSeries,
} from '../simulation/report.js';
import {
  SCENARIOS,
  inDefaultMode,
  onDeciderShell,
  onSqlite,
  type Scenario,
  type ScenarioName,
} from '../simulation/scenarios.js';
import { describeSearch, search, type SearchResult } from '../simulation/search.js';

interface Options {
  readonly runs: number;
  readonly seed: number;
  readonly scenarios: readonly ScenarioName[];
  readonly deciderRuns: number;
  readonly sqliteRuns: number;
  readonly defects: boolean;
  /** The defects `--defects` searches (`--defect a,b`; default all). */
  readonly defectNames: readonly DefectName[];
  readonly defectRuns: number;
  readonly defectSeeds: number;
  readonly shrink: number;
  readonly traces: boolean;
  readonly real: boolean;
}

function parseArguments(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const count = (name: string, fallback: number): number => {
    const text = value(name);
    if (text === undefined) return fallback;
    const parsed = Number(text);
    if (!Number.isSafeInteger(parsed) || parsed < 0)
      throw new RangeError(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    return parsed;
  };
  const names = value('scenario')?.split(',') ?? Object.keys(SCENARIOS);
  for (const name of names) {
    if (!(name in SCENARIOS))
      throw new RangeError(
        `--scenario: unknown scenario ${JSON.stringify(name)}; known: ${Object.keys(SCENARIOS).join(', ')}`,
      );
  }
  const defectNames = value('defect')?.split(',') ?? Object.keys(DEFECTS);
  for (const name of defectNames) {
    if (!(name in DEFECTS))
      throw new RangeError(
        `--defect: unknown defect ${JSON.stringify(name)}; known: ${Object.keys(DEFECTS).join(', ')}`,
      );
  }
  return {
    runs: count('runs', 1000),
    defectNames: defectNames as DefectName[],
    seed: count('seed', 1),
    scenarios: names as ScenarioName[],
    deciderRuns: count('decider-runs', 0),
    sqliteRuns: count('sqlite-runs', 0),
    defects: argv.includes('--defects'),
    defectRuns: count('defect-runs', 2000),
    defectSeeds: Math.max(1, count('defect-seeds', 1)),
    shrink: count('shrink', 1500),
    traces: argv.includes('--traces'),
    real: !argv.includes('--no-real'),
  };
}

async function timed(label: string, run: () => Promise<SearchResult>): Promise<SearchResult> {
  const startedAt = performance.now();
  const result = await run();
  const seconds = (performance.now() - startedAt) / 1000;
  process.stderr.write(
    `${label}: ${result.runs} runs, ${(result.virtualMillis / 3_600_000).toFixed(1)} virtual hours, ` +
      `${result.firstViolation === undefined ? 'no violation' : result.firstViolation.invariant} (${seconds.toFixed(1)} s)\n`,
  );
  return result;
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  let failed = false;
  if (options.real) {
    const worlds: Scenario[] = options.scenarios.map((name) => SCENARIOS[name]);
    const plans: { scenario: Scenario; runs: number }[] = worlds.map((scenario) => ({ scenario, runs: options.runs }));
    for (const name of ['crash-recovery', 'everything'] as const) {
      if (options.deciderRuns > 0) plans.push({ scenario: onDeciderShell(SCENARIOS[name]), runs: options.deciderRuns });
      if (options.sqliteRuns > 0) plans.push({ scenario: onSqlite(SCENARIOS[name]), runs: options.sqliteRuns });
    }
    const results: SearchResult[] = [];
    for (const { scenario, runs } of plans) {
      results.push(
        await timed(scenario.name, () =>
          search({ scenario, seed: options.seed, numRuns: runs, shrinkBudget: options.shrink }),
        ),
      );
    }
    const runs = results.reduce((sum, result) => sum + result.runs, 0);
    const virtualHours = results.reduce((sum, result) => sum + result.virtualMillis, 0) / 3_600_000;
    const violations = results.filter((result) => result.firstViolation !== undefined);
    console.log(
      `## Real code (seed ${options.seed})\n\n${livenessTable(results)}\n\n` +
        `Total: ${runs} runs, ${virtualHours.toFixed(1)} virtual hours, ${violations.length} violations.\n`,
    );
    for (const result of violations) console.log(`${describeSearch(result)}\n`);
    failed ||= violations.length > 0;
  }
  if (options.defects) {
    const results: SearchResult[] = [];
    const series: DefectSeries[] = [];
    for (const name of options.defectNames) {
      const defect = DEFECTS[name];
      const perSeed: SearchResult[] = [];
      for (let offset = 0; offset < options.defectSeeds; offset += 1) {
        const seed = options.seed + offset;
        perSeed.push(
          await timed(`defect ${name} (seed ${seed})`, () =>
            search({
              scenario: SCENARIOS[defect.scenario],
              defect,
              seed,
              numRuns: options.defectRuns,
              shrinkBudget: offset === 0 ? options.shrink : 0,
            }),
          ),
        );
      }
      results.push(perSeed[0]!);
      series.push({ defect: name, scenario: defect.scenario, results: perSeed });
    }
    // Not a defect: the real code in the default mode, checked against fence-first's I10. It is
    // expected to be "caught": that is what shows the default mode does not keep I10.
    const defaultMode = inDefaultMode(SCENARIOS['fence-first']);
    const perSeed: SearchResult[] = [];
    for (let offset = 0; offset < options.defectSeeds; offset += 1) {
      const seed = options.seed + offset;
      perSeed.push(
        await timed(`default mode vs I10 (seed ${seed})`, () =>
          search({
            scenario: defaultMode,
            seed,
            numRuns: options.defectRuns,
            shrinkBudget: offset === 0 ? options.shrink : 0,
          }),
        ),
      );
    }
    results.push(perSeed[0]!);
    series.push({ defect: '(none: fence-first off)', scenario: defaultMode.name, results: perSeed });
    console.log(
      `## Falsification (seed ${options.seed}, budget ${options.defectRuns} runs per defect)\n\n${falsificationTable(results)}\n`,
    );
    if (options.defectSeeds > 1) {
      console.log(
        `## Falsification over ${options.defectSeeds} seeds (${options.seed} … ${options.seed + options.defectSeeds - 1})\n\n${falsificationSeriesTable(series)}\n`,
      );
      failed ||= series.some(({ results: perSeed }) => perSeed.some((result) => result.firstViolation === undefined));
    }
    for (const result of results) {
      const escaped = result.firstViolation === undefined;
      failed ||= escaped;
      if (options.traces || escaped) console.log(`${describeSearch(result)}\n`);
    }
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  },
);
