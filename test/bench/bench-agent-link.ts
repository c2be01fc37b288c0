/**
 * `npm run bench:agent-link`: the agent link (`/v1/agent`) with many operations in flight on each
 * connection, which `bench:service` does not exercise (its workload keeps one operation in flight
 * per agent, so per connection there is never more than one reply per turn). `--links` SDK
 * connections (`CoordinatorWebSocket`, one agent token each), each with `--in-flight` loops of
 * acquire → release on a resource of their own, so every acquire is granted and signed.
 *
 * `--baseline <main.js of another build>` runs that build in turns with this checkout's
 * (`apps/coordinator/dist/main.js`), alternating which goes first, each round on a fresh data dir,
 * and prints per round and in medians: operations/s, and the coordinator's CPU per operation from
 * `/proc` (the whole process, and its main thread: the event loop, without the SQLite writer
 * thread), and the main thread's write system calls per operation (`syscw`, the count a cork
 * changes whatever the machine's load), with the ratio this build / baseline. On a shared machine the CPU per operation is the
 * figure to judge by. Options (after `--`): `--seconds 6 --warmup-seconds 1 --rounds 4 --links 4
 * --in-flight 32 --baseline <path>`. Figures, not a test: nothing here asserts.
 */
import { writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { CoordinatorWebSocket } from '@lease-fence/client';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { parseBenchArgs } from './support/bench-args.js';
import { machineLine, repoRoot } from './support/bench-env.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf, mainThreadWriteCallsOf } from './support/proc-usage.js';
import { fixed, markdownTable, median } from './support/stats.js';

const options = parseBenchArgs('agent-link', {
  seconds: { type: 'string', default: '6' },
  'warmup-seconds': { type: 'string', default: '1' },
  rounds: { type: 'string', default: '4' },
  links: { type: 'string', default: '4' },
  'in-flight': { type: 'string', default: '32' },
  baseline: { type: 'string' },
});
const links = Number(options.links);
const inFlight = Number(options['in-flight']);
const seconds = Number(options.seconds);
const warmupSeconds = Number(options['warmup-seconds']);

/** Accepts any body: the status decides (the SDK's validation is not what is measured). */
const ANY = { safeParse: (data: unknown) => ({ success: true as const, data }) };
const REPLIES = { 200: ANY, 409: ANY, 410: ANY };

/** One build's figures in one round. */
interface Figures {
  readonly opsPerSecond: number;
  /** The coordinator's CPU per operation (microseconds): whole process and main thread. */
  readonly processMicrosPerOp: number;
  readonly mainThreadMicrosPerOp: number;
  /** Write system calls of the coordinator's main thread per operation (replies, and anything else it writes). */
  readonly mainThreadWritesPerOp: number;
  /** This process's CPU per operation (microseconds): the SDK's side of the link. */
  readonly clientMicrosPerOp: number;
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

async function measure(main: string | undefined): Promise<Figures> {
  const dir = await createTempDir('lease-fence-bench-agent-link-');
  const tokens = createBenchTokens(links);
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(tokens.entries));
  const coordinator = await startBenchCoordinator({
    dataDir: join(dir, 'data'),
    tokensFile,
    ...(main === undefined ? {} : { main }),
  });
  const clients = tokens.agents.map(
    (token) =>
      new CoordinatorWebSocket('bench:agent-link', {
        baseUrl: coordinator.url,
        token,
        timeoutMillis: 30_000,
        retry: { maxAttempts: 1 },
      }),
  );
  let operations = 0;
  let running = true;
  let requestSeq = 0;
  const loop = async (client: CoordinatorWebSocket, resource: string): Promise<void> => {
    while (running) {
      const acquired = await client.request('acquire', 'acquire', resource, { requestId: `q${requestSeq++}` }, REPLIES);
      if (acquired.status !== 200) throw new Error(`acquire ${resource}: status ${acquired.status}`);
      const { fence } = (acquired.value as { grant: { fence: number } }).grant;
      operations += 1;
      const released = await client.request('release', 'release', resource, { fence }, REPLIES);
      if (released.status !== 200) throw new Error(`release ${resource}: status ${released.status}`);
      operations += 1;
    }
  };
  try {
    const loops = clients.flatMap((client, link) =>
      Array.from({ length: inFlight }, (_, index) => loop(client, `res-${link}-${index}`)),
    );
    await sleep(warmupSeconds * 1000);
    const before = {
      operations,
      process: cpuSecondsOf(coordinator.pid),
      main: cpuSecondsOf(coordinator.pid, true),
      writes: mainThreadWriteCallsOf(coordinator.pid),
      client: process.cpuUsage(),
      at: performance.now(),
    };
    await sleep(seconds * 1000);
    const counted = operations - before.operations;
    const processMicros = ((cpuSecondsOf(coordinator.pid) ?? Number.NaN) - (before.process ?? Number.NaN)) * 1e6;
    const mainMicros = ((cpuSecondsOf(coordinator.pid, true) ?? Number.NaN) - (before.main ?? Number.NaN)) * 1e6;
    const writes = (mainThreadWriteCallsOf(coordinator.pid) ?? Number.NaN) - (before.writes ?? Number.NaN);
    const client = process.cpuUsage(before.client);
    const elapsedSeconds = (performance.now() - before.at) / 1000;
    running = false;
    await Promise.all(loops);
    return {
      opsPerSecond: counted / elapsedSeconds,
      processMicrosPerOp: processMicros / counted,
      mainThreadMicrosPerOp: mainMicros / counted,
      mainThreadWritesPerOp: writes / counted,
      clientMicrosPerOp: (client.user + client.system) / counted,
    };
  } finally {
    running = false;
    await Promise.all(clients.map((client) => client.close()));
    await coordinator.stop();
    await removeTempDir(dir);
  }
}

const builds: { readonly name: string; readonly main: string | undefined }[] = [
  { name: 'this build', main: undefined },
  ...(options.baseline === undefined
    ? []
    : [
        {
          name: 'baseline',
          main: isAbsolute(options.baseline) ? options.baseline : join(repoRoot(), options.baseline),
        },
      ]),
];
console.log(`## bench:agent-link: ${machineLine()}`);
console.log(
  `${links} links × ${inFlight} loops of acquire → release each, ${seconds} s measured after ${warmupSeconds} s, ${options.rounds} rounds\n`,
);
const results = new Map<string, Figures[]>(builds.map((build) => [build.name, []]));
const rows: string[][] = [];
for (let round = 1; round <= Number(options.rounds); round += 1) {
  const order = round % 2 === 1 ? builds : [...builds].reverse();
  for (const build of order) {
    const figures = await measure(build.main);
    results.get(build.name)!.push(figures);
    console.error(`bench:agent-link: round ${round}, ${build.name}: ${JSON.stringify(figures)}`);
  }
  const mine = results.get('this build')!.at(-1)!;
  const theirs = results.get('baseline')?.at(-1);
  rows.push([
    String(round),
    fixed(mine.opsPerSecond, 0),
    fixed(mine.mainThreadMicrosPerOp, 1),
    fixed(mine.mainThreadWritesPerOp, 2),
    fixed(theirs?.opsPerSecond, 0),
    fixed(theirs?.mainThreadMicrosPerOp, 1),
    fixed(theirs?.mainThreadWritesPerOp, 2),
    theirs === undefined ? '-' : `× ${fixed(mine.mainThreadMicrosPerOp / theirs.mainThreadMicrosPerOp, 2)}`,
    theirs === undefined ? '-' : `× ${fixed(mine.opsPerSecond / theirs.opsPerSecond, 2)}`,
  ]);
}
console.log(
  markdownTable(
    [
      'round',
      'ops/s',
      'main thread µs / op',
      'writes / op',
      'baseline ops/s',
      'baseline main thread µs / op',
      'baseline writes / op',
      'main thread µs / op, this / baseline',
      'ops/s, this / baseline',
    ],
    rows,
  ),
);
console.log('\nmedians over rounds:\n');
console.log(
  markdownTable(
    [
      'build',
      'ops/s',
      'process CPU µs / op',
      'main thread µs / op',
      'main thread write calls / op',
      'client CPU µs / op',
    ],
    builds.map(({ name }) => {
      const figures = results.get(name)!;
      return [
        name,
        fixed(median(figures.map((f) => f.opsPerSecond)), 0),
        fixed(median(figures.map((f) => f.processMicrosPerOp)), 1),
        fixed(median(figures.map((f) => f.mainThreadMicrosPerOp)), 1),
        fixed(median(figures.map((f) => f.mainThreadWritesPerOp)), 2),
        fixed(median(figures.map((f) => f.clientMicrosPerOp)), 1),
      ];
    }),
  ),
);
