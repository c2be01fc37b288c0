#!/usr/bin/env node
// Runs one benchmark from a fresh clone with one command (the root package.json's `bench:*`
// scripts call this): builds the projects it needs with Nx, compiles the TypeScript benchmark
// scripts of this folder (test/bench/tsconfig.bench.json → test/dist/bench-build, ignored by
// git), then runs the compiled script with the remaining arguments.
//
//   node test/bench/run-bench.mjs service|recovery|lib|stream|dashboard|gate [-- --option value ...]
//
// Benchmarks print figures; none asserts anything, and none is part of `npm test`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../../', import.meta.url));
/**
 * Projects each benchmark needs built (Nx builds their dependencies first). Every script of this
 * folder is compiled together (tsconfig.bench.json), so each entry also builds what the others
 * import: the coordinator brings every library.
 */
const NEEDS = {
  service: ['@lease-fence/coordinator', '@lease-fence/client'], // the client: the fence-first mode's gate link
  recovery: ['@lease-fence/coordinator', '@lease-fence/dashboard-model'], // dashboard-model: bench-dashboard.ts is compiled too
  lib: ['lease-fence', '@lease-fence/coordinator'],
  stream: ['@lease-fence/coordinator'],
  dashboard: ['@lease-fence/coordinator', '@lease-fence/dashboard'],
  gate: ['@lease-fence/coordinator', '@lease-fence/gate', '@lease-fence/dashboard-model'], // dashboard-model: bench-dashboard.ts is compiled too
};

const [name, ...rest] = process.argv.slice(2);
if (!(name in NEEDS)) {
  console.error(`usage: node test/bench/run-bench.mjs ${Object.keys(NEEDS).join('|')} [-- options]`);
  process.exit(2);
}
const args = rest[0] === '--' ? rest.slice(1) : rest;
const env = {
  ...process.env,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  LEASE_FENCE_BENCH_REPO_ROOT: root,
};

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (current?.exitCode === null) current.kill(signal); // the child cleans up its own servers and temp dirs
  });
}

function step(label, command, commandArgs, stdio = 'inherit') {
  console.error(`bench:${name}: ${label}`);
  return new Promise((resolve, reject) => {
    current = spawn(command, commandArgs, { cwd: root, env, stdio });
    current.once('error', reject);
    current.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${label} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

const bin = (tool) => join(root, 'node_modules', '.bin', tool);
try {
  await step(
    `building ${NEEDS[name].join(', ')}`,
    bin('nx'),
    ['run-many', '-t', 'build', '-p', ...NEEDS[name], '--outputStyle=static'],
    ['ignore', 'ignore', 'inherit'],
  );
  await step('compiling test/bench', bin('tsc'), ['-p', join(root, 'test', 'bench', 'tsconfig.bench.json')]);
  await step(`running bench-${name}`, process.execPath, [
    join(root, 'test', 'dist', 'bench-build', 'bench', `bench-${name}.js`),
    ...args,
  ]);
} catch (error) {
  console.error(`bench:${name}: ${error.message}`);
  process.exit(1);
}
