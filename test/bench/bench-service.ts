/**
 * `npm run bench:service`: our coordinator over HTTP (keep-alive, the durable SQLite log with
 * synchronous=FULL, bearer-token auth on) against etcd, Redis (appendfsync always) and the
 * harness's in-memory Node HTTP stand-in (`mock-http`), in ONE run of the shared peer harness
 * (`../shared/bench-peers/run.sh`, product-adapter option), so every system sees the same
 * workload (C agents, R resources, closed loop acquire → renew → release, same seconds) on the
 * same machine state, interleaved round by round. Prints one table with ratios.
 *
 * The harness is copied to a temp dir (its folder is read-only) and its `setup.sh` installs etcd
 * and Redis from apt and its two npm packages there. Everything it starts listens on 127.0.0.1,
 * is stopped by PID, and the temp dirs are removed at the end.
 *
 * Our coordinator runs over both of its transports, each a system of its own in the same run:
 * `lease-fence` (HTTP, one request per operation, `adapters/lease-fence-coordinator.mjs`) and
 * `lease-fence-ws` (the SDK's agent link: one WebSocket per workload agent, many operations in
 * flight per connection, `adapters/lease-fence-ws.mjs`). `--transports http,websocket` (the
 * default) picks them. The report ends with the issue's targets: `lease-fence-ws` acquires/s
 * against Redis (appendfsync always), its acquire p99 against 2 × Redis's, and HTTP against the
 * in-memory stand-in.
 *
 * `LEASE_FENCE_BENCH_CPU_PROF_DIR=<dir>` makes the coordinator write a CPU profile per round there.
 * Options (after `--`): `--seconds 10 --concurrency 32 --resources 64 --rounds 3
 * --systems etcd,redis-always,mock-http --modes default --transports http,websocket`. Figures, not a test: nothing here asserts.
 *
 * `--modes writer-inline,writer-thread` compares the SQLite writers (`LEASE_FENCE_SQLITE_WRITER`)
 * in one run.
 *
 * `--modes default,fence-first,lock-delay` runs our coordinator once per mode ({@link MODES}: the
 * environment each mode adds) in every round, interleaved (round 1: each mode, round 2: each
 * mode, …), each with the peers of `--systems` beside it, and adds a table of each mode against
 * `default`. There is no `signed` mode: every grant is signed (Ed25519) in every mode, `default`
 * included, so its figures already carry the cost of signing and there is no unsigned
 * configuration to compare them with.
 *
 * `--systems …,mock-ws` adds the agent link's ceiling: `support/mock-agent-link.mjs`, an in-memory,
 * non-durable `ws` server speaking the agent link's frames with a Map and a counter, driven by the
 * same SDK client through the same adapter as `lease-fence-ws` (what `mock-http` is for HTTP: what one
 * Node process serving WebSockets and JSON reaches here). It runs as a product of its own in every
 * round, beside Redis, and its CPU per operation is read like the coordinator's.
 *
 * `--baseline <dir>` adds the mode `baseline`: the coordinator built in `<dir>` (a `dist` of another
 * commit, e.g. built from `git archive main apps/coordinator`, placed under the repository so its
 * packages resolve), run with the default configuration. `--modes default,baseline` then measures
 * a change against the build before it in one run.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { cpuProfileArgs } from './support/coordinator-child.js';
import { benchPeersDir, machineLine, repoRoot } from './support/bench-env.js';
import { fixed, markdownTable, median } from './support/stats.js';
import { parseBenchArgs } from './support/bench-args.js';

const options = parseBenchArgs('service', {
  seconds: { type: 'string', default: '10' },
  concurrency: { type: 'string', default: '32' },
  resources: { type: 'string', default: '64' },
  rounds: { type: 'string', default: '3' },
  systems: { type: 'string', default: 'etcd,redis-always,mock-http' },
  modes: { type: 'string', default: 'default' },
  baseline: { type: 'string' },
  transports: { type: 'string', default: 'http,websocket' },
});
const concurrency = Number(options.concurrency);
const PRODUCT_LABEL = 'lease-fence';
/** Each transport of our coordinator: the harness adapter that drives it and its label (`lease-fence`, `lease-fence-ws`). */
const TRANSPORTS: Readonly<Record<string, { readonly adapter: string; readonly label: string }>> = {
  http: { adapter: 'lease-fence-coordinator.mjs', label: PRODUCT_LABEL },
  websocket: { adapter: 'lease-fence-ws.mjs', label: `${PRODUCT_LABEL}-ws` },
};
const WS_LABEL = TRANSPORTS.websocket!.label;
/** The agent link's in-memory stand-in (`--systems …,mock-ws`): not a harness system, so run here as a product of its own. */
const MOCK_WS = 'mock-ws';

