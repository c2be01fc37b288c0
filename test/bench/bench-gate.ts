/**
 * `npm run bench:gate`: what the gate sidecar (`apps/gate`, built) costs in front of an HTTP
 * service, against calling that service directly and against the barest proxy, in the same run
 * on the same machine. The upstream is a node:http server in a process of its own, of one of
 * three kinds (`--upstream`, all by default, each measured with a gate of its own and printed in
 * its own table), the headline first:
 * - `durable`: a service that records each write durably, as the demo's deploy slot would:
 *   appends each POST body to a file and `fdatasync`s it before answering; reads answer from
 *   memory (the count of records). The headline: a fenced resource is a write to state, and a
 *   write worth fencing is one the service keeps.
 * - `noop`: reads the body, answers 200. The worst case for a proxy: the upstream does nothing
 *   the gate's own work could hide behind, so the ratio shows the proxy's own cost alone.
 * - `busy`: computes for 1 ms per request before answering (a handler doing real work).
 * The coordinator (built, SQLite) grants one lease whose signed token every write carries.
 *
 * Three arms, measured in alternating rounds (medians reported): direct (the upstream itself),
 * the reference proxy (`support/reference-proxy.ts`: node:http + an undici `Pool`, no checks at
 * all, in a process of its own — the ceiling any Node proxy reaches here) and the gate; the
 * report prints gate/direct, reference/direct and gate/reference. Two loads each:
 * - latency: one request at a time, so p50/p99 show the time the gate adds to a request
 *   (verify the token, make the floor durable — a write only when the floor moves — forward);
 * - throughput: `--concurrency` requests in flight on keep-alive connections, requests/s.
 * Both for admitted writes (POST with `Lease-Fence-Token`) and for open reads (GET, forwarded
 * without a check: the proxy alone).
 *
 * Each process is charged its own CPU: the load generator (this process, the same for every
 * arm), the proxy and the upstream each run in a process of their own, and the CPU time each
 * spent per request under the throughput load is printed (`/proc/<pid>/stat`), with the share of
 * a core the load generator used (near 100 %, it, not the proxy, bounds the requests/s). On a
 * machine with fewer free cores than busy processes the requests/s ratio measures how the
 * processes share the cores, so the ratio "with a core per process" (the busiest process's CPU
 * per request bounds its requests/s) is printed next to it: what a machine with a core per
 * process would see.
 *
 * Targets (issue 13): ≤ 1 ms added at p50 on loopback, ≥ 0.7× the direct throughput. Printed as
 * met or not; figures, not a test: nothing here asserts.
 * Options: `--seconds 3 --rounds 3 --concurrency 16 --body-bytes 256 --upstream durable|noop|busy`
 * (default: all three); `--rate N` paces the throughput load at N requests/s (see {@link RATE}); `--cpu-prof DIR` makes the gate, the reference proxy and the upstream
 * write V8 CPU profiles (`<upstream>-gate.cpuprofile`, `<upstream>-reference.cpuprofile`,
 * `<upstream>-upstream.cpuprofile`) there; `--baseline-gate PATH/dist/main.js` measures another
 * build of the gate alongside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stopByPid } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf } from './support/proc-usage.js';
import { fixed, markdownTable, median, quantile } from './support/stats.js';

const options = parseBenchArgs('gate', {
  seconds: { type: 'string', default: '3' },
  rounds: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '16' },
  'body-bytes': { type: 'string', default: '256' },
  'cpu-prof': { type: 'string' },
  'baseline-gate': { type: 'string' },
  upstream: { type: 'string' },
  rate: { type: 'string' },
});
const SECONDS = Number(options.seconds);
const ROUNDS = Number(options.rounds);
const CONCURRENCY = Number(options.concurrency);
const BODY = 'x'.repeat(Number(options['body-bytes']));
const RESOURCE = 'res-gate-bench';
const TARGET_ADDED_P50_MILLIS = 1;
const TARGET_THROUGHPUT_RATIO = 0.7;
/** `--cpu-prof DIR`: the gate and the upstream write V8 CPU profiles there when they stop (for `node --cpu-prof` analysis). */
const CPU_PROF_DIR = options['cpu-prof'];
/**
 * `--baseline-gate PATH`: another build of the gate (its `dist/main.js`, e.g. from a checkout of
 * the main branch) measured in the same run, in the same rounds, as a third arm: a before/after
 * that one machine's drift hits equally.
 */
