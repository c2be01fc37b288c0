/**
 * The demo's settings, read once from the environment (the only reader of `process.env` in the
 * demo). Units are in the names; every value is checked and a bad one names the variable.
 */

/** Everything the demo can be told. */
export interface DemoConfig {
  /** The coordinator's base URL (`LEASE_FENCE_URL`). */
  readonly coordinatorUrl: string;
  /** The coordinator's tokens file (`LEASE_FENCE_TOKENS_FILE`): agent tokens and a gate token. */
  readonly tokensFile: string;
  /** The demo's data directory (`LEASE_FENCE_DEMO_DIR`): each slot's gate keeps its floor and refusal outbox in `gates/<slot>` under it. @defaultValue `./data/demo` */
  readonly dataDir: string;
  /** Contending agents (`DEMO_AGENTS`); at most one per agent token. @defaultValue 4 */
  readonly agents: number;
  /** The resources they contend for (`DEMO_RESOURCES`, comma-separated). @defaultValue deploy-slot-a,b,c */
  readonly resources: readonly string[];
  /** Lease duration asked for, in milliseconds (`DEMO_TTL_MILLIS`). @defaultValue 3000 */
  readonly ttlMillis: number;
  /** Holder-side clock skew allowance, in milliseconds (`DEMO_CLOCK_SKEW_MILLIS`). @defaultValue 100 */
  readonly clockSkewMillis: number;
  /** Shortest and longest simulated model call, in milliseconds (`DEMO_MODEL_CALL_MILLIS`, `min-max`). @defaultValue 500-6000 */
  readonly modelCallMillis: { readonly min: number; readonly max: number };
  /** Probability that a model call stalls the whole agent (blocked event loop: no renewals) (`DEMO_STALL_PROBABILITY`). @defaultValue 0.3 */
  readonly stallProbability: number;
  /** Probability that the demo's proxy drops a lease reply after the coordinator processed it (`DEMO_LOST_REPLY_RATE`). @defaultValue 0.1 */
  readonly lostReplyRate: number;
  /** Kill -9 and restart one slot's gate (in turn) this often, in milliseconds; 0 = never (`DEMO_RESOURCE_RESTART_EVERY_MILLIS`). @defaultValue 25000 */
  readonly resourceRestartEveryMillis: number;
  /** Stop by itself after this long, in milliseconds; 0 = run until SIGINT/SIGTERM (`DEMO_DURATION_MILLIS`). @defaultValue 0 */
  readonly durationMillis: number;
  /** Seed of the agents' choices (`DEMO_SEED`). @defaultValue random */
  readonly seed: number;
}

/**
 * Reads the demo's configuration from `env`.
 * @throws Error naming the variable, the expected form and the value received.
 */
export const readDemoConfig = (env: Readonly<Record<string, string | undefined>>): DemoConfig => {
  const required = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`${name} must be set`);
    return value;
  };
  const number = (name: string, fallback: number, check: (value: number) => boolean, expected: string): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!check(value)) throw new Error(`${name} must be ${expected}, got ${JSON.stringify(raw)}`);
    return value;
  };
  const integerAtLeast = (minimum: number) => (value: number) => Number.isSafeInteger(value) && value >= minimum;
  const probability = (value: number) => Number.isFinite(value) && value >= 0 && value <= 1;

  const coordinatorUrl = required('LEASE_FENCE_URL');
  try {
    new URL(coordinatorUrl);
  } catch {
    throw new Error(`LEASE_FENCE_URL must be an absolute URL, got ${JSON.stringify(coordinatorUrl)}`);
  }
  const resources = (env['DEMO_RESOURCES'] ?? 'deploy-slot-a,deploy-slot-b,deploy-slot-c')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (resources.length === 0) throw new Error('DEMO_RESOURCES must name at least one resource');
  const range = /^(\d+)-(\d+)$/.exec(env['DEMO_MODEL_CALL_MILLIS'] ?? '500-6000');
  const modelCallMillis = range === null ? undefined : { min: Number(range[1]), max: Number(range[2]) };
  if (modelCallMillis === undefined || modelCallMillis.min > modelCallMillis.max) {
    throw new Error(
      `DEMO_MODEL_CALL_MILLIS must be min-max in milliseconds (min ≤ max), got ${JSON.stringify(env['DEMO_MODEL_CALL_MILLIS'])}`,
    );
  }
  const ttlMillis = number('DEMO_TTL_MILLIS', 3000, integerAtLeast(1), 'a positive integer (milliseconds)');
  const clockSkewMillis = number(
    'DEMO_CLOCK_SKEW_MILLIS',
    100,
    (value) => integerAtLeast(0)(value) && value < ttlMillis,
    `an integer in [0, ttl ${ttlMillis}) (milliseconds)`,
  );
  return {
    coordinatorUrl,
    tokensFile: required('LEASE_FENCE_TOKENS_FILE'),
    dataDir: env['LEASE_FENCE_DEMO_DIR'] ?? 'data/demo',
    agents: number('DEMO_AGENTS', 4, integerAtLeast(1), 'a positive integer'),
    resources,
    ttlMillis,
    clockSkewMillis,
    modelCallMillis,
    stallProbability: number('DEMO_STALL_PROBABILITY', 0.3, probability, 'a probability in [0, 1]'),
    lostReplyRate: number('DEMO_LOST_REPLY_RATE', 0.1, probability, 'a probability in [0, 1]'),
    resourceRestartEveryMillis: number(
      'DEMO_RESOURCE_RESTART_EVERY_MILLIS',
      25_000,
      integerAtLeast(0),
      'an integer ≥ 0 (milliseconds; 0 = never)',
    ),
    durationMillis: number(
      'DEMO_DURATION_MILLIS',
      0,
      integerAtLeast(0),
      'an integer ≥ 0 (milliseconds; 0 = until stopped)',
    ),
    seed: number('DEMO_SEED', Math.floor(Math.random() * 2 ** 31), integerAtLeast(0), 'a non-negative integer'),
  };
};
