/**
 * The search: fast-check generates worlds ({@link WorldInput}) for a scenario, runs each one,
 * and on the first violation shrinks it to a small counterexample whose trace reads as a
 * timeline. Seeds come from the caller (the CI set is fixed; `FC_SEED` or `--seed` overrides),
 * and fast-check's `{ seed, path }` replays any run exactly.
 *
 * fast-check does the generation: seeded, and the seed is printed on failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Defect } from './defects.js';
import { INVARIANTS, type InvariantId, type Violation } from './invariants.js';
import type { Scenario } from './scenarios.js';
import { CHOICE_RANGE } from './world/choices.js';
import {
  HarnessError,
  runWorld,
  type FaultInput,
  type FaultKind,
  type RunResult,
  type RunStats,
  type WorldInput,
} from './world.js';

/**
 * The seed of a suite: `FC_SEED` from the environment when given (to replay or explore), else
 * the suite's fixed CI seed. @throws RangeError if `FC_SEED` is not an integer.
 */
export function seedFromEnvironment(fixedSeed: number): number {
  const text = process.env.FC_SEED;
  if (text === undefined || text === '') return fixedSeed;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`FC_SEED must be an integer, got ${JSON.stringify(text)}`);
  return seed;
}

/** The most agents any scenario has: the drift list covers the coordinator machine and these. */
const MAX_MACHINES = 8;

/** fast-check's arbitrary of one run's world, within `scenario`. */
export function worldInputArbitrary(scenario: Scenario): fc.Arbitrary<WorldInput> {
  const choice = fc.integer({ min: 0, max: CHOICE_RANGE - 1 });
  const kinds: FaultKind[] = [];
  if (scenario.faults.coordinatorCrashes > 0) kinds.push('coordinator-crash');
  if (scenario.faults.resourceRestarts > 0) kinds.push('resource-restart');
  if (scenario.faults.partitions > 0) kinds.push('partition');
  if (scenario.faults.driftChanges > 0) kinds.push('clock-drift');
  if (scenario.faults.logOutages > 0) kinds.push('log-outage');
  const budget =
    scenario.faults.coordinatorCrashes +
    scenario.faults.resourceRestarts +
    scenario.faults.partitions +
    scenario.faults.driftChanges +
    scenario.faults.logOutages;
  const fault: fc.Arbitrary<FaultInput> = fc.record({
    atMillis: fc.integer({ min: 0, max: scenario.horizonMillis[1] }),
    kind: kinds.length === 0 ? fc.constant<FaultKind>('clock-drift') : fc.constantFrom(...kinds),
    target: fc.nat({ max: 16 }),
    durationMillis: fc.integer({ min: scenario.faults.minDownMillis, max: scenario.faults.maxDownMillis }),
    landInFlight: fc.boolean(),
    driftPermille: fc.integer({ min: -1000, max: 1000 }),
  });
  // Key order is shrink order: a shorter horizon first (every later candidate runs faster), then
  // a benign tail and fewer faults, which shorten a trace the most.
  return fc.record({
    horizonMillis: fc.integer({ min: scenario.horizonMillis[0], max: scenario.horizonMillis[1] }),
    tailSeed: fc.nat(),
    faults: fc.array(fault, { maxLength: budget === 0 ? 0 : budget + 2 }),
    agents: fc.integer({ min: scenario.agents[0], max: scenario.agents[1] }),
    resources: fc.integer({ min: scenario.resources[0], max: scenario.resources[1] }),
    driftsPermille: fc.array(fc.integer({ min: -1000, max: 1000 }), {
      minLength: MAX_MACHINES,
      maxLength: MAX_MACHINES,
    }),
    network: fc.array(choice, { maxLength: 400 }),
    behaviour: fc.array(choice, { maxLength: 200 }),
    timing: fc.array(choice, { maxLength: 100 }),
  });
}

/** Options of {@link search}. */
export interface SearchOptions {
  readonly scenario: Scenario;
  /** Inject this defect (falsification); absent = the real code. */
  readonly defect?: Defect;
  /** fast-check seed. */
  readonly seed: number;
  /** Runs to try before concluding no violation is reachable within the budget. */
  readonly numRuns: number;
  /** Most runs spent shrinking a counterexample (deterministic cap). @defaultValue 400 */
  readonly shrinkBudget?: number;
}

/** What a search found. */
export interface SearchResult {
  readonly scenario: string;
  readonly defect: string | undefined;
  readonly seed: number;
  /** Runs executed up to and including the first failing one (all of them when none failed). */
  readonly runs: number;
  /** Simulated time of those runs (ms). */
  readonly virtualMillis: number;
  /** The first violation's invariant and message, as found before shrinking. */
  readonly firstViolation: Violation | undefined;
  /** The shrunk counterexample's violation and its trace (a timeline). */
  readonly shrunk:
    { readonly violation: Violation; readonly trace: readonly string[]; readonly input: WorldInput } | undefined;
  /** fast-check's path of the counterexample, for replay with the same seed. */
  readonly path: string | undefined;
  readonly shrinkRuns: number;
  /** Sums over the runs counted in `runs`. */
  readonly totals: Omit<RunStats, 'heldFraction' | 'virtualMillis' | 'checks'> & { readonly heldFractionSum: number };
  /** Invariant checks performed over those runs. */
  readonly checks: Readonly<Record<InvariantId, number>>;
}

