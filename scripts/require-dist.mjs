#!/usr/bin/env node
/**
 * `prepack` of every public package: refuse to pack a package whose `dist/` is missing, so
 * `npm pack` (and `npm publish`, through the release flow in CONTRIBUTING.md) never ships a
 * package without its code. Build first: `npm run build` at the root, or
 * `npx nx run <package>:build`. Run from the package's directory (npm does that for `prepack`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

if (!existsSync(join(process.cwd(), 'dist'))) {
  console.error(
    `${process.env.npm_package_name ?? process.cwd()}: dist/ is missing, so the package would ship without its code. Build it first: npm run build (or npx nx run ${process.env.npm_package_name ?? '<package>'}:build).`,
  );
  process.exit(1);
}
