#!/usr/bin/env node
// Runs one benchmark from a fresh clone with one command (the root package.json's `bench:*`
// scripts call this): builds the projects it needs with Nx, compiles the TypeScript benchmark
// scripts of this folder (test/bench/tsconfig.bench.json → test/dist/bench-build, ignored by
// git), then runs the compiled script with the remaining arguments.
//
//   node test/bench/run-bench.mjs service|agent-link|recovery|fold|lib|stream|dashboard|dashboard-scene|gate|gate-reports [-- --option value ...]
//
// Benchmarks print figures; none asserts anything, and none is part of `npm test`.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../../', import.meta.url));
/**
 * What every benchmark needs built: every script of this folder is compiled together
 * (tsconfig.bench.json), so each needs what any of them imports (the coordinator brings every
 * library it uses; the client is the agent link transport and the gate link; dashboard-model is
 * imported by bench-dashboard.ts).
 */
const COMPILED_TOGETHER = ['@lease-fence/coordinator', '@lease-fence/client', '@lease-fence/dashboard-model'];
/** Projects each benchmark needs built besides {@link COMPILED_TOGETHER} (Nx builds their dependencies first). */
const NEEDS = {
  service: [],
  'agent-link': [],
  recovery: [],
  fold: [],
  lib: ['lease-fence'],
  stream: [],
  dashboard: ['@lease-fence/dashboard'],
  'dashboard-scene': ['@lease-fence/dashboard'],
  gate: ['@lease-fence/gate'],
  'gate-reports': [],
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
const projects = [...COMPILED_TOGETHER, ...NEEDS[name]];
const script = join(root, 'test', 'dist', 'bench-build', 'bench', `bench-${name}.js`);
/** Whether the compiled script is newer than its source and the option parser its usage comes from. */
const compiledIsCurrent = () =>
  existsSync(script) &&
  [`bench-${name}.ts`, join('support', 'bench-args.ts')].every(
    (source) => statSync(script).mtimeMs >= statSync(join(root, 'test', 'bench', source)).mtimeMs,
  );
// `--help` answers at once from a current compiled script (its usage lives there): a build would
// only delay it by a minute. A fresh clone, or a changed source, builds first, as for a run.
const wantsHelp = args.includes('--help') || args.includes('-h');
try {
  if (wantsHelp && compiledIsCurrent()) {
    await step(`bench-${name} --help`, process.execPath, [script, ...args]);
    process.exit(0);
  }
  await step(
    `building ${projects.join(', ')}`,
    bin('nx'),
    ['run-many', '-t', 'build', '-p', ...projects, '--outputStyle=static'],
    ['ignore', 'ignore', 'inherit'],
  );
  await step('compiling test/bench', bin('tsc'), ['-p', join(root, 'test', 'bench', 'tsconfig.bench.json')]);
  await step(`running bench-${name}`, process.execPath, [script, ...args]);
} catch (error) {
  console.error(`bench:${name}: ${error.message}`);
  process.exit(1);
}
