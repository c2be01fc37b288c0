/**
 * Installs the packages as a user would: `npm pack` of every public package (found from the
 * workspace by scripts/public-packages.mjs, so a new public package joins without editing this
 * file), `npm install` of the tarballs into a scratch project in the OS temp dir, outside the
 * workspace (no workspace links; their other dependencies come from the registry or npm's cache),
 * then:
 *
 * - each package README's example (its first ```ts block, read by test/support/readme-examples.ts)
 *   runs from plain Node ESM (types stripped, nothing else changed) and from TypeScript compiled
 *   by the scratch project's own `tsc` (`module`/`moduleResolution: nodenext`, strict, the
 *   installed declarations checked too), against a coordinator this test starts; an example that
 *   needs values from its surroundings (`baseUrl`, a database) gets them from PRELUDES below, the
 *   README's code stays as written;
 * - every export subpath of every public package typechecks as an import;
 * - only one copy of zod is installed;
 * - every shipped source map has `sourcesContent` and points only at files in the package;
 * - every bin (`lease-fence-gate`, `lease-fence`) prints its help via `npx` and exits 0.
 *
 * Built output comes from Nx (`test` depends on building every public package); this file packs it.
 */
import { execFile, type ExecFileOptions } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicPackages } from '../../scripts/public-packages.mjs';
import { startPostgresServer } from '../../libs/gate-sql/testing/postgres-server.mjs';
import { REPO_ROOT, startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { readmeExample } from '../support/readme-examples.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

const PACKAGES = publicPackages(REPO_ROOT);
const rootManifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

const AGENT_TOKEN = 'install-agent-1-7c2e9a';
const GATE_TOKEN = 'install-gate-4b8d1f';

/**
 * What an example needs from its surroundings, by package name: code placed before the README's
 * block (values the README says "come from there"), code placed after it (closing what it opened,
 * using what it defined), and what the run prints when the README shows no output.
 */
const PRELUDES: Readonly<
  Record<string, { readonly before: string; readonly after?: string; readonly prints: RegExp }>
> = {
  '@lease-fence/client': {
    before: `
const baseUrl = process.env.LEASE_FENCE_URL!;
const agentToken = process.env.LEASE_FENCE_AGENT_TOKEN!;
const callTheModel = async ({ signal }: { signal: AbortSignal }) => {
  signal.throwIfAborted();
  return { version: '1.4.2' };
};
const deploySlot = {
  write: async (token: { readonly fence: number }, plan: { version: string }) => {
    console.log(\`deployed \${plan.version} under fence \${token.fence}\`);
    return plan.version;
  },
};
`,
    prints: /^deployed 1\.4\.2 under fence \d+\n$/,
  },
  '@lease-fence/gate-sql': {
    before: `
const databaseUrl = process.env.DATABASE_URL!;
const baseUrl = process.env.LEASE_FENCE_URL!;
const gateToken = process.env.LEASE_FENCE_GATE_TOKEN!;
`,
    after: `
import { LeaseFenceClient } from '@lease-fence/client';
await pool.query("CREATE TABLE IF NOT EXISTS orders (id INT PRIMARY KEY, state TEXT NOT NULL)");
await pool.query("INSERT INTO orders VALUES (7, 'paid') ON CONFLICT (id) DO UPDATE SET state = 'paid'");
const agent = new LeaseFenceClient({
  baseUrl,
  token: process.env.LEASE_FENCE_AGENT_TOKEN!,
  holderId: 'agent-1',
  clockSkewMillis: 100,
});
const acquired = await agent.acquire('orders-db', { ttlMillis: 30_000 });
if (!acquired.ok) throw new Error(\`acquire: \${acquired.reason}\`);
await ship(acquired.lease.signedToken, 7);
const { rows } = await pool.query('SELECT state FROM orders WHERE id = 7');
console.log(\`order 7 is \${rows[0].state}\`);
await agent.release(acquired.lease);
await drainer.close();
await pool.end();
`,
    prints: /^order 7 is shipped\n$/,
  },
};

/** Runs a command; resolves with its output, rejects with it (and the exit code) on failure. */
const run = (
  command: string,
  args: readonly string[],
  options: ExecFileOptions = {},
): Promise<{ stdout: string; stderr: string }> =>
  new Promise((resolvePromise, reject) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024, ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolvePromise({ stdout: String(stdout), stderr: String(stderr) });
    });
  });

