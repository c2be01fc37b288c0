/**
 * Every Markdown file the repository points at exists: each `*.md` path mentioned in a source file
 * (comments and strings alike) and each relative link in a Markdown file. A mention counts as
 * found if it names a file relative to the repository root or to the mentioning file's folder; a
 * link must resolve relative to its own file, and its `#anchor`, if any, must be a heading (or an
 * `<a id>`) of the file it points at.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repository = fileURLToPath(new URL('../../', import.meta.url));

/** Folders that hold generated, installed or runtime files, not the repository's own text. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.nx', '.git', 'data', 'coverage', 'test-results']);
/** Files whose text is read for mentions of Markdown paths. */
const SOURCE_EXTENSIONS = new Set([
  '.ts',
  '.tsx',
  '.mts',
  '.cts',
  '.js',
  '.mjs',
  '.cjs',
  '.json',
  '.yml',
  '.yaml',
  '.sh',
  '.html',
  '.css',
]);

/** Every file under `folder`, as paths relative to the repository, skipping {@link SKIPPED_FOLDERS}. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(repository, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

const files = filesUnder('');
const isSource = (path: string): boolean =>
  SOURCE_EXTENSIONS.has(extname(path)) || /(^|\/)Dockerfile|\.Dockerfile$|^\.ci\//.test(path);
const markdownFiles = files.filter((path) => path.endsWith('.md'));
const sourceFiles = files.filter((path) => isSource(path) && !path.endsWith('package-lock.json'));

/**
 * The `*.md` paths mentioned in `text`: a run of path characters ending in `.md`, not preceded by
 * a path character, `:` (a URL's tail) or `$` / `*` / `<` (a template or a glob).
 */
const mentionsOf = (text: string): string[] =>
  [...text.matchAll(/(?<![\w/.:${}*<>-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w.-]*\w\.md)(?![\w/])/g)].map(
    (match) => match[1]!,
  );

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slugOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors a Markdown file defines: its headings' slugs (repeats numbered as GitHub does) and `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = slugOf(heading!);
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  for (const [, id] of markdown.matchAll(/<a id="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

describe('Markdown paths', () => {
  it('finds the files it checks', () => {
    expect(markdownFiles).toContain('README.md');
    expect(markdownFiles).toContain('docs/design.md');
    expect(sourceFiles.length).toBeGreaterThan(100);
  });

  it('every *.md path a source file mentions exists, relative to the repository or to the file', () => {
    // Act
    const missing = sourceFiles.flatMap((file) =>
      mentionsOf(readFileSync(join(repository, file), 'utf8'))
        .filter(
          (mention) =>
            !existsSync(join(repository, mention)) && !existsSync(resolve(repository, dirname(file), mention)),
        )
        .map((mention) => `${file}: ${mention}`),
    );
    // Assert
    expect(missing).toEqual([]);
  });

  it('every relative link of a Markdown file points at a file that exists, and at a heading of it', () => {
    // Act
    const broken = markdownFiles.flatMap((file) => {
      const text = readFileSync(join(repository, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))
        .filter((target) => {
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const targetFile = path === '' ? join(repository, file) : resolve(repository, dirname(file), path);
          if (!existsSync(targetFile)) return true;
          if (anchor === undefined || !targetFile.endsWith('.md')) return false;
          return !anchorsOf(readFileSync(targetFile, 'utf8')).has(anchor);
        })
        .map((target) => `${file}: ${target}`);
    });
    // Assert
    expect(broken).toEqual([]);
  });

  it('reads a mention and an anchor the way the checks above rely on', () => {
    expect(
      mentionsOf('see docs/design.md § "Layout", ../../README.md and https://x.org/y/README.md, not ${name}.md'),
    ).toEqual(['docs/design.md', '../../README.md']);
    expect(anchorsOf('# A\n## Running: `npm start` and the demo\n## A\n')).toEqual(
      new Set(['a', 'running-npm-start-and-the-demo', 'a-1']),
    );
    expect(relative(repository, join(repository, 'docs'))).toBe('docs');
  });
});
