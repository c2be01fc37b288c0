/**
 * `npm run bench:gate-reports`: what a gate's refusal reports cost when a stale writer is refused
 * in a loop, against built coordinators (SQLite), in alternating rounds. Two experiments:
 *
 * 1. Transports (a storm of `POST /v1/resources/:resource/rejections`, one per refusal, in seq order):
 *    - `new connection each`: undici with keep-alive off (`pipelining: 0`), the gate's transport
 *      until `libs/client/src/recent-connection-fetch.ts` replaced it;
 *    - `gate's transport`: `FenceGateClient.reportRejection` as shipped.
 * 2. Batches: `reportRejections` (the gate's and the SQL drainer's reporter) drains a storm whose
 *    refusals arrive faster than they can be reported one by one (a writer refused in a loop; an
 *    in-memory outbox, so only the reports are measured):
 *    - `single reports`: a sink without `reportRejectionBatch` (one request and commit per refusal);
 *    - `batches`: the `FenceGateClient` as shipped (what waits goes as one request, one group commit);
 *    - with `--baseline PATH/apps/coordinator/dist/main.js` (another build, e.g. main's), also
 *      `batches → baseline`: the same reporter against that build, which answers the batch route
 *      404 if it predates it (then the reporter sends single reports, as that build's gates do).
 * Printed per arm (medians over rounds): reports/s, the coordinator's CPU per report (µs),
 * requests per report, and for the transports TIME_WAIT sockets left per report on this host
 * (`ss`, Linux). Figures, not a test: nothing here asserts.
 * Options: `--reports 1500` per arm and round, `--rounds 3`, `--baseline PATH`,
 * `--only transports|batches`; `LEASE_FENCE_BENCH_CPU_PROF_DIR=DIR` makes the coordinator write a
 * V8 CPU profile there when it stops.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  CoordinatorHttp,
  FenceGateClient,
  reportRejections,
  type PendingRejection,
  type RejectionOutbox,
  type RejectionSink,
} from '@lease-fence/client';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { parseBenchArgs } from './support/bench-args.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { cpuProfileArgs, startBenchCoordinator, type BenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf } from './support/proc-usage.js';
import { median } from './support/stats.js';

const options = parseBenchArgs('gate-reports', {
  reports: { type: 'string', default: '1500' },
  rounds: { type: 'string', default: '3' },
  baseline: { type: 'string' },
  only: { type: 'string' },
});
const reportsPerRound = Number(options.reports);
const rounds = Number(options.rounds);
const RESOURCE = 'res-storm';
if (options.only !== undefined && options.only !== 'transports' && options.only !== 'batches') {
  console.error(`bench:gate-reports: --only must be transports or batches, got ${options.only}`);
  process.exit(2);
}
const runs = (experiment: 'transports' | 'batches'): boolean =>
  options.only === undefined || options.only === experiment;

/** TIME_WAIT TCP sockets on this host now (`ss -tan state time-wait`, header line excluded). */
const timeWaitSockets = (): number =>
  execFileSync('ss', ['-tan', 'state', 'time-wait'], { encoding: 'utf8' }).trim().split('\n').length - 1;

