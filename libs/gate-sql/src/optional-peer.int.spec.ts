/**
 * better-sqlite3 is an optional peer dependency: the built package must load, and its PostgreSQL
 * gate work, in a process where `better-sqlite3` cannot be resolved (a module hook refuses it, as
 * Node does when the package is not installed), and its SQLite gate must then say which package
 * to install. Runs the built output (`dist/`, which `test` depends on), as an installed copy would.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DIST_INDEX = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href;

/** Resolves `better-sqlite3` as Node does when it is not installed: ERR_MODULE_NOT_FOUND. */
const HOOKS = `
export async function resolve(specifier, context, next) {
  if (specifier === 'better-sqlite3' || specifier.startsWith('better-sqlite3/')) {
    const error = new Error("Cannot find package 'better-sqlite3' (refused by the test's module hook)");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
`;

/** Loads the package, builds a PostgreSQL gate and tries a SQLite one; prints what happened as JSON. */
const PROGRAM = `
const seen = {};
try { await import('better-sqlite3'); seen.hook = 'not applied'; } catch (error) { seen.hook = error.code; }
const gateSql = await import(${JSON.stringify(DIST_INDEX)});
const verifier = { verify: async () => { throw new Error('not called'); } };
const pool = { connect: async () => { throw new Error('not called'); } };
seen.postgres = gateSql.postgresFenceGate({ pool, resource: 'orders-db', verifier }).resource;
try { gateSql.sqliteFenceGate({ database: undefined, resource: 'orders-db', verifier }); } catch (error) { seen.sqlite = error.message; }
console.log(JSON.stringify(seen));
`;

describe('@lease-fence/gate-sql without better-sqlite3 installed', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gate-sql-no-sqlite-'));
    await writeFile(join(dir, 'hooks.mjs'), HOOKS);
    await writeFile(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
    );
    await writeFile(join(dir, 'program.mjs'), PROGRAM);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads, builds a PostgreSQL gate, and refuses a SQLite gate naming the package to install', async () => {
    // Act
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', pathToFileURL(join(dir, 'register.mjs')).href, join(dir, 'program.mjs')],
        { cwd: fileURLToPath(new URL('..', import.meta.url)) },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve(out)),
      ),
    );

    // Assert
    expect(JSON.parse(stdout)).toEqual({
      hook: 'ERR_MODULE_NOT_FOUND',
      postgres: 'orders-db',
      sqlite: expect.stringContaining('npm install better-sqlite3'),
    });
  });
});
