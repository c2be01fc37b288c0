/**
 * Keeps coordinator-core's README example honest: the README block is the imports of
 * `readme-example.ts` followed by its `#region readme`, verbatim (so it typechecks and lints with
 * this project), and running it prints exactly the README's output block.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { runReadmeExample } from './readme-example.js';

const readme = readFileSync(fileURLToPath(new URL('../../libs/coordinator-core/README.md', import.meta.url)), 'utf8');
const source = readFileSync(fileURLToPath(new URL('./readme-example.ts', import.meta.url)), 'utf8');

const section = readme.slice(
  readme.indexOf('<!-- section:coordinator-core:start -->'),
  readme.indexOf('<!-- section:coordinator-core:end -->'),
);
/** The first fenced block of `language` in the section, without its fences. */
const block = (language: string): string => {
  const open = section.indexOf(`\`\`\`${language}\n`);
  if (open < 0) throw new Error(`no \`\`\`${language} block in the README's coordinator-core section`);
  const start = open + language.length + 4;
  return section.slice(start, section.indexOf('```', start)).trimEnd();
};
/** The import statements of `readme-example.ts`, one a line, as the README block starts. */
const imports = (): string => (source.match(/^import .*;$/gm) ?? []).join('\n');
/** The region between `// #region readme` and `// #endregion`, dedented. */
const region = (): string => {
  const lines = source
    .slice(source.indexOf('// #region readme\n') + '// #region readme\n'.length, source.indexOf('  // #endregion'))
    .trimEnd()
    .split('\n');
  return lines.map((line) => line.replace(/^ {2}/, '')).join('\n');
};

let directory: string;
beforeAll(async () => {
  directory = await createTempDir('lease-fence-readme-');
});
afterAll(async () => {
  await removeTempDir(directory);
});

describe("coordinator-core's README example", () => {
  it('is the imports and the region of readme-example.ts, verbatim', () => {
    expect(imports()).not.toBe('');
    expect(block('ts')).toBe(`${imports()}\n\n${region()}`);
  });

  it('prints what the README says it prints', async () => {
    const printed: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      await runReadmeExample(join(directory, 'readme.db'));
    } finally {
      spy.mockRestore();
    }
    expect(printed.join('\n')).toBe(block('text'));
  });
});
