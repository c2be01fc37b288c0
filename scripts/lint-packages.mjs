#!/usr/bin/env node
/**
 * `npm run lint:packages`: builds the public packages (scripts/public-packages.mjs), then checks
 * each one as it would be published:
 *
 * - publint (`--strict`: warnings fail too) on its `npm pack` contents: exports, files, types;
 * - Are the Types Wrong? (`attw --pack --profile esm-only`): its type declarations resolve for
 *   every export under node16/nodenext and bundler resolution. The packages are ESM only
 *   (CommonJS code loads them with `await import()`), so the `esm-only` profile leaves out the
 *   CommonJS and `node10` resolutions; each package README says so under "Install".
 *
 * Both run offline on the local pack (no registry look-up). Exits non-zero when any check fails,
 * after running all of them.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publicPackages } from './public-packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packages = publicPackages(root);
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Runs `command` with `args` in `cwd`, output passed through; true when it exits 0. */
const run = (command, args, cwd = root) => spawnSync(command, args, { cwd, stdio: 'inherit' }).status === 0;

const names = packages.map((pkg) => pkg.name);
if (!run(bin('nx'), ['run-many', '-t', 'build', '-p', ...names, '--outputStyle=stream'])) process.exit(1);

const failed = [];
for (const pkg of packages) {
  console.log(`\n== ${pkg.name} (${relative(root, pkg.dir)})`);
  if (!run(bin('publint'), ['--strict', pkg.dir])) failed.push(`${pkg.name}: publint`);
  if (!run(bin('attw'), ['--pack', '.', '--profile', 'esm-only', '--format', 'ascii'], pkg.dir))
    failed.push(`${pkg.name}: attw`);
}
if (failed.length > 0) {
  console.error(`\nlint:packages failed:\n  ${failed.join('\n  ')}`);
  process.exit(1);
}
console.log(`\nlint:packages: ${packages.length} public packages clean (publint --strict, attw --profile esm-only)`);
