/**
 * The simulated worlds the search explores. A scenario fixes the shape and the hostility of a
 * world (how lossy the network, how long the stalls, which faults may happen); fast-check then
 * generates, within it, the number of agents and resources, the horizon, the fault schedule and
 * the choice streams of each run.
 */
import type { AgentOptions } from './nodes/agent.js';
import type { CoordinatorShell } from './nodes/coordinator-machine.js';
import type { LogKind } from './nodes/simulated-disk.js';
import type { NetworkProfile } from './world/network.js';

/** The agent options a scenario sets (the rest — identity, clock, resources — come from the world). */
type AgentBehaviourKnob =
  | 'requestTimeoutMillis'
  | 'maxRetries'
  | 'minThinkMillis'
  | 'maxThinkMillis'
  | 'minStallMillis'
  | 'maxStallMillis'
  | 'longStallProbability'
  | 'longStallMaxMillis'
  | 'maxWritesPerLease'
  | 'admitProbability';

/** Which faults a scenario may inject, and how many of each at most per run. */
export interface FaultBudget {
  readonly coordinatorCrashes: number;
  readonly resourceRestarts: number;
  readonly partitions: number;
  /** Changes of a machine's clock rate (within the drift bound). */
  readonly driftChanges: number;
  /**
   * Event log outages: every call fails with EventLogUnavailableError for the fault's duration,
   * and appends due meanwhile are lost or written anyway (outcome unknown), so the supervisor
   * backs off, re-opens on the same log and burns the failed coordinator's fences.
   */
  readonly logOutages: number;
  /** Shortest and longest downtime of a crash or restart, and length of a partition (ms). */
  readonly minDownMillis: number;
  readonly maxDownMillis: number;
}

/** A simulated world's shape. Durations are milliseconds. */
export interface Scenario {
  readonly name: string;
  /** What this scenario stresses, for the report. */
  readonly description: string;
  readonly agents: readonly [min: number, max: number];
  readonly resources: readonly [min: number, max: number];
  /** Lease TTL (coordinator default and every request's). */
  readonly ttlMillis: number;
  /** Active simulated time per run (then a drain phase without faults). */
  readonly horizonMillis: readonly [min: number, max: number];
  /** Largest clock drift, as a fraction: rates lie in [1 - maxDrift, 1 + maxDrift]. */
  readonly maxDrift: number;
  readonly network: NetworkProfile;
  /** The agents' behaviour: {@link AgentOptions}' knobs, with renewal as a fraction of the TTL. */
  readonly agent: Pick<AgentOptions, AgentBehaviourKnob> & {
    /** Renew when less than this fraction of the TTL is left. */
    readonly renewBelowFraction: number;
  };
  readonly faults: FaultBudget;
  readonly log: LogKind;
  readonly shell: CoordinatorShell;
  readonly snapshotEvery: number;
  readonly sweepIntervalMillis: number;
  readonly checkpointIntervalMillis: number;
  readonly appendMillis: readonly [min: number, max: number];
  readonly writeMillis: readonly [min: number, max: number];
  /** Whether resources keep data, floor and outbox across restarts ('mixed': the 2nd is volatile, the others durable). */
  readonly resourceStore: 'durable' | 'volatile' | 'mixed';
  /** Gates report refusals to the coordinator. */
  readonly reporting: boolean;
  /**
   * Fence-first handover (`LEASE_FENCE_FENCE_FIRST=*`): every acquire becomes active only after
   * the resource's gate admitted the new fence; no answer within `timeoutMillis` burns it.
   * `undefined` = the default mode (grants are active at once).
   */
  readonly fenceFirst: { readonly timeoutMillis: number } | undefined;
  /** Check I10 (no write under an older fence once a newer grant was acknowledged). Kept by fence-first mode only. */
  readonly checkFencedBeforeActive: boolean;
  /**
   * A standby process beside the active one (`LEASE_FENCE_ROLE=standby`, heartbeats on): it takes
   * over once the log was silent for `takeoverAfterMillis`; a crashed process comes back as a
   * standby. `undefined` = one process, restarted after each crash.
   */
  readonly standby: { readonly takeoverAfterMillis: number } | undefined;
}

const TTL_MILLIS = 1000;

const base: Scenario = {
  name: 'base',
  description: '',
  agents: [2, 4],
  resources: [1, 2],
  ttlMillis: TTL_MILLIS,
  horizonMillis: [4_000, 12_000],
  maxDrift: 0.01,
  network: {
    minDelayMillis: 1,
    maxDelayMillis: 60,
    dropProbability: 0,
    duplicateProbability: 0,
    slowProbability: 0,
    slowMaxDelayMillis: 60,
  },
  agent: {
    requestTimeoutMillis: 250,
    maxRetries: 3,
    minThinkMillis: 150,
    maxThinkMillis: 600,
    minStallMillis: 60,
    maxStallMillis: 300,
    longStallProbability: 0.05,
    longStallMaxMillis: 2_500,
    maxWritesPerLease: 4,
    admitProbability: 0.3,
    renewBelowFraction: 0.5,
  },
  faults: {
    coordinatorCrashes: 0,
    resourceRestarts: 0,
    partitions: 0,
    driftChanges: 3,
    logOutages: 0,
    minDownMillis: 1,
    maxDownMillis: 1_500,
  },
  log: 'memory',
  shell: 'durable',
  snapshotEvery: 10_000,
  sweepIntervalMillis: 200,
  checkpointIntervalMillis: 250,
  appendMillis: [0, 8],
  writeMillis: [0, 120],
  resourceStore: 'durable',
  reporting: true,
  fenceFirst: undefined,
  checkFencedBeforeActive: false,
  standby: undefined,
};

