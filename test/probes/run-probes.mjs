#!/usr/bin/env node
// Runs the black-box reliability probes (test/probes/*.int.spec.ts) with one command, from the
// root package.json's `probes` script: builds the coordinator with Nx, then runs the probes one
// file at a time with vitest. Each probe prints one `probe <name> (...)` line of figures; the
// docs/operations.md § "Reliability: black-box probes" quotes them.
//
//   npm run probes                 # the short versions (the same ones `npm test` runs)
//   npm run probes -- --long       # the long versions: 20 kill cycles, 10 000 fuzz requests, …
//   npm run probes -- --long --seed 7 fuzz   # another seed; only files whose name contains "fuzz"
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2);
const long = args.includes('--long');
const seedAt = args.indexOf('--seed');
const seed = seedAt >= 0 ? args[seedAt + 1] : undefined;
if (seedAt >= 0 && (seed === undefined || !/^-?\d+$/.test(seed))) {
  console.error('usage: npm run probes -- [--long] [--seed <integer>] [file filter]');
  process.exit(2);
}
const filters = args.filter((arg, index) => !arg.startsWith('--') && index !== seedAt + 1);
const env = {
  ...process.env,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  LEASE_FENCE_PROBES: long ? 'long' : 'short',
  ...(seed === undefined ? {} : { LEASE_FENCE_PROBES_SEED: seed }),
};

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (current?.exitCode === null) current.kill(signal); // vitest stops its coordinators by PID
  });
}

function step(label, command, commandArgs, cwd) {
  console.error(`probes: ${label}`);
  return new Promise((resolve, reject) => {
    current = spawn(command, commandArgs, { cwd, env, stdio: 'inherit' });
    current.once('error', reject);
    current.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${label} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

const bin = (tool) => join(root, 'node_modules', '.bin', tool);
try {
  await step(
    'building the coordinator',
    bin('nx'),
    ['run', '@lease-fence/coordinator:build', '--outputStyle=static'],
    root,
  );
  const files = filters.length === 0 ? ['probes/'] : filters.map((filter) => `probes/.*${filter}`);
  await step(
    `running the ${long ? 'long' : 'short'} probes`,
    bin('vitest'),
    ['run', '--no-file-parallelism', ...files],
    join(root, 'test'),
  );
} catch (error) {
  console.error(`probes: ${error.message}`);
  process.exit(1);
}