const BASELINE_GATE = options['baseline-gate'];
/**
 * `--rate N`: the throughput load offers N requests/s in all (each of the `--concurrency` loops
 * starts its next request on a fixed schedule, or at once when it is behind) instead of as many
 * as the arm answers. Every arm then gets the same arrivals, so the CPU µs/req columns compare
 * the same work: in the closed loop (the default) an arm that answers faster is handed requests
 * in bursts and spends less CPU on each, so its CPU per request depends on its own speed and on
 * how the machine's cores were shared during its seconds. Choose N below every arm's req/s.
 */
const RATE = options.rate === undefined ? undefined : Number(options.rate);
if (RATE !== undefined && !(RATE > 0))
  throw new Error(`--rate must be a positive number of requests/s (got ${options.rate})`);
/** The kinds of upstream `--upstream` chooses from (see the file's comment). */
const UPSTREAM_KINDS = ['durable', 'noop', 'busy'] as const;
type UpstreamKind = (typeof UPSTREAM_KINDS)[number];
/** Each kind's heading in the report. */
const UPSTREAM_DESCRIPTIONS: Readonly<Record<UpstreamKind, string>> = {
  noop: 'no-op (reads the body, answers 200)',
  durable: 'durable (appends each POST body to a file, fdatasync, then answers; GET from memory)',
  busy: 'busy (computes for 1 ms per request, then answers)',
};
/** `--upstream durable|noop|busy`: measure in front of one kind of upstream only; all three by default, in that order. */
const UPSTREAMS: readonly UpstreamKind[] = (() => {
  const chosen = options.upstream;
  if (chosen === undefined) return UPSTREAM_KINDS;
  if (!(UPSTREAM_KINDS as readonly string[]).includes(chosen))
    throw new Error(`--upstream must be one of ${UPSTREAM_KINDS.join(', ')} (got ${JSON.stringify(chosen)})`);
  return [chosen as UpstreamKind];
})();
/** The reference proxy's compiled script, beside this one's (`support/reference-proxy.ts`). */
const REFERENCE_PROXY_JS = fileURLToPath(new URL('./support/reference-proxy.js', import.meta.url));
const profileArgs = (name: string): string[] =>
  CPU_PROF_DIR === undefined
    ? []
    : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR, '--cpu-prof-name', `${name}.cpuprofile`];

/** The no-op upstream: a node:http server that reads each body and answers 200 with a short text. */
const NOOP_UPSTREAM_SOURCE = `
const http = require('node:http');
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
server.keepAliveTimeout = 60000;
process.once('SIGTERM', () => process.exit(0)); // a normal exit, so --cpu-prof writes its profile
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port })));
`;

/**
 * The durable upstream: a POST (any method but GET/HEAD) appends its body to the file named by
 * the `RECORDS_FILE` environment variable and is answered once `fdatasync` returned, each
 * request with a sync of its own (what a service that records deploys one by one does); a GET
 * answers from memory with the count of records.
 */
const DURABLE_UPSTREAM_SOURCE = `
const http = require('node:http');
const fs = require('node:fs');
const fd = fs.openSync(process.env.RECORDS_FILE, 'a');
let records = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' || req.method === 'HEAD') { req.resume(); return req.on('end', () => res.end(String(records))); }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    chunks.push(Buffer.from('\\n'));
    fs.write(fd, Buffer.concat(chunks), (writeError) => {
      if (writeError) { res.statusCode = 500; return res.end(writeError.message); }
      fs.fdatasync(fd, (syncError) => {
        if (syncError) { res.statusCode = 500; return res.end(syncError.message); }
        records += 1;
        res.end('recorded');
      });
    });
  });
});
server.keepAliveTimeout = 60000;
process.once('SIGTERM', () => process.exit(0)); // a normal exit, so --cpu-prof writes its profile
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port })));
`;