/** Every file under `dir` (relative paths), skipping nested node_modules. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((file) => !file.split('/').includes('node_modules'));

/** The README example of each public package that has one (a ```ts block in its README.md). */
const EXAMPLES = PACKAGES.filter(
  (pkg) =>
    existsSync(join(pkg.dir, 'README.md')) && readFileSync(join(pkg.dir, 'README.md'), 'utf8').includes('```ts\n'),
).map((pkg) => {
  const prelude = PRELUDES[pkg.name];
  const example = readmeExample(join(pkg.dir, 'README.md'), undefined, prelude === undefined);
  const file = pkg.name.replace(/^@/, '').replace('/', '-');
  return {
    name: pkg.name,
    file,
    code: `${prelude?.before ?? ''}${example.code}${prelude?.after ?? ''}`,
    example,
    prelude,
  };
});

describe('the packed packages, installed outside the workspace', () => {
  let workDir: string;
  let project: string;
  let coordinator: RunningCoordinator;
  let postgres: Awaited<ReturnType<typeof startPostgresServer>> | undefined;
  let exampleEnv: NodeJS.ProcessEnv;
  /** What the scratch project's tsc printed when it failed, or '' when it compiled cleanly. */
  let compileErrors: string;
  /** Every export subpath of every public package, e.g. `@lease-fence/client/testing`. */
  const subpaths = PACKAGES.flatMap((pkg) =>
    Object.keys((pkg.manifest.exports ?? {}) as Record<string, unknown>)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => `${pkg.name}${subpath.slice(1)}`),
  );

  beforeAll(async () => {
    workDir = await createTempDir('lease-fence-install-');
    const tarballs = join(workDir, 'tarballs');
    project = join(workDir, 'project');
    await mkdir(tarballs);
    await mkdir(project);
    for (const pkg of PACKAGES)
      await run('npm', ['pack', '--silent', '--pack-destination', tarballs], { cwd: pkg.dir });
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }, null, 2),
    );
    // Install scripts off: no example here loads a native addon, so none should be compiled.
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--no-package-lock',
        ...readdirSync(tarballs).map((file) => join(tarballs, file)),
        `typescript@${rootManifest.devDependencies.typescript}`,
        `@types/node@${rootManifest.devDependencies['@types/node']}`,
        // the optional peer of @lease-fence/dashboard-model/testing, which the exports check imports
        `fast-check@${rootManifest.devDependencies['fast-check']}`,
      ],
      { cwd: project },
    );
    compileErrors = await compileInProject(project, subpaths);
    [coordinator, postgres] = await Promise.all([
      startCoordinator({
        tokens: [
          { token: AGENT_TOKEN, role: 'agent', holderId: 'agent-1' },
          { token: GATE_TOKEN, role: 'gate', resources: ['orders-*', 'deploy-*'], gateId: 'install-gate' },
        ],
      }),
      startPostgresServer({ fsync: false }),
    ]);
    exampleEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LEASE_FENCE_URL: coordinator.url,
      LEASE_FENCE_AGENT_TOKEN: AGENT_TOKEN,
      LEASE_FENCE_GATE_TOKEN: GATE_TOKEN,
      DATABASE_URL: postgres.url,
    };
  }, 600_000);

  afterAll(async () => {
    await coordinator?.cleanup();
    await postgres?.stop();
    if (workDir !== undefined) await removeTempDir(workDir);
  }, 60_000);

  it('installs every public package from its tarball, not linked to the workspace', () => {
    expect(PACKAGES.map((pkg) => pkg.name)).toEqual(
      expect.arrayContaining(['lease-fence', '@lease-fence/protocol', '@lease-fence/client', '@lease-fence/gate']),
    );
    for (const pkg of PACKAGES) {
      const installed = join(project, 'node_modules', pkg.name);
      expect(lstatSync(installed).isSymbolicLink(), pkg.name).toBe(false);
      expect(resolve(installed).startsWith(REPO_ROOT), pkg.name).toBe(false);
      expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version).toBe(pkg.version);
      expect(readdirSync(installed)).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json', 'dist']));
    }
  });

  it('installs one copy of zod', () => {
    const copies = manifestsUnder(join(project, 'node_modules')).filter((file) =>
      /(^|\/)node_modules\/zod\/package\.json$/.test(`node_modules/${file}`),
    );
    expect(copies).toEqual(['zod/package.json']);
  });

  it('ships source maps whose sources are in the package, with their content', () => {
    for (const pkg of PACKAGES) {
      const installed = join(project, 'node_modules', pkg.name);
      const maps = filesUnder(installed).filter((file) => file.endsWith('.map'));
      expect(maps.length, pkg.name).toBeGreaterThan(0);
      for (const mapFile of maps) {
        const map = JSON.parse(readFileSync(join(installed, mapFile), 'utf8')) as {
          sources: string[];
          sourceRoot?: string;
          sourcesContent?: string[];
        };
        const missing = map.sources.filter(
          (source) => !existsSync(resolve(installed, mapFile, '..', map.sourceRoot ?? '', source)),
        );
        expect(missing, `${pkg.name}/${mapFile}`).toEqual([]);
        if (mapFile.endsWith('.js.map'))
          expect(map.sourcesContent?.length, `${pkg.name}/${mapFile}`).toBe(map.sources.length);
      }
    }
  });

  it("typechecks every export and each README's example with tsc (nodenext) against the installed declarations", () => {
    expect(subpaths).toEqual(expect.arrayContaining(['@lease-fence/client', '@lease-fence/client/testing']));
    expect(compileErrors).toBe('');
  });

  describe.each(EXAMPLES)("$name README's example", (example) => {
    const expectPrinted = (stdout: string): void => {
      if (example.prelude === undefined) expect(stdout).toBe(example.example.expectedOutput);
      else expect(stdout).toMatch(example.prelude.prints);
    };

    it('runs from plain Node ESM and prints what it should', async () => {
      // Arrange: the same code with its types stripped, nothing else changed
      const file = join(project, 'esm', `${example.file}.mjs`);
      await mkdir(join(project, 'esm'), { recursive: true });
      const javascript = ts.transpileModule(example.code, {
        compilerOptions: { target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.ESNext },
      }).outputText;
      await writeFile(file, javascript);
      // Act
      const { stdout } = await run(process.execPath, [file], { cwd: project, env: exampleEnv });
      // Assert
      expectPrinted(stdout);
    }, 120_000);

    it('runs compiled by tsc and prints what it should', async () => {
      // Arrange: compiled by tsc in beforeAll
      const file = join(project, 'out', `${example.file}.mjs`);
      expect(compileErrors).toBe('');
      // Act
      const { stdout } = await run(process.execPath, [file], { cwd: project, env: exampleEnv });
      // Assert
      expectPrinted(stdout);
    }, 120_000);
  });

  const bins = PACKAGES.flatMap((pkg) => Object.keys((pkg.manifest.bin ?? {}) as Record<string, string>));

  it.each(bins)(
    'npx %s --help prints its help and exits 0',
    async (bin) => {
      // Act
      const { stdout } = await run('npx', ['--no', '--', bin, '--help'], { cwd: project, env: exampleEnv });
      // Assert
      expect(stdout).toContain(bin);
    },
    60_000,
  );

  it('finds the bins of the gate and the command line', () => {
    expect(bins).toEqual(expect.arrayContaining(['lease-fence-gate', 'lease-fence']));
  });
});

/**
 * Writes into `project/ts` one import of each of `subpaths` and each example (with its prelude),
 * compiles them with the project's own tsc (nodenext, strict, declarations checked) into
 * `project/out`, and resolves with tsc's output when it fails, or '' when it compiled cleanly.
 */
async function compileInProject(project: string, subpaths: readonly string[]): Promise<string> {
  const source = join(project, 'ts');
  await mkdir(source, { recursive: true });
  await writeFile(
    join(source, 'exports.mts'),
    subpaths.map((specifier, index) => `import * as m${index} from '${specifier}';\nexport { m${index} };\n`).join(''),
  );
  for (const example of EXAMPLES) await writeFile(join(source, `${example.file}.mts`), example.code);
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        rootDir: 'ts',
        outDir: 'out',
      },
      include: ['ts/*.mts'],
    }),
  );
  return run(join(project, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: project }).then(
    () => '',
    (error: Error) => error.message,
  );
}

/** Every package.json under `dir` (relative paths), nested node_modules included. */
function manifestsUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name === 'package.json')
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}
