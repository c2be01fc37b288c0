/**
 * Where a benchmark finds things: the repository root (from `LEASE_FENCE_BENCH_REPO_ROOT`, set by
 * `run-bench.mjs`, else the working directory, which `npm run` sets to the root) and the peer
 * harness (`BENCH_PEERS_DIR`, else `../shared/bench-peers` beside the repository).
 */
import { existsSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join, resolve } from 'node:path';

/** The workspace root: `apps/`, `libs/` and `test/` are below it. */
export function repoRoot(): string {
  const root = resolve(process.env.LEASE_FENCE_BENCH_REPO_ROOT ?? process.cwd());
  if (!existsSync(join(root, 'apps', 'coordinator', 'package.json'))) {
    throw new Error(
      `benchmarks: ${root} is not the lease-fence repository root; run them with \`npm run bench:<name>\` from the root`,
    );
  }
  return root;
}

/** The shared peer harness (read-only; copy it before running anything that writes). */
export function benchPeersDir(): string {
  const dir = resolve(process.env.BENCH_PEERS_DIR ?? join(repoRoot(), '..', 'shared', 'bench-peers'));
  if (!existsSync(join(dir, 'run.sh'))) {
    throw new Error(
      `no peer harness at ${dir} (expected run.sh there). It is the workplace's shared benchmark harness (etcd, Redis and an in-memory ` +
        'HTTP stand-in on the same lease workload), kept beside the repository in ../shared/bench-peers, not inside it: set BENCH_PEERS_DIR to its folder (see BENCHMARKS.md)',
    );
  }
  return dir;
}

/** One line describing the machine, for the header of every report. */
export function machineLine(): string {
  const cores = cpus();
  return `${new Date().toISOString()} | ${cores.length} × ${cores[0]?.model ?? 'unknown CPU'} | Linux ${release()} | Node ${process.version}`;
}