/**
 * The busy upstream: every request is answered after 1 ms of computation (the handler spins on
 * the clock), what a service that does real work per request spends — rendering, validating,
 * a query's CPU — so the proxy's cost is seen against a request that costs something.
 */
const BUSY_UPSTREAM_SOURCE = `
const http = require('node:http');
const WORK_NANOS = 1000000n;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const until = process.hrtime.bigint() + WORK_NANOS;
    while (process.hrtime.bigint() < until);
    res.end('worked');
  });
});
server.keepAliveTimeout = 60000;
process.once('SIGTERM', () => process.exit(0)); // a normal exit, so --cpu-prof writes its profile
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port })));
`;

/** The upstream's source by kind. */
const UPSTREAM_SOURCES: Readonly<Record<UpstreamKind, string>> = {
  noop: NOOP_UPSTREAM_SOURCE,
  durable: DURABLE_UPSTREAM_SOURCE,
  busy: BUSY_UPSTREAM_SOURCE,
};

/** Spawns `args` and resolves with the child and the `url` of its `listening` log line. */
function spawnListening(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const record = JSON.parse(line) as { msg?: string; url?: string };
        if (record.msg === 'listening' && typeof record.url === 'string') resolve({ child, url: record.url });
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ').slice(0, 60)} exited with ${String(code)} before listening`)),
    );
  });
}

interface Sample {
  readonly requestsPerSecond: number;
  readonly p50Millis: number;
  readonly p99Millis: number;
  readonly failures: number;
  /** CPU time each process spent per successful request during the measurement (µs), by process. */
  readonly cpuMicrosPerRequest: Readonly<Record<ProcessName, number>>;
}

/** The processes whose CPU a measurement records: this load generator, the proxy in between (a gate or the reference proxy), the upstream. */
type ProcessName = 'client' | 'proxy' | 'upstream';

/**
 * What a request is sent to: the upstream itself, the bare reference proxy
 * (`support/reference-proxy.ts`), this tree's gate, or the `--baseline-gate` build.
 */
type Arm = 'direct' | 'reference' | 'gate' | 'baseline';

/** CPU seconds used so far by each measured process (`/proc/<pid>/stat`, 10 ms ticks; this process: `process.cpuUsage`). */
type CpuReading = Record<ProcessName, number>;
let readCpu: () => CpuReading = () => ({ client: 0, proxy: 0, upstream: 0 });

/** `concurrency` closed loops of requests for `seconds` on keep-alive connections; latencies in ms. */
async function load(
  url: string,
  method: 'POST' | 'GET',
  token: string,
  concurrency: number,
  seconds: number,
): Promise<Sample> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL('/bench/write', url);
  const latencies: number[] = [];
  let failures = 0;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const startedAt = performance.now();
      const outgoing = request(
        target,
        {
          method,
          agent,
          headers:
            method === 'POST'
              ? { 'lease-fence-token': token, 'content-type': 'text/plain', 'content-length': String(BODY.length) }
              : {},
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode === 200) latencies.push(performance.now() - startedAt);
            else failures += 1;
            resolve();
          });
        },
      );
      outgoing.on('error', () => {
        failures += 1;
        resolve();
      });
      outgoing.end(method === 'POST' ? BODY : undefined);
    });
  const cpuBefore = readCpu();
  const endAt = performance.now() + seconds * 1000;
  const startedAt = performance.now();
  // Paced (`--rate`) only under the throughput load: the latency load is one request at a time.
  const intervalMillis = RATE === undefined || concurrency === 1 ? 0 : (concurrency * 1000) / RATE;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      let nextAt = startedAt + (intervalMillis * loop) / concurrency;
      while (performance.now() < endAt) {
        const waitMillis = nextAt - performance.now();
        if (waitMillis > 0) await new Promise((resolve) => setTimeout(resolve, waitMillis));
        nextAt = Math.max(nextAt + intervalMillis, performance.now() - intervalMillis);
        await one();
      }
    }),
  );
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  const cpuAfter = readCpu();
  agent.destroy();
  const perRequest = (name: ProcessName): number => ((cpuAfter[name] - cpuBefore[name]) * 1e6) / latencies.length;
  return {
    cpuMicrosPerRequest: { client: perRequest('client'), proxy: perRequest('proxy'), upstream: perRequest('upstream') },
    requestsPerSecond: latencies.length / elapsedSeconds,
    p50Millis: quantile(latencies, 0.5),
    p99Millis: quantile(latencies, 0.99),
    failures,
  };
}

