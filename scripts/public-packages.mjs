/**
 * The workspace's public packages: every workspace (the root package.json's `workspaces` globs,
 * one level deep) whose package.json does not say `"private": true`. A package joins the
 * published set, `npm run lint:packages` and the install test (test/packages/install.int.spec.ts)
 * by dropping that flag; nothing else lists them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Lists the public packages of the workspace at `root` (an absolute path), sorted by directory.
 *
 * @param {string} root the workspace root (the folder of the root package.json)
 * @returns {{ name: string, version: string, dir: string, manifest: Record<string, any> }[]}
 *   each package's name, version, absolute directory and parsed package.json
 * @throws {Error} when a `workspaces` entry is not `folder` or `folder/*` (the only forms used here)
 */
export function publicPackages(root) {
  const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dirs = workspaces.flatMap((pattern) => {
    if (!/^[\w.-]+(\/\*)?$/.test(pattern)) throw new Error(`workspaces: unsupported pattern ${pattern}`);
    if (!pattern.endsWith('/*')) return [join(root, pattern)];
    const parent = join(root, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name));
  });
  return dirs
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({ name: manifest.name, version: manifest.version, dir, manifest }))
    .sort((a, b) => a.dir.localeCompare(b.dir));
}