/** A gate's outbox in memory: the writer's refusals wait here until the reporter's acknowledgement. */
class MemoryOutbox implements RejectionOutbox {
  readonly resource = RESOURCE;
  reportedThroughSeq: number;
  #pending: PendingRejection[] = [];
  #listeners = new Set<() => void>();
  constructor(throughSeq: number) {
    this.reportedThroughSeq = throughSeq;
  }
  add(rejection: PendingRejection): void {
    this.#pending.push(rejection);
    for (const listener of this.#listeners) listener();
  }
  pendingRejections(): readonly PendingRejection[] {
    return this.#pending;
  }
  acknowledgeRejections(throughSeq: number): Promise<void> {
    this.reportedThroughSeq = Math.max(this.reportedThroughSeq, throughSeq);
    this.#pending = this.#pending.filter((rejection) => rejection.seq > this.reportedThroughSeq);
    return Promise.resolve();
  }
  onPending(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

const dir = await createTempDir('lease-fence-bench-gate-reports-');
const tokens = createBenchTokens(2);
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(tokens.entries));
const builds: { readonly name: string; readonly main?: string }[] = [
  { name: 'this build' },
  ...(options.baseline === undefined
    ? []
    : [
        {
          name: 'baseline',
          main: isAbsolute(options.baseline) ? options.baseline : join(process.cwd(), options.baseline),
        },
      ]),
];
const coordinators = new Map<string, BenchCoordinator>();
try {
  for (const build of builds)
    coordinators.set(
      build.name,
      await startBenchCoordinator({
        dataDir: join(dir, `data-${coordinators.size}`),
        tokensFile,
        nodeArgs: cpuProfileArgs(),
        ...(build.main === undefined ? {} : { main: build.main }),
      }),
    );
  const ANY = { safeParse: (data: unknown) => ({ success: true as const, data }) };
  /** Two generations of the lease on `coordinator`: bench-agent-0's fence is the stale one every refusal names. */
  const generations = async (coordinator: BenchCoordinator): Promise<{ older: number; newer: number }> => {
    const agent = (index: number): CoordinatorHttp =>
      new CoordinatorHttp('bench:gate-reports', { baseUrl: coordinator.url, token: tokens.agents[index]! });
    const grant = async (index: number): Promise<number> => {
      const { value } = await agent(index).post(
        'acquire',
        `/v1/leases/${RESOURCE}/acquire`,
        { requestId: `g${index}` },
        { 200: ANY },
      );
      return (value as { grant: { fence: number } }).grant.fence;
    };
    const older = await grant(0);
    await agent(0).post('release', `/v1/leases/${RESOURCE}/release`, { fence: older }, { 200: ANY });
    return { older, newer: await grant(1) };
  };
  const fences = new Map<string, { older: number; newer: number }>();
  for (const [name, coordinator] of coordinators) fences.set(name, await generations(coordinator));
  /** The next seq of the bench gate on each coordinator (its refusals of RESOURCE are numbered from 1). */
  const seqs = new Map<string, number>([...coordinators.keys()].map((name) => [name, 0]));
  const refusal = (build: string): PendingRejection => {
    const seq = seqs.get(build)! + 1;
    seqs.set(build, seq);
    const { older, newer } = fences.get(build)!;
    return {
      seq,
      resource: RESOURCE,
      kind: 'stale',
      rejected: { holderId: 'bench-agent-0', fence: older },
      current: { holderId: 'bench-agent-1', fence: newer },
      wallMillis: Date.now(),
    };
  };
  const thisBuild = coordinators.get('this build')!;

  if (runs('transports')) {
    const oneConnectionEach = new Agent({ pipelining: 0 });
    const arms = {
      'new connection each': new CoordinatorHttp(
        'bench:gate-reports',
        { baseUrl: thisBuild.url, token: tokens.gate },
        (url, init) =>
          undiciFetch(url, {
            ...(init as Parameters<typeof undiciFetch>[1]),
            dispatcher: oneConnectionEach,
          }) as Promise<unknown> as Promise<Response>,
      ),
      "gate's transport": new FenceGateClient({ baseUrl: thisBuild.url, token: tokens.gate }),
    };
    const report = (arm: keyof typeof arms): Promise<unknown> => {
      const client = arms[arm];
      const { wallMillis: _wall, ...rejection } = refusal('this build');
      return client instanceof FenceGateClient
        ? client.reportRejection(rejection)
        : client.post('report', `/v1/resources/${RESOURCE}/rejections`, rejection, { 202: ANY });
    };
    const figures: Record<string, { perSecond: number[]; cpuMicros: number[]; timeWaits: number[] }> = {};
    for (let round = 0; round < rounds; round += 1) {
      for (const arm of Object.keys(arms) as (keyof typeof arms)[]) {
        const cpuBefore = cpuSecondsOf(thisBuild.pid)!;
        const timeWaitBefore = timeWaitSockets();
        const started = performance.now();
        for (let i = 0; i < reportsPerRound; i += 1) await report(arm);
        const seconds = (performance.now() - started) / 1000;
        const entry = (figures[arm] ??= { perSecond: [], cpuMicros: [], timeWaits: [] });
        entry.perSecond.push(reportsPerRound / seconds);
        entry.cpuMicros.push(((cpuSecondsOf(thisBuild.pid)! - cpuBefore) * 1e6) / reportsPerRound);
        entry.timeWaits.push((timeWaitSockets() - timeWaitBefore) / reportsPerRound);
      }
    }
    console.log(
      `bench:gate-reports transports: ${reportsPerRound} refusal reports per arm and round, ${rounds} rounds (medians)`,
    );
    console.log('| transport | reports/s | coordinator CPU µs / report | TIME_WAIT sockets / report |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const [arm, entry] of Object.entries(figures)) {
      console.log(
        `| ${arm} | ${median(entry.perSecond).toFixed(0)} | ${median(entry.cpuMicros).toFixed(0)} | ${median(entry.timeWaits).toFixed(2)} |`,
      );
    }
    const [before, after] = Object.values(figures);
    console.log(
      `gate's transport / new connection each: reports/s × ${(median(after!.perSecond) / median(before!.perSecond)).toFixed(2)}, ` +
        `coordinator CPU per report × ${(median(after!.cpuMicros) / median(before!.cpuMicros)).toFixed(2)}`,
    );
  }

  if (runs('batches')) {
    /** One storm drained by `reportRejections` through `sink` to `build`'s coordinator; returns its figures. */
    const storm = async (build: string, sink: RejectionSink) => {
      const coordinator = coordinators.get(build)!;
      const outbox = new MemoryOutbox(seqs.get(build)!);
      let requests = 0;
      const counted: RejectionSink = {
        reportRejection: (rejection, options) => {
          requests += 1;
          return sink.reportRejection(rejection, options);
        },
        ...(sink.reportRejectionBatch === undefined
          ? {}
          : {
              reportRejectionBatch: (resource, rejections, options) => {
                requests += 1;
                return sink.reportRejectionBatch!(resource, rejections, options);
              },
            }),
      };
      const cpuBefore = cpuSecondsOf(coordinator.pid)!;
      const started = performance.now();
      const reporter = reportRejections(outbox, counted, { pollIntervalMillis: 5 });
      // The stale writer: refused again and again, faster than one report per refusal keeps up with.
      for (let i = 0; i < reportsPerRound; i += 1) {
        outbox.add(refusal(build));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await reporter.flush();
      const seconds = (performance.now() - started) / 1000;
      await reporter.close();
      return {
        perSecond: reportsPerRound / seconds,
        cpuMicros: ((cpuSecondsOf(coordinator.pid)! - cpuBefore) * 1e6) / reportsPerRound,
        requestsPerReport: requests / reportsPerRound,
      };
    };
    const clients = new Map(
      [...coordinators].map(([name, coordinator]) => [
        name,
        new FenceGateClient({ baseUrl: coordinator.url, token: tokens.gate }),
      ]),
    );
    const single = clients.get('this build')!;
    const arms: Record<string, () => ReturnType<typeof storm>> = {
      'single reports': () =>
        storm('this build', { reportRejection: (rejection, options) => single.reportRejection(rejection, options) }),
      batches: () => storm('this build', single),
      ...(coordinators.has('baseline')
        ? { 'batches → baseline': () => storm('baseline', clients.get('baseline')!) }
        : {}),
    };
    const figures: Record<string, { perSecond: number[]; cpuMicros: number[]; requestsPerReport: number[] }> = {};
    for (let round = 0; round < rounds; round += 1) {
      for (const [arm, run] of Object.entries(arms)) {
        const result = await run();
        const entry = (figures[arm] ??= { perSecond: [], cpuMicros: [], requestsPerReport: [] });
        entry.perSecond.push(result.perSecond);
        entry.cpuMicros.push(result.cpuMicros);
        entry.requestsPerReport.push(result.requestsPerReport);
      }
    }
    console.log(
      `bench:gate-reports batches: storms of ${reportsPerRound} refusals drained by reportRejections, ${rounds} rounds, arms alternating (medians)`,
    );
    console.log('| arm | reports/s | coordinator CPU µs / report | requests / report |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const [arm, entry] of Object.entries(figures)) {
      console.log(
        `| ${arm} | ${median(entry.perSecond).toFixed(0)} | ${median(entry.cpuMicros).toFixed(0)} | ${median(entry.requestsPerReport).toFixed(3)} |`,
      );
    }
    const ratio = (arm: string, against: string): string => {
      const a = figures[arm]!;
      const b = figures[against]!;
      return (
        `${arm} / ${against}: reports/s × ${(median(a.perSecond) / median(b.perSecond)).toFixed(2)}, ` +
        `coordinator CPU per report × ${(median(a.cpuMicros) / median(b.cpuMicros)).toFixed(2)}`
      );
    };
    console.log(ratio('batches', 'single reports'));
    if (figures['batches → baseline'] !== undefined) console.log(ratio('batches', 'batches → baseline'));
  }
} finally {
  for (const coordinator of coordinators.values()) await coordinator.stop();
  await removeTempDir(dir);
}