async function main(): Promise<void> {
  const dir = await createTempDir('bench-gate-');
  const tokens = createBenchTokens(1);
  const coordinator = await startBenchCoordinator({
    dataDir: join(dir, 'coordinator'),
    tokensFile: await writeTokensFile(dir, tokens.entries),
  });
  try {
    const acquired = await fetch(`${coordinator.url}/v1/leases/${RESOURCE}/acquire`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.agents[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ requestId: 'bench-gate', ttlMillis: 3_600_000 }),
    });
    const { grant } = (await acquired.json()) as { grant: { signedToken: string } };
    console.log(`bench:gate | ${machineLine()}`);
    for (const kind of UPSTREAMS) {
      await measureUpstream(kind, {
        dir,
        coordinatorUrl: coordinator.url,
        gateToken: tokens.gate,
        signedToken: grant.signedToken,
      });
    }
  } finally {
    await coordinator.stop();
    await removeTempDir(dir);
  }
}

/** What every upstream's measurement shares: the temporary directory, the coordinator and the lease. */
interface BenchContext {
  readonly dir: string;
  readonly coordinatorUrl: string;
  /** The gate role's bearer token for the coordinator. */
  readonly gateToken: string;
  /** The lease's signed token every write carries. */
  readonly signedToken: string;
}

