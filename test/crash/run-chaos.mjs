#!/usr/bin/env node
// The long chaos run (`npm run chaos -- --cycles 50 [--seed 7]`): builds the coordinator and the
// gate sidecar with Nx, then runs test/crash/chaos.int.spec.ts with that many kill cycles, printing each
// cycle and the figures at the end (the same checks as the short run in `npm test`).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
let values;
try {
  ({ values } = parseArgs({
    options: { cycles: { type: 'string', default: '50' }, seed: { type: 'string', default: '2026' } },
  }));
} catch (error) {
  console.error(`chaos: ${error.message}\nusage: npm run chaos -- [--cycles N] [--seed S]`);
  process.exit(2);
}
for (const name of ['cycles', 'seed']) {
  if (!/^[1-9][0-9]*$/.test(values[name])) {
    console.error(`chaos: --${name} must be a positive integer, got ${JSON.stringify(values[name])}`);
    process.exit(2);
  }
}
const env = {
  ...process.env,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  CHAOS_CYCLES: values.cycles,
  CHAOS_SEED: values.seed,
  CHAOS_VERBOSE: '1',
};
const run = (command, args, cwd) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`)),
    );
  });
const bin = (tool) => join(root, 'node_modules', '.bin', tool);
try {
  console.error('chaos: building the coordinator and the gate');
  await run(
    bin('nx'),
    ['run-many', '-t', 'build', '-p', '@lease-fence/coordinator', '@lease-fence/gate', '--outputStyle=static'],
    root,
  );
  console.error(`chaos: ${values.cycles} cycles, seed ${values.seed}`);
  await run(bin('vitest'), ['run', 'crash/chaos.int.spec.ts'], join(root, 'test'));
} catch (error) {
  console.error(`chaos: ${error.message}`);
  process.exit(1);
}