/**
 * The coordinator's modes, as the environment each one adds to the default configuration. The
 * workload's leases never expire (TTL 10 s, released at once), so `lock-delay` measures what the
 * rules cost on every acquire, not a delay actually waited out. `fence-first` fences every
 * workload resource first: each acquire appends `FenceReserved`, asks the gate over its link,
 * waits for the gate's durable save, then appends `FenceAdmitted` + `LeaseGranted`.
 */
const MODES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  default: {},
  'fence-first': { LEASE_FENCE_FENCE_FIRST: 'res-*' },
  'lock-delay': { LEASE_FENCE_LOCK_DELAY: '*=5000' },
  // The SQLite writer of each kind, whatever the default is: `--modes writer-inline,writer-thread` is the A/B of issue 18 §1.
  'writer-inline': { LEASE_FENCE_SQLITE_WRITER: 'inline' },
  'writer-thread': { LEASE_FENCE_SQLITE_WRITER: 'thread' },
  baseline: {},
};
/** The coordinator's entry point of a mode, relative to the repository root: `--baseline`'s build for `baseline`, else this checkout's. */
const mainOf = (mode: string): string =>
  mode === 'baseline' ? join(options.baseline!, 'main.js') : 'apps/coordinator/dist/main.js';
/**
 * What each mode needs of the harness's client process: in `fence-first`, the adapter opens the
 * gate link for the workload's resources (`LEASE_FENCE_BENCH_GATE_LINK`, see
 * `adapters/lease-fence-coordinator.mjs`), so admits are answered as a deployed gate would.
 */
const HARNESS_ENV: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'fence-first': { LEASE_FENCE_BENCH_GATE_LINK: '1' },
};
const modes = options.modes.split(',').map((mode) => mode.trim());
const transports = options.transports.split(',').map((transport) => transport.trim());
for (const transport of transports) {
  if (TRANSPORTS[transport] === undefined) {
    console.error(
      `bench:service: --transports: unknown transport ${JSON.stringify(transport)}; known: ${Object.keys(TRANSPORTS).join(', ')}`,
    );
    process.exit(2);
  }
}
for (const mode of modes) {
  if (MODES[mode] === undefined) {
    console.error(
      `bench:service: --modes: unknown mode ${JSON.stringify(mode)}; known: ${Object.keys(MODES).join(', ')}`,
    );
    process.exit(2);
  }
  if (mode === 'baseline' && options.baseline === undefined) {
    console.error('bench:service: --modes baseline needs --baseline <dir of the baseline build (its main.js)>');
    process.exit(2);
  }
}
const harnessSystems = options.systems
  .split(',')
  .map((system) => system.trim())
  .filter((system) => system !== MOCK_WS);
const withMockWs = options.systems.split(',').some((system) => system.trim() === MOCK_WS);
if (harnessSystems.length === 0) {
  console.error(
    `bench:service: --systems needs at least one system of the harness besides ${MOCK_WS} (e.g. redis-always)`,
  );
  process.exit(2);
}
/** Our system's label in the harness's results: the transport's (`lease-fence`, `lease-fence-ws`), with `/<mode>` for a mode other than the default. */
const labelOf = (mode: string, transport: string): string =>
  mode === 'default' ? TRANSPORTS[transport]!.label : `${TRANSPORTS[transport]!.label}/${mode}`;
const isOurs = (system: string): boolean =>
  system === PRODUCT_LABEL ||
  system.startsWith(`${PRODUCT_LABEL}/`) ||
  system === WS_LABEL ||
  system.startsWith(`${WS_LABEL}/`);

/** One fsync probe line of the harness: what it measured and its figures (`p50_ms`, `p99_ms`, … milliseconds). */
interface ProbeLine {
  readonly probe: string;
  readonly result: { readonly p50_ms?: number } | undefined;
}

/** One workload result line of the harness (the fields this report uses). */
interface WorkloadResult {
  readonly system: string;
  readonly round: number;
  readonly acquire_attempts_per_s: number;
  readonly acquires_ok_per_s: number;
  readonly releases_per_s: number;
  readonly latency: Record<
    'acquire' | 'renew' | 'release',
    { readonly p50_ms: number | null; readonly p99_ms: number | null }
  >;
  readonly errors: { readonly acquire: number; readonly renew: number; readonly release: number };
  readonly fence_violations: number;
  readonly overlap_violations: number;
  readonly server_cpu_cores: number | null;
  readonly client_cpu_cores: number | null;
}

