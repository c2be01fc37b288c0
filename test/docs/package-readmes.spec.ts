/**
 * Runs the examples of the package READMEs as written: the first ```ts block of each README
 * imports from published package names, typechecks against the built packages, runs, and prints
 * exactly the ```text block that follows it. The only change made to run a block is that each
 * package specifier is replaced by the file it resolves to from this project. (The examples of
 * `libs/coordinator-core/README.md` and `libs/client/README.md` are regions of test files, checked
 * by `test/crash/readme-example.int.spec.ts` and `libs/client/src/readme-examples.int.spec.ts`.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { packagesOf, readmeExample } from '../support/readme-examples.js';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const workDir = mkdtempSync(join(tmpdir(), 'lease-fence-package-readme-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/**
 * The README examples this file runs: README path (relative to the repository), and the heading
 * the example follows when it is not the README's first `ts` block.
 */
const READMES: readonly { readonly readmePath: string; readonly heading?: string }[] = [
  { readmePath: 'libs/lease-fence/README.md' },
  { readmePath: 'libs/protocol/README.md' },
  { readmePath: 'libs/coordinator-core/README.md', heading: '## The in-memory log' },
  { readmePath: 'libs/event-log-sqlite/README.md' },
  { readmePath: 'libs/dashboard-model/README.md' },
];

describe.each(READMES)('$readmePath example', ({ readmePath, heading }) => {
  const example = readmeExample(join(repository, readmePath), heading);
  const expectedOutput = example.expectedOutput;
  const name = readmePath.split('/')[1]!;

  it('imports from published package names only', () => {
    expect(packagesOf(example.code).length).toBeGreaterThan(0);
    expect(
      packagesOf(example.code).every((specifier) => !specifier.startsWith('.') && !specifier.includes('/src/')),
    ).toBe(true);
  });

  it('typechecks as written against the built packages', () => {
    // Arrange
    const file = join(workDir, `${name}.mts`);
    writeFileSync(file, example.code);
    const paths = Object.fromEntries(
      packagesOf(example.code).map((specifier) => [specifier, [require.resolve(specifier).replace(/\.js$/, '.d.ts')]]),
    );
    // Act
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [join(repository, 'node_modules/@types')],
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      skipLibCheck: true,
      paths,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    // Assert
    expect(diagnostics).toEqual([]);
  }, 60_000);

  it('runs and prints what the README says it prints', async () => {
    // Arrange
    const file = join(workDir, `${name}-run.ts`);
    const runnable = example.code.replace(/from '([^']+)';/g, (whole, specifier: string) =>
      specifier.startsWith('node:') ? whole : `from ${JSON.stringify(pathToFileURL(require.resolve(specifier)).href)};`,
    );
    writeFileSync(file, runnable);
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    });
    // Act
    try {
      await import(/* @vite-ignore */ pathToFileURL(file).href);
    } finally {
      log.mockRestore();
    }
    // Assert
    expect(printed.join('\n') + '\n').toBe(expectedOutput);
  });
});