/** A violation, as thrown inside the property (fast-check prints its message with the seed). */
export class SimulationViolationError extends Error {
  constructor(readonly result: RunResult & { readonly violation: Violation }) {
    super(
      `${result.violation.invariant}: ${result.violation.message}\n${INVARIANTS[result.violation.invariant]}\n--- trace ---\n${result.trace.join('\n')}`,
    );
    this.name = 'SimulationViolationError';
  }
}

/**
 * Runs the search. Never throws for a violation (it is in the result); rethrows a
 * {@link HarnessError} (the harness broke, which is a bug to fix, not a finding).
 */
export async function search(options: SearchOptions): Promise<SearchResult> {
  const { scenario, defect, seed, numRuns } = options;
  const shrinkBudget = options.shrinkBudget ?? 400;
  const sqliteDir = scenario.log === 'sqlite' ? mkdtempSync(join(tmpdir(), 'lease-fence-sim-')) : undefined;
  let executions = 0;
  let runs = 0;
  let virtualMillis = 0;
  let shrinkRuns = 0;
  let firstViolation: Violation | undefined;
  let lastFailing: { result: RunResult & { violation: Violation }; input: WorldInput } | undefined;
  const checks = Object.fromEntries(Object.keys(INVARIANTS).map((id) => [id, 0])) as Record<InvariantId, number>;
  const totals = {
    grants: 0,
    renewals: 0,
    writesApplied: 0,
    refusedWrites: 0,
    heldFractionSum: 0,
    coordinatorCrashes: 0,
    coordinatorReopens: 0,
    takeovers: 0,
    messages: 0,
    messagesLost: 0,
  };

  const property = fc.asyncProperty(worldInputArbitrary(scenario), async (input) => {
    if (firstViolation !== undefined) {
      shrinkRuns += 1;
      if (shrinkRuns > shrinkBudget) return true; // budget spent: keep the smallest counterexample so far
    }
    executions += 1;
    const sqliteFile = sqliteDir === undefined ? undefined : join(sqliteDir, `run-${executions}.db`);
    let result: RunResult;
    try {
      result = await runWorld(scenario, input, {
        ...(defect === undefined ? {} : { defect: defect.hooks }),
        ...(sqliteFile === undefined ? {} : { sqliteFile }),
      });
    } finally {
      if (sqliteFile !== undefined)
        for (const suffix of ['', '-wal', '-shm']) rmSync(sqliteFile + suffix, { force: true });
    }
    if (firstViolation === undefined) {
      runs += 1;
      virtualMillis += result.stats.virtualMillis;
      totals.grants += result.stats.grants;
      totals.renewals += result.stats.renewals;
      totals.writesApplied += result.stats.writesApplied;
      totals.refusedWrites += result.stats.refusedWrites;
      totals.heldFractionSum += result.stats.heldFraction;
      totals.coordinatorCrashes += result.stats.coordinatorCrashes;
      totals.coordinatorReopens += result.stats.coordinatorReopens;
      totals.takeovers += result.stats.takeovers;
      totals.messages += result.stats.messages;
      totals.messagesLost += result.stats.messagesLost;
      for (const [id, count] of Object.entries(result.stats.checks)) checks[id as InvariantId] += count;
    }
    // While shrinking, only the first violation's invariant counts as a failure: the
    // counterexample must not slip to another bug on the way down.
    if (
      result.violation !== undefined &&
      (firstViolation === undefined || result.violation.invariant === firstViolation.invariant)
    ) {
      const failing = { ...result, violation: result.violation };
      firstViolation ??= result.violation;
      lastFailing = { result: failing, input };
      throw new SimulationViolationError(failing);
    }
    return true;
  });

  try {
    const details = await fc.check(property, { seed, numRuns, endOnFailure: false });
    if (details.failed && !(details.errorInstance instanceof SimulationViolationError)) {
      throw details.errorInstance instanceof HarnessError
        ? details.errorInstance
        : new HarnessError(`the property failed without a violation (seed ${seed})`, { cause: details.errorInstance });
    }
    return {
      scenario: scenario.name,
      defect: defect?.name,
      seed,
      runs,
      virtualMillis,
      firstViolation,
      shrunk:
        lastFailing === undefined
          ? undefined
          : { violation: lastFailing.result.violation, trace: lastFailing.result.trace, input: lastFailing.input },
      path: details.counterexamplePath ?? undefined,
      shrinkRuns: Math.min(shrinkRuns, shrinkBudget),
      totals,
      checks,
    };
  } finally {
    if (sqliteDir !== undefined) rmSync(sqliteDir, { recursive: true, force: true });
  }
}

/** A search result as text: the summary line, then the shrunk trace when there is one. */
export function describeSearch(result: SearchResult): string {
  const head =
    `${result.defect === undefined ? 'real code' : `defect ${result.defect}`} in ${result.scenario}: seed ${result.seed}, ${result.runs} runs, ` +
    `${(result.virtualMillis / 3_600_000).toFixed(2)} virtual hours`;
  if (result.shrunk === undefined) return `${head}, no violation`;
  return (
    `${head}, found ${result.firstViolation?.invariant}; shrunk in ${result.shrinkRuns} runs (path ${result.path}) to:\n` +
    `${result.shrunk.violation.invariant}: ${result.shrunk.violation.message}\n${result.shrunk.trace.join('\n')}`
  );
}