/** The adapter's side line for one round of our coordinator: memory, and the group commit read from its /metrics. */
interface MemoryRecord {
  readonly system: string;
  readonly round: number;
  readonly server_rss_mean_mib: number | null;
  readonly server_rss_peak_mib: number | null;
  /** Appends (each one transaction and one fsync) per second over the round, warm-up included. */
  readonly appends_per_s?: number | null;
  /** Commands acknowledged per append (mean). */
  readonly batch_commands_mean?: number | null;
  /** Events written per append (mean). */
  readonly batch_events_mean?: number | null;
  /** Milliseconds from an append's start until durable (mean). */
  readonly append_ms_mean?: number | null;
  /** The server process's CPU over the round per command it decided (microseconds; `/proc`, warm-up included). */
  readonly server_cpu_us_per_command?: number | null;
  /** The same for its main thread alone: the event loop, without the SQLite writer thread (microseconds). */
  readonly server_main_thread_cpu_us_per_command?: number | null;
}

/** Runs a command with inherited stderr; its stdout goes to our stderr (progress), so our stdout is only the report. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.pipe(process.stderr, { end: false });
    const stop = (): void => {
      if (child.exitCode === null && child.pid !== undefined) child.kill('SIGTERM'); // run.sh's own trap stops its servers by PID
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

/** Makes a copied read-only tree writable by its owner (setup.sh installs node_modules into it). */
function makeWritable(path: string): void {
  chmodSync(path, statSync(path).mode | 0o200);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

const readJsonLines = <T>(file: string): T[] => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as T);
};

/**
 * The issue's targets, each a ratio of medians in this run (printed when both systems ran):
 * the agent link's acquires/s ≥ 1.0 × Redis appendfsync-always's, its acquire p99 ≤ 2 × Redis's,
 * and HTTP's acquires/s ≥ 0.8 × the in-memory stand-in's.
 */
function printTargets(
  m: (system: string, pick: (r: WorkloadResult) => number | null | undefined) => number,
  systems: ReadonlySet<string>,
): void {
  const targets: [string, string, string, number, 'min' | 'max', number][] = [
    [WS_LABEL, 'redis-always', 'acquires ok/s', 1.0, 'min', 0],
    [WS_LABEL, 'redis-always', 'acquire p99', 2.0, 'max', 0],
    [PRODUCT_LABEL, 'mock-http', 'acquires ok/s', 0.8, 'min', 0],
  ];
  const rows = targets
    .filter(([ours, peer]) => systems.has(ours) && systems.has(peer))
    .map(([ours, peer, what, bound, kind]) => {
      const pick = (r: WorkloadResult): number | null =>
        what === 'acquire p99' ? r.latency.acquire.p99_ms : r.acquires_ok_per_s;
      const ratio = m(ours, pick) / m(peer, pick);
      const met = kind === 'min' ? ratio >= bound : ratio <= bound;
      return [
        `${ours} / ${peer}`,
        what,
        `× ${fixed(ratio, 2)}`,
        `${kind === 'min' ? '≥' : '≤'} ${bound}`,
        met ? 'met' : 'not met',
      ];
    });
  if (rows.length === 0) return;
  console.log('\ntargets (issue 18, medians of this run):\n');
  console.log(markdownTable(['ratio', 'of', 'measured', 'target', ''], rows));
}

