/**
 * How the tests find a README's example: the first fenced ```ts block at or after a heading (or
 * the README's first), the ```text block after it (what it prints), and the package specifiers it
 * imports. Used by test/docs/package-readmes.spec.ts (examples run against the workspace's built
 * packages) and test/packages/install.int.spec.ts (the same examples against the packed tarballs).
 */
import { readFileSync } from 'node:fs';

/** The first fenced block of `language` in `text` at or after `from`, without its fences. */
export function fencedBlock(text: string, language: string, from = 0): { code: string; end: number } {
  const open = text.indexOf(`\`\`\`${language}\n`, from);
  if (open < 0) throw new Error(`no \`\`\`${language} block`);
  const start = open + language.length + 4;
  const close = text.indexOf('\n```', start);
  return { code: text.slice(start, close + 1), end: close + 4 };
}

/** The bare package specifiers `code` imports (`node:` builtins excluded). */
export const packagesOf = (code: string): string[] =>
  [...code.matchAll(/from '([^']+)';/g)].map((match) => match[1]!).filter((name) => !name.startsWith('node:'));

/** A README's example: its code, and what it prints when the README says (the ```text block after it). */
export interface ReadmeExample {
  /** The ```ts block, verbatim. */
  readonly code: string;
  /** The ```text block that follows it, or undefined when the README shows no output. */
  readonly expectedOutput: string | undefined;
}

/**
 * Reads the example of the README at `readmePath`: the first ```ts block after `heading` (a whole
 * heading line, e.g. `## Example`), or the README's first ```ts block when `heading` is omitted.
 *
 * @param expectOutput whether the example has a ```text block of its output right after it
 *   (between the two blocks only prose). When false, `expectedOutput` is undefined.
 * @throws Error when the README has no such heading or no ```ts block after it.
 */
export function readmeExample(readmePath: string, heading?: string, expectOutput = true): ReadmeExample {
  const readme = readFileSync(readmePath, 'utf8');
  const from = heading === undefined ? 0 : readme.indexOf(`\n${heading}\n`);
  if (from < 0) throw new Error(`${readmePath} has no heading ${heading ?? ''}`);
  const example = fencedBlock(readme, 'ts', from);
  return {
    code: example.code,
    expectedOutput: expectOutput ? fencedBlock(readme, 'text', example.end).code : undefined,
  };
}
