/**
 * The container files, read as text (no Docker engine runs the tests): the health check is a
 * liveness probe a standby passes, the base image is a maintained Node line, and compose
 * publishes the development setup (insecure KurrentDB, public tokens) on loopback only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/coordinator-process.js';

const dockerfile = readFileSync(join(REPO_ROOT, 'docker/coordinator.Dockerfile'), 'utf8');
const compose = readFileSync(join(REPO_ROOT, 'docker/compose.yml'), 'utf8');

/** The Dockerfile's instructions: comments dropped, continuation lines joined. */
const instructions = dockerfile
  .split('\n')
  .filter((line) => !line.trimStart().startsWith('#'))
  .join('\n')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((line) => line.trim() !== '');

/** Every `ports:` entry of compose.yml, commented-out examples included (`- "a:b"` items and `[…]` flow lists). */
function composePortEntries(text: string): string[] {
  const entries: string[] = [];
  const lines = text.split('\n').map((line) => line.replace(/^(\s*)#\s?/, '$1'));
  lines.forEach((line, index) => {
    const flow = /^\s*ports:\s*\[(.*)\]\s*$/.exec(line);
    if (flow !== null) entries.push(...flow[1]!.split(',').map((entry) => entry.trim().replace(/^["']|["']$/g, '')));
    if (!/^\s*ports:\s*$/.test(line)) return;
    for (const item of lines.slice(index + 1)) {
      const match = /^\s*-\s*["']?([^"'\s]+)["']?\s*$/.exec(item);
      if (match === null) break;
      entries.push(match[1]!);
    }
  });
  return entries;
}

/** Every workspace folder (`libs/*`, `apps/*`, `test`) that has a package.json, as `libs/x`. */
const workspaceFolders = ['libs', 'apps']
  .flatMap((parent) =>
    readdirSync(join(REPO_ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`),
  )
  .filter((folder) => {
    try {
      readFileSync(join(REPO_ROOT, folder, 'package.json'));
      return true;
    } catch {
      return false;
    }
  })
  .concat('test');

describe('docker/coordinator.Dockerfile', () => {
  it("copies every workspace's package.json before `npm ci`, so the lockfile matches the workspaces it installs", () => {
    const firstCi = instructions.findIndex((line) => /^RUN npm ci\b/.test(line.trim()));
    expect(firstCi).toBeGreaterThan(0);
    const copied = new Set(
      instructions
        .slice(0, firstCi)
        .map((line) => /^COPY (\S+)\/package\.json\s/.exec(line.trim())?.[1])
        .filter((folder): folder is string => folder !== undefined),
    );
    expect(workspaceFolders.filter((folder) => !copied.has(folder))).toEqual([]);
  });

  it('checks health on /healthz (liveness), not /readyz, which a healthy standby answers 503 forever', () => {
    const healthcheck = instructions.filter((line) => line.startsWith('HEALTHCHECK'));
    expect(healthcheck).toHaveLength(1);
    expect(healthcheck[0]).toContain('/healthz');
    expect(healthcheck[0]).not.toContain('/readyz');
  });

  it('builds on a maintained Node line (22 or later; Node 20 is past its end of life)', () => {
    const base = /^ARG NODE_IMAGE=node:(\d+)/m.exec(instructions.join('\n'));
    expect(Number(base?.[1])).toBeGreaterThanOrEqual(22);
    expect(instructions.filter((line) => line.startsWith('FROM')).every((line) => line.includes('${NODE_IMAGE}'))).toBe(
      true,
    );
  });

  it("keeps only the addon of better-sqlite3's build for the runtime stage", () => {
    const prune = instructions.find((line) => line.includes('/app/node_modules/better-sqlite3'));
    expect(prune).toMatch(/rm -rf build deps src/);
    expect(prune).toContain('build/Release/better_sqlite3.node');
    expect(instructions.filter((line) => line.startsWith('COPY --from=build'))).toEqual([
      'COPY --from=build /app /app',
    ]);
  });
});

describe('docker/compose.yml', () => {
  it('publishes every port on 127.0.0.1 only', () => {
    const entries = composePortEntries(compose);
    expect(entries.length).toBeGreaterThanOrEqual(2);
    for (const entry of entries) expect(entry, entry).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });
});