/** Prints the report: per system medians over rounds, then our ratios to each peer. */
function report(
  results: readonly WorkloadResult[],
  memory: readonly MemoryRecord[],
  probes: readonly ProbeLine[],
): void {
  const systems = [...new Set(results.map((r) => r.system))];
  const per = new Map(systems.map((s) => [s, results.filter((r) => r.system === s)]));
  const m = (system: string, pick: (r: WorkloadResult) => number | null | undefined): number =>
    median((per.get(system) ?? []).map(pick));
  const rows = systems.map((s) => {
    const rs = per.get(s)!;
    const ok = rs.map((r) => r.acquires_ok_per_s);
    const ourMemory = memory.filter((x) => x.system === s);
    return [
      isOurs(s) ? `**${s}**` : s,
      String(rs.length),
      fixed(
        m(s, (r) => r.releases_per_s),
        0,
      ),
      fixed(
        m(s, (r) => r.acquires_ok_per_s),
        0,
      ),
      `${fixed(Math.min(...ok), 0)}..${fixed(Math.max(...ok), 0)}`,
      fixed(
        m(s, (r) => r.acquire_attempts_per_s),
        0,
      ),
      `${fixed(
        m(s, (r) => r.latency.acquire.p50_ms),
        2,
      )} / ${fixed(
        m(s, (r) => r.latency.acquire.p99_ms),
        1,
      )}`,
      `${fixed(
        m(s, (r) => r.latency.renew.p50_ms),
        2,
      )} / ${fixed(
        m(s, (r) => r.latency.renew.p99_ms),
        1,
      )}`,
      `${fixed(
        m(s, (r) => r.latency.release.p50_ms),
        2,
      )} / ${fixed(
        m(s, (r) => r.latency.release.p99_ms),
        1,
      )}`,
      `${fixed(
        m(s, (r) => r.server_cpu_cores),
        2,
      )} / ${fixed(
        m(s, (r) => r.client_cpu_cores),
        2,
      )}`,
      isOurs(s)
        ? `${fixed(median(ourMemory.map((x) => x.server_rss_mean_mib)), 0)} / ${fixed(median(ourMemory.map((x) => x.server_rss_peak_mib)), 0)}`
        : '',
      String(rs.reduce((n, r) => n + r.errors.acquire + r.errors.renew + r.errors.release, 0)),
      String(rs.reduce((n, r) => n + r.fence_violations + r.overlap_violations, 0)),
    ];
  });
  console.log(`\n## bench:service: ${machineLine()}`);
  console.log(
    `workload: C=${options.concurrency} agents, R=${options.resources} resources, ${options.seconds} s measured after 1 s warm-up, ${options.rounds} round(s), TTL 10 000 ms; medians over rounds\n`,
  );
  console.log(
    markdownTable(
      [
        'system',
        'rounds',
        'cycles/s',
        'acquires ok/s',
        'ok/s range',
        'acquire attempts/s',
        'acquire p50 / p99 ms',
        'renew p50 / p99 ms',
        'release p50 / p99 ms',
        'CPU server / client (cores)',
        'RSS mean / peak MiB',
        'errors',
        'violations',
      ],
      rows,
    ),
  );
  console.log(
    '\ncycles/s = completed acquire → renew → release cycles per second; a busy acquire is a counted attempt, not a cycle.',
  );
  printTargets(m, new Set(systems));
  if (!per.has(PRODUCT_LABEL) && !per.has(WS_LABEL)) return;
  console.log('\nratios, ours / peer (throughput > 1: we do more; p99 < 1: we are faster):\n');
  const ratioRows = [PRODUCT_LABEL, WS_LABEL]
    .filter((label) => per.has(label))
    .flatMap((label) =>
      systems
        .filter((s) => !isOurs(s))
        .map((peer) => [
          `${label} / ${peer}`,
          `× ${fixed(m(label, (r) => r.acquires_ok_per_s) / m(peer, (r) => r.acquires_ok_per_s), 2)}`,
          `× ${fixed(m(label, (r) => r.releases_per_s) / m(peer, (r) => r.releases_per_s), 2)}`,
          `× ${fixed(m(label, (r) => r.latency.acquire.p99_ms) / m(peer, (r) => r.latency.acquire.p99_ms), 2)}`,
          `× ${fixed(m(label, (r) => r.latency.renew.p99_ms) / m(peer, (r) => r.latency.renew.p99_ms), 2)}`,
          `× ${fixed(m(label, (r) => r.latency.release.p99_ms) / m(peer, (r) => r.latency.release.p99_ms), 2)}`,
        ]),
    );
  if (ratioRows.length > 0)
    console.log(
      markdownTable(['ratio', 'acquires ok/s', 'cycles/s', 'acquire p99', 'renew p99', 'release p99'], ratioRows),
    );
  /** Median over rounds of a system's main-thread CPU per command (microseconds; the adapter's side line). */
  const medianCpu = (system: string): number =>
    median(memory.filter((x) => x.system === system).map((x) => x.server_main_thread_cpu_us_per_command));
  const modeRows = systems
    .filter((s) => isOurs(s) && s !== PRODUCT_LABEL && s !== WS_LABEL)
    .map((mode) => {
      const base = mode.startsWith(`${WS_LABEL}/`) ? WS_LABEL : PRODUCT_LABEL;
      return [
        `${mode} / ${base}`,
        `× ${fixed(m(mode, (r) => r.acquires_ok_per_s) / m(base, (r) => r.acquires_ok_per_s), 2)}`,
        `× ${fixed(m(mode, (r) => r.releases_per_s) / m(base, (r) => r.releases_per_s), 2)}`,
        `× ${fixed(m(mode, (r) => r.latency.acquire.p99_ms) / m(base, (r) => r.latency.acquire.p99_ms), 2)}`,
        `× ${fixed(medianCpu(mode) / medianCpu(base), 2)}`,
      ];
    });
  const commitRows = systems
    .filter((s) => isOurs(s) || s === MOCK_WS)
    .map((s) => {
      const mine = memory.filter((x) => x.system === s);
      const med = (pick: (x: MemoryRecord) => number | null | undefined): number => median(mine.map(pick));
      return [
        s,
        fixed(
          med((x) => x.appends_per_s),
          0,
        ),
        fixed(
          med((x) => x.batch_commands_mean),
          2,
        ),
        fixed(
          med((x) => x.batch_events_mean),
          2,
        ),
        fixed(
          med((x) => x.append_ms_mean),
          3,
        ),
        fixed(
          med((x) => x.server_cpu_us_per_command),
          1,
        ),
        fixed(
          med((x) => x.server_main_thread_cpu_us_per_command),
          1,
        ),
      ];
    });
  if (commitRows.length > 0) {
    console.log(
      "\ngroup commit and server CPU per command (the coordinator's /metrics and /proc over each round, warm-up included; medians over rounds):\n",
    );
    console.log(
      markdownTable(
        [
          'system',
          'appends (fsyncs)/s',
          'commands / append',
          'events / append',
          'append ms',
          'server CPU µs / command',
          'main thread µs / command',
        ],
        commitRows,
      ),
    );
  }
  if (modeRows.length > 0) {
    console.log('\nmodes against the default (the cost of each mode; throughput < 1 and p99 > 1: it costs):\n');
    console.log(
      markdownTable(['ratio', 'acquires ok/s', 'cycles/s', 'acquire p99', 'main thread µs / command'], modeRows),
    );
    // Per round, each mode beside the default run minutes before it: the pairs an A/B is judged by
    // (the side file holds a system's rounds in run order; the harness numbers each call's round 1).
    const perRound = (system: string): (number | null | undefined)[] =>
      memory.filter((x) => x.system === system).map((x) => x.server_main_thread_cpu_us_per_command);
    const roundRows = systems
      .filter((s) => isOurs(s) && s !== PRODUCT_LABEL && s !== WS_LABEL)
      .flatMap((mode) => {
        const baseLabel = mode.startsWith(`${WS_LABEL}/`) ? WS_LABEL : PRODUCT_LABEL;
        const base = perRound(baseLabel);
        return perRound(mode).map((value, index) => [
          `${mode} / ${baseLabel}`,
          String(index + 1),
          fixed(value, 1),
          fixed(base[index], 1),
          `× ${fixed((value ?? Number.NaN) / (base[index] ?? Number.NaN), 2)}`,
        ]);
      });
    console.log('\nmain thread µs / command per round (each mode and the default of the same round):\n');
    console.log(markdownTable(['ratio', 'round', 'mode', 'default', 'mode / default'], roundRows));
  }
  for (const [index, probe] of probes.entries()) {
    console.log(
      `\ndisk, ${index === 0 ? 'before the rounds' : index === probes.length - 1 ? 'after the rounds' : `probe ${index + 1}`}: ${probe.probe}: ${JSON.stringify(probe.result)}`,
    );
  }
  if (probes.length === 2) {
    const p50 = probes.map((probe) => Number(probe.result?.p50_ms));
    if (p50.every(Number.isFinite) && Math.max(...p50) > 2 * Math.min(...p50)) {
      console.log(
        `\nwarning: the fsync probe's p50 moved from ${p50[0]} ms to ${p50[1]} ms during the run: the machine or its disk was busy, so compare rounds with care`,
      );
    }
  }
}

