/**
 * `npm run bench:gate-reports`: what a gate's refusal reports cost when a stale writer is refused
 * in a loop (a storm of `POST /v1/resources/:resource/rejections`, one per refusal, in seq order,
 * as `reportRejections` sends them), on two transports, in alternating rounds against one built
 * coordinator (SQLite):
 * - `new connection each`: undici with keep-alive off (`pipelining: 0`), the gate's transport
 *   until `libs/client/src/recent-connection-fetch.ts` replaced it;
 * - `gate's transport`: `FenceGateClient.reportRejection` as shipped (a connection is reused when
 *   it answered within `CONNECTION_REUSE_WINDOW_MILLIS`).
 * Printed per arm (medians over rounds): reports/s, the coordinator's CPU per report (µs), and
 * TIME_WAIT sockets left per report on this host (`ss`, Linux: each closed connection leaves one
 * for 60 s on the side that closed first; a host has ~28 000 ephemeral ports per destination).
 * Figures, not a test: nothing here asserts.
 * Options: `--reports 1500` per arm and round, `--rounds 3`; `LEASE_FENCE_BENCH_CPU_PROF_DIR=DIR`
 * makes the coordinator write a V8 CPU profile there when it stops.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { CoordinatorHttp, FenceGateClient } from '@lease-fence/client';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { parseBenchArgs } from './support/bench-args.js';
import { createBenchTokens } from './support/bench-tokens.js';
import { cpuProfileArgs, startBenchCoordinator } from './support/coordinator-child.js';
import { cpuSecondsOf } from './support/proc-usage.js';
import { median } from './support/stats.js';

const options = parseBenchArgs('gate-reports', {
  reports: { type: 'string', default: '1500' },
  rounds: { type: 'string', default: '3' },
});
const reportsPerRound = Number(options.reports);
const rounds = Number(options.rounds);
const RESOURCE = 'res-storm';

/** TIME_WAIT TCP sockets on this host now (`ss -tan state time-wait`, header line excluded). */
const timeWaitSockets = (): number =>
  execFileSync('ss', ['-tan', 'state', 'time-wait'], { encoding: 'utf8' }).trim().split('\n').length - 1;

const dir = await createTempDir('lease-fence-bench-gate-reports-');
const tokens = createBenchTokens(2);
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(tokens.entries));
const coordinator = await startBenchCoordinator({ dataDir: join(dir, 'data'), tokensFile, nodeArgs: cpuProfileArgs() });
try {
  // Two generations of the lease: bench-agent-0's fence is the stale one every refusal names.
  const agent = (index: number): CoordinatorHttp =>
    new CoordinatorHttp('bench:gate-reports', { baseUrl: coordinator.url, token: tokens.agents[index]! });
  const ANY = { safeParse: (data: unknown) => ({ success: true as const, data }) };
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
  const newer = await grant(1);

  const oneConnectionEach = new Agent({ pipelining: 0 });
  const arms = {
    'new connection each': new CoordinatorHttp(
      'bench:gate-reports',
      { baseUrl: coordinator.url, token: tokens.gate },
      (url, init) =>
        undiciFetch(url, {
          ...(init as Parameters<typeof undiciFetch>[1]),
          dispatcher: oneConnectionEach,
        }) as Promise<unknown> as Promise<Response>,
    ),
    "gate's transport": new FenceGateClient({ baseUrl: coordinator.url, token: tokens.gate }),
  };
  let seq = 0;
  const report = (arm: keyof typeof arms): Promise<unknown> => {
    seq += 1;
    const rejection = {
      seq,
      resource: RESOURCE,
      kind: 'stale' as const,
      rejected: { holderId: 'bench-agent-0', fence: older },
      current: { holderId: 'bench-agent-1', fence: newer },
    };
    const client = arms[arm];
    return client instanceof FenceGateClient
      ? client.reportRejection(rejection)
      : client.post('report', `/v1/resources/${RESOURCE}/rejections`, rejection, { 202: ANY });
  };

  const figures: Record<string, { perSecond: number[]; cpuMicros: number[]; timeWaits: number[] }> = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const arm of Object.keys(arms) as (keyof typeof arms)[]) {
      const cpuBefore = cpuSecondsOf(coordinator.pid)!;
      const timeWaitBefore = timeWaitSockets();
      const started = performance.now();
      for (let i = 0; i < reportsPerRound; i += 1) await report(arm);
      const seconds = (performance.now() - started) / 1000;
      const entry = (figures[arm] ??= { perSecond: [], cpuMicros: [], timeWaits: [] });
      entry.perSecond.push(reportsPerRound / seconds);
      entry.cpuMicros.push(((cpuSecondsOf(coordinator.pid)! - cpuBefore) * 1e6) / reportsPerRound);
      entry.timeWaits.push((timeWaitSockets() - timeWaitBefore) / reportsPerRound);
    }
  }
  console.log(`bench:gate-reports: ${reportsPerRound} refusal reports per arm and round, ${rounds} rounds (medians)`);
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
} finally {
  await coordinator.stop();
  await removeTempDir(dir);
}
