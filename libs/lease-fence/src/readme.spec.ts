/**
 * Proves the README's library example as written: the first ```ts block inside the README's
 * library section typechecks against this package's sources, runs, and prints exactly the
 * ```text block that follows it. The only change made to run it is the module specifier
 * 'lease-fence', pointed at this package's sources (so the test never reads a stale dist/).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it, vi } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const sourceIndex = resolve(here, 'index.ts');
const readme = readFileSync(resolve(here, '../../../README.md'), 'utf8');

const librarySection = (): string => {
  const start = readme.indexOf('<!-- section:library:start -->');
  const end = readme.indexOf('<!-- section:library:end -->');
  if (start < 0 || end < start) throw new Error('README.md has no library section markers');
  return readme.slice(start, end);
};

/** The first fenced block of `language` in `text` (after `from`), without its fences. */
const fencedBlock = (text: string, language: string, from = 0): { code: string; end: number } => {
  const open = text.indexOf(`\`\`\`${language}\n`, from);
  if (open < 0) throw new Error(`no \`\`\`${language} block in the README's library section`);
  const start = open + language.length + 4;
  const close = text.indexOf('\n```', start);
  return { code: text.slice(start, close + 1), end: close + 4 };
};

const section = librarySection();
const example = fencedBlock(section, 'ts');
const expectedOutput = fencedBlock(section, 'text', example.end).code;
const workDir = mkdtempSync(join(tmpdir(), 'lease-fence-readme-'));

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('README library example', () => {
  it('imports from the published package name', () => {
    expect(example.code).toMatch(/from 'lease-fence';/);
  });

  it('typechecks as written against the package API', () => {
    // Arrange
    const file = join(workDir, 'example.mts');
    writeFileSync(file, example.code);
    // Act
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [resolve(here, '../../../node_modules/@types')],
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      skipLibCheck: true,
      paths: { 'lease-fence': [sourceIndex] },
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    // Assert
    expect(diagnostics).toEqual([]);
  }, 30_000);

  it('runs and prints what the README says it prints', async () => {
    // Arrange
    const file = join(workDir, 'example-run.ts');
    writeFileSync(file, example.code.replace(/from 'lease-fence';/, `from ${JSON.stringify(pathToFileURL(sourceIndex).href)};`));
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