const root = repoRoot();
let source: string;
try {
  source = benchPeersDir();
} catch (error) {
  console.error(`bench:service: ${(error as Error).message}`);
  process.exit(2);
}
const work = await createTempDir('lease-fence-bench-service-');
try {
  // The harness folder is read-only: run a writable copy.
  const harness = join(work, 'bench-peers');
  cpSync(source, harness, { recursive: true, filter: (path) => !path.includes(`${source}/node_modules`) });
  makeWritable(harness);
  if ((await run('bash', ['./setup.sh'], harness)) !== 0)
    throw new Error('bench-peers setup.sh failed (it needs apt-get as root and the npm registry)');

  const tokens = createBenchTokens(concurrency);
  const tokensFile = join(work, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(tokens.entries));
  const resultsFile = join(work, 'results.jsonl');
  const memoryFile = join(work, 'memory.jsonl');
  // The product command runs from the repository root; `env … node` execs node, so run.sh's PID is the server's.
  const productCommand = (mode: string): string => {
    const modeEnv = Object.entries(MODES[mode] ?? {})
      .map(([name, value]) => `${name}='${value}'`)
      .join(' ');
    return `env PORT={PORT} HOST=127.0.0.1 LEASE_FENCE_DATA_DIR={DIR} LEASE_FENCE_TOKENS_FILE=${tokensFile} ${modeEnv} node ${cpuProfileArgs().join(' ')} ${mainOf(mode)}`;
  };
  /** One product of a harness call: the server command ({PORT}, {DIR}), its adapter, its label and its client environment. */
  interface Product {
    readonly command: string;
    readonly adapter: string;
    readonly label: string;
    readonly env: Readonly<Record<string, string>>;
  }
  const ours = (mode: string, transport: string): Product => ({
    command: productCommand(mode),
    adapter: TRANSPORTS[transport]!.adapter,
    label: labelOf(mode, transport),
    env: HARNESS_ENV[mode] ?? {},
  });
  const mockWs: Product = {
    command: `node ${join('test', 'bench', 'support', 'mock-agent-link.mjs')} {PORT}`,
    adapter: TRANSPORTS.websocket!.adapter,
    label: MOCK_WS,
    env: {},
  };
  const runHarness = (product: Product, rounds: string, systems: string): Promise<number> =>
    run(
      'bash',
      [
        join(harness, 'run.sh'),
        '--seconds',
        options.seconds,
        '--concurrency',
        options.concurrency,
        '--resources',
        options.resources,
        '--rounds',
        rounds,
        '--systems',
        systems,
        '--out',
        resultsFile,
        '--product-cmd',
        product.command,
        '--product-adapter',
        join(root, 'test', 'bench', 'adapters', product.adapter),
        '--product-label',
        product.label,
      ],
      root,
      {
        ...process.env,
        LEASE_FENCE_BENCH_TOKENS_FILE: tokensFile,
        LEASE_FENCE_BENCH_SIDE_FILE: memoryFile,
        ...product.env,
      },
    );
  let code = 0;
  const products = [
    ...modes.flatMap((mode) => transports.map((transport) => ours(mode, transport))),
    ...(withMockWs ? [mockWs] : []),
  ];
  const peers = harnessSystems.join(',');
  if (products.length === 1) {
    code = await runHarness(products[0]!, options.rounds, peers);
  } else {
    // The harness runs one product per call: one call per product and round, interleaved. The
    // first product of a round runs beside every peer of --systems; the others beside Redis
    // (appendfsync always) only, the anchor of the agent link's targets, so each round measures
    // it next to them without running every peer again.
    const anchor = harnessSystems.includes('redis-always') ? 'redis-always' : peers;
    for (let round = 1; round <= Number(options.rounds); round += 1) {
      for (const [index, product] of products.entries())
        code = Math.max(code, await runHarness(product, '1', index === 0 ? peers : anchor));
    }
  }
  const lines = readJsonLines<WorkloadResult & Partial<ProbeLine>>(resultsFile);
  // run.sh named its results file, which lives in this run's temp dir: keep a copy (test/dist is not in git).
  const kept = join(
    root,
    'test',
    'dist',
    'bench-results',
    `service-${new Date().toISOString().replaceAll(':', '-')}.jsonl`,
  );
  mkdirSync(dirname(kept), { recursive: true });
  copyFileSync(resultsFile, kept);
  console.error(`bench:service: raw results (one JSON line per system and round) kept at ${relative(root, kept)}`);
  report(
    lines.filter((l) => l.latency !== undefined),
    readJsonLines<MemoryRecord>(memoryFile),
    lines.flatMap((l) => (l.probe === undefined ? [] : [{ probe: l.probe, result: l.result }])),
  );
  if (code !== 0) {
    console.error(`bench:service: run.sh exited ${code} (a system failed; see above)`);
    process.exitCode = 1;
  }
} finally {
  await removeTempDir(work);
}