/** Every scenario, by name. */
export const SCENARIOS = {
  calm: {
    ...base,
    name: 'calm',
    description: 'Reliable network with small delays, drifting clocks, ordinary stalls; gates do not report refusals.',
    reporting: false,
  },
  stalls: {
    ...base,
    name: 'stalls',
    description:
      'Holders stall between their check and their write, often longer than the TTL (GC pauses, slow model calls).',
    agent: { ...base.agent, longStallProbability: 0.35, longStallMaxMillis: 3_000, maxStallMillis: 600 },
    writeMillis: [0, 300],
  },
  'lossy-network': {
    ...base,
    name: 'lossy-network',
    description:
      'Drops, duplicates and slow paths that reorder messages far behind later ones; requests retried with the same requestId.',
    network: {
      minDelayMillis: 1,
      maxDelayMillis: 150,
      dropProbability: 0.15,
      duplicateProbability: 0.15,
      slowProbability: 0.08,
      slowMaxDelayMillis: 3_500,
    },
    faults: { ...base.faults, partitions: 3 },
  },
  'crash-recovery': {
    ...base,
    name: 'crash-recovery',
    description:
      'Coordinator crashes (in-flight appends land or are lost) and recovers from the log; snapshots every 12 events; partitions.',
    network: {
      ...base.network,
      dropProbability: 0.05,
      duplicateProbability: 0.05,
      slowProbability: 0.03,
      slowMaxDelayMillis: 2_000,
    },
    faults: { ...base.faults, coordinatorCrashes: 4, partitions: 2 },
    snapshotEvery: 12,
    appendMillis: [0, 40],
    sweepIntervalMillis: 300,
  },
  'resource-restarts': {
    ...base,
    name: 'resource-restarts',
    description:
      'Resources restart: slot-a and slot-c keep data, floor and report outbox (durable), slot-b comes back empty (volatile).',
    resources: [1, 3],
    agent: { ...base.agent, longStallProbability: 0.35 },
    network: { ...base.network, dropProbability: 0.05, slowProbability: 0.12, slowMaxDelayMillis: 2_500 },
    faults: { ...base.faults, resourceRestarts: 4, maxDownMillis: 600 },
    resourceStore: 'mixed',
  },
  everything: {
    ...base,
    name: 'everything',
    description:
      'All of the above at once, and event log outages (the coordinator re-opens on the log, burning the fences of a failed append).',
    agent: { ...base.agent, longStallProbability: 0.2 },
    network: {
      minDelayMillis: 1,
      maxDelayMillis: 120,
      dropProbability: 0.1,
      duplicateProbability: 0.1,
      slowProbability: 0.05,
      slowMaxDelayMillis: 3_000,
    },
    faults: {
      coordinatorCrashes: 3,
      resourceRestarts: 2,
      partitions: 2,
      driftChanges: 4,
      logOutages: 2,
      minDownMillis: 1,
      maxDownMillis: 1_500,
    },
    snapshotEvery: 16,
    appendMillis: [0, 30],
    writeMillis: [0, 200],
    sweepIntervalMillis: 300,
    resourceStore: 'mixed',
  },
  'fence-first': {
    ...base,
    name: 'fence-first',
    description:
      'Fence-first handover: a grant is acknowledged only after the gate durably admitted its fence (burned after 200 ms without); stalls, loss, partitions, coordinator crashes and resource restarts (durable stores). Checks I10.',
    agent: { ...base.agent, longStallProbability: 0.3, longStallMaxMillis: 3_000, maxStallMillis: 600 },
    network: {
      minDelayMillis: 1,
      maxDelayMillis: 80,
      dropProbability: 0.05,
      duplicateProbability: 0.05,
      slowProbability: 0.03,
      slowMaxDelayMillis: 2_000,
    },
    faults: { ...base.faults, coordinatorCrashes: 2, resourceRestarts: 2, partitions: 2, maxDownMillis: 1_000 },
    appendMillis: [0, 30],
    writeMillis: [0, 200],
    fenceFirst: { timeoutMillis: 200 },
    checkFencedBeforeActive: true,
  },
  'standby-takeover': {
    ...base,
    name: 'standby-takeover',
    description:
      'An active coordinator and a standby on one log: crashes and log outages make the standby take over (heartbeats every 250 ms, takeover after 750 ms of silence); a crashed process returns as a standby; partitions, loss.',
    network: {
      ...base.network,
      dropProbability: 0.05,
      duplicateProbability: 0.05,
      slowProbability: 0.03,
      slowMaxDelayMillis: 2_000,
    },
    faults: { ...base.faults, coordinatorCrashes: 3, logOutages: 2, partitions: 2 },
    snapshotEvery: 16,
    appendMillis: [0, 30],
    sweepIntervalMillis: 300,
    standby: { takeoverAfterMillis: 750 },
  },
} satisfies Record<string, Scenario>;

/** A scenario's name. */
export type ScenarioName = keyof typeof SCENARIOS;

/** The same world driven through the DeciderShell (the shell the coordinator-side defects need). */
export const onDeciderShell = (scenario: Scenario): Scenario => ({
  ...scenario,
  name: `${scenario.name}/decider-shell`,
  shell: 'decider',
});

/** The same world on the SQLite log (a temp file per run). */
export const onSqlite = (scenario: Scenario): Scenario => ({
  ...scenario,
  name: `${scenario.name}/sqlite`,
  log: 'sqlite',
});

/**
 * The same world in the default mode (grants active at once), still checking I10: what the
 * fence-first invariant looks like when nothing keeps it.
 */
export const inDefaultMode = (scenario: Scenario): Scenario => ({
  ...scenario,
  name: `${scenario.name}/default-mode`,
  fenceFirst: undefined,
  checkFencedBeforeActive: true,
});