/** Starts an upstream of `kind` and a gate (and the baseline gate) in front of it, measures, prints its table, stops them. */
async function measureUpstream(kind: UpstreamKind, context: BenchContext): Promise<void> {
  const root = repoRoot();
  const { dir } = context;
  const children: ChildProcess[] = [];
  try {
    const upstream = await spawnListening([...profileArgs(`${kind}-upstream`), '-e', UPSTREAM_SOURCES[kind]], {
      PATH: process.env.PATH,
      RECORDS_FILE: join(dir, `${kind}-records.log`),
    });
    children.push(upstream.child);
    const startGate = (mainJs: string, name: string) =>
      spawnListening([...profileArgs(`${kind}-${name}`), mainJs], {
        PATH: process.env.PATH,
        PORT: '0',
        LOG_LEVEL: 'info', // 'listening' is an info line; the gate logs nothing per request
        LEASE_FENCE_GATE_RESOURCE: RESOURCE,
        LEASE_FENCE_GATE_UPSTREAM: upstream.url,
        LEASE_FENCE_COORDINATOR_URL: context.coordinatorUrl,
        LEASE_FENCE_GATE_TOKEN: context.gateToken,
        LEASE_FENCE_DATA_DIR: join(dir, `${kind}-${name}`),
      }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message} (is ${mainJs} built? \`npx nx run @lease-fence/gate:build\`)`);
      });
    const gate = await startGate(join(root, 'apps', 'gate', 'dist', 'main.js'), 'gate');
    children.push(gate.child);
    const baseline = BASELINE_GATE === undefined ? undefined : await startGate(BASELINE_GATE, 'baseline');
    if (baseline !== undefined) children.push(baseline.child);
    const reference = await spawnListening([...profileArgs(`${kind}-reference`), REFERENCE_PROXY_JS], {
      PATH: process.env.PATH,
      UPSTREAM_URL: upstream.url,
      CONNECTIONS: String(CONCURRENCY),
    });
    children.push(reference.child);
    /** The proxy whose CPU the current measurement records (none for the direct calls). */
    let measuredProxy: ChildProcess | undefined;
    readCpu = () => {
      const self = process.cpuUsage();
      return {
        client: (self.user + self.system) / 1e6,
        proxy: measuredProxy === undefined ? 0 : (cpuSecondsOf(measuredProxy.pid!) ?? Number.NaN),
        upstream: cpuSecondsOf(upstream.child.pid!) ?? Number.NaN,
      };
    };
    const grant = { signedToken: context.signedToken };

    console.log(`\n### upstream: ${UPSTREAM_DESCRIPTIONS[kind]}\n`);
    console.log(
      `upstream: node:http in its own process | reference: a bare node:http + undici Pool proxy, no checks | gate: apps/gate (built) | coordinator: built, SQLite | ${RATE === undefined ? 'closed loop' : `throughput load paced at ${RATE} req/s`} | ${SECONDS} s per measurement, ${ROUNDS} rounds alternating direct/reference/gate${baseline === undefined ? '' : `/baseline gate (${BASELINE_GATE})`}, medians\n`,
    );
    const arms: (readonly [Arm, string, ChildProcess | undefined])[] = [
      ['direct', upstream.url, undefined],
      ['reference', reference.url, reference.child],
      ['gate', gate.url, gate.child],
      ...(baseline === undefined ? [] : [['baseline', baseline.url, baseline.child] as const]),
    ];
    // Warm-up: the gates fetch the keys and make the floor durable once; connections open; V8 optimizes.
    for (const [, url] of arms) await load(url, 'POST', grant.signedToken, CONCURRENCY, 1);

    const rows: string[][] = [];
    const verdicts: string[] = [];
    for (const method of ['POST', 'GET'] as const) {
      const what = method === 'POST' ? 'admitted write (POST + token)' : 'open read (GET)';
      const runs: Record<Arm, { latency: Sample[]; throughput: Sample[] }> = {
        direct: { latency: [], throughput: [] },
        reference: { latency: [], throughput: [] },
        gate: { latency: [], throughput: [] },
        baseline: { latency: [], throughput: [] },
      };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const [arm, url, child] of arms) {
          measuredProxy = child;
          runs[arm].latency.push(await load(url, method, grant.signedToken, 1, SECONDS));
          runs[arm].throughput.push(await load(url, method, grant.signedToken, CONCURRENCY, SECONDS));
        }
      }
      const figure = (arm: Arm) => ({
        p50: median(runs[arm].latency.map((s) => s.p50Millis)),
        p99: median(runs[arm].latency.map((s) => s.p99Millis)),
        rps: median(runs[arm].throughput.map((s) => s.requestsPerSecond)),
        failures: [...runs[arm].latency, ...runs[arm].throughput].reduce((sum, s) => sum + s.failures, 0),
        cpu: (name: ProcessName) => median(runs[arm].throughput.map((s) => s.cpuMicrosPerRequest[name])),
      });
      type Figures = ReturnType<typeof figure>;
      /** The share of one core the load generator used under the throughput load (1 = this process was the bottleneck). */
      const clientCoreShare = (figures: Figures): number => (figures.cpu('client') * figures.rps) / 1e6;
      const direct = figure('direct');
      /**
       * The throughput ratio if each process had a core of its own: each is single-threaded, so
       * the busiest one per request bounds the requests/s (1 / its CPU seconds per request).
       */
      const ownCoreRatio = (proxied: Figures): number =>
        Math.max(direct.cpu('client'), direct.cpu('upstream')) /
        Math.max(proxied.cpu('client'), proxied.cpu('proxy'), proxied.cpu('upstream'));
      const row = (label: string, figures: Figures, versus: string): string[] => [
        `${what}, ${label}`,
        fixed(figures.p50, 3),
        fixed(figures.p99, 3),
        fixed(figures.rps, 0),
        versus,
        String(figures.failures),
        fixed(figures.cpu('client'), 0),
        figures === direct ? '' : fixed(figures.cpu('proxy'), 0),
        fixed(figures.cpu('upstream'), 0),
        `${fixed(clientCoreShare(figures) * 100, 0)} %`,
      ];
      const versusDirect = (figures: Figures): string =>
        `+${fixed(figures.p50 - direct.p50, 3)} ms p50, ${fixed(figures.rps / direct.rps, 2)}× req/s`;
      const ceiling = figure('reference');
      const gated = figure('gate');
      const addedP50 = gated.p50 - direct.p50;
      const ratio = gated.rps / direct.rps;
      rows.push(
        row('direct', direct, ''),
        row('through the reference proxy', ceiling, versusDirect(ceiling)),
        row('through the gate', gated, `${versusDirect(gated)}; ${fixed(gated.rps / ceiling.rps, 2)}× the reference`),
      );
      verdicts.push(
        `${kind} upstream, ${what}: added p50 ${fixed(addedP50, 3)} ms (target ≤ ${TARGET_ADDED_P50_MILLIS} ms: ${addedP50 <= TARGET_ADDED_P50_MILLIS ? 'met' : 'NOT met'}); ` +
          `throughput ${fixed(ratio, 2)}× direct (target ≥ ${TARGET_THROUGHPUT_RATIO}×: ${ratio >= TARGET_THROUGHPUT_RATIO ? 'met' : 'NOT met'}); ` +
          `the reference proxy ${fixed(ceiling.rps / direct.rps, 2)}× direct, the gate ${fixed(gated.rps / ceiling.rps, 2)}× the reference; ` +
          `with a core per process: gate ${fixed(ownCoreRatio(gated), 2)}×, reference ${fixed(ownCoreRatio(ceiling), 2)}× (from CPU µs/req); ` +
          `the load generator used ${fixed(clientCoreShare(direct) * 100, 0)} / ${fixed(clientCoreShare(ceiling) * 100, 0)} / ${fixed(clientCoreShare(gated) * 100, 0)} % of a core (direct / reference / gate)`,
      );
      /** Each round's figure of `arm` under the throughput load, so the spread the medians hide is seen. */
      const byRound = (arm: Arm, value: (sample: Sample) => number): string =>
        runs[arm].throughput.map((sample) => fixed(value(sample), 0)).join(' / ');
      verdicts.push(
        `${kind} upstream, ${what}, round by round: proxy CPU µs/req reference ${byRound('reference', (s) => s.cpuMicrosPerRequest.proxy)}, ` +
          `gate ${byRound('gate', (s) => s.cpuMicrosPerRequest.proxy)}; req/s direct ${byRound('direct', (s) => s.requestsPerSecond)}, ` +
          `reference ${byRound('reference', (s) => s.requestsPerSecond)}, gate ${byRound('gate', (s) => s.requestsPerSecond)}`,
      );
      if (baseline !== undefined) {
        const before = figure('baseline');
        rows.push(
          row(
            'through the baseline gate',
            before,
            `${versusDirect(before)}; ${fixed(before.rps / ceiling.rps, 2)}× the reference`,
          ),
        );
        verdicts.push(
          `${kind} upstream, ${what}, baseline gate: added p50 ${fixed(before.p50 - direct.p50, 3)} ms; throughput ${fixed(before.rps / direct.rps, 2)}× direct, ` +
            `${fixed(before.rps / ceiling.rps, 2)}× the reference; with a core per process ${fixed(ownCoreRatio(before), 2)}×`,
        );
      }
    }
    console.log(
      markdownTable(
        [
          'path',
          'p50 ms (1 in flight)',
          'p99 ms (1 in flight)',
          `req/s (${CONCURRENCY} in flight)`,
          'vs direct',
          'failures',
          'CPU µs/req: client',
          'proxy',
          'upstream',
          'client core use',
        ],
        rows,
      ),
    );
    console.log(`\n${verdicts.join('\n')}`);
  } finally {
    for (const child of children.reverse()) await stopByPid(child, 'SIGTERM');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
