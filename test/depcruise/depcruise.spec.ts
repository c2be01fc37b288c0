/**
 * The layering check (`npm run depcruise`, rules in .dependency-cruiser.cjs) really holds: a
 * scratch copy of the workspace passes it, and the same copy with forbidden imports planted in it
 * fails, each planted import reported under the rule that forbids it. The working tree is never
 * touched: everything is planted in a copy under the OS temp dir.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, copyFileSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';

const WORKSPACE = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DEPCRUISE_BIN = join(WORKSPACE, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CRUISED_FOLDERS = ['libs', 'apps', 'test'];
/** Workspace folders the cruised code imports from without being cruised itself (the public-packages helper). */
const IMPORTED_FOLDERS = ['scripts'];
/** Build output and caches are not sources; `node_modules` folders are linked, not copied. */
const SKIPPED = new Set(['dist', '.nx', 'coverage', '.git']);
const CRUISE_TIMEOUT_MILLIS = 180_000;

/** Copies `from` into `to`, linking every `node_modules` folder instead of copying it. */
function copySources(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.name === 'node_modules') symlinkSync(source, target, 'dir');
    else if (entry.isDirectory()) copySources(source, target);
    else if (entry.isFile()) copyFileSync(source, target);
  }
}

/** One line of depcruise's default (`err`) report: `error <rule>: <from> → <to>`. */
interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

const VIOLATION_LINE = /^\s*error (\S+): (\S+) → (\S+)/;

/**
 * Runs the command `npm run depcruise` runs, in `root`, with its default report (the one whose
 * exit status `npm test` relies on); returns the exit status and the violations it lists.
 */
function cruise(root: string): { status: number | null; violations: Violation[]; output: string } {
  const run = spawnSync(process.execPath, [DEPCRUISE_BIN, ...CRUISED_FOLDERS, '--config', '.dependency-cruiser.cjs'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // Nx runs tasks with FORCE_COLOR set; a coloured report would hide every violation line from
    // the parser below, so colour is switched off here and stripped in case it comes anyway.
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  const output = stripVTControlCharacters(`${run.stdout}${run.stderr}`);
  const violations = output.split('\n').flatMap((line) => {
    const match = VIOLATION_LINE.exec(line);
    return match === null ? [] : [{ rule: match[1] ?? '', from: match[2] ?? '', to: match[3] ?? '' }];
  });
  return { status: run.status, violations, output };
}

/** A forbidden import: the file planted, its source, and the rule that must report it. */
interface Plant {
  readonly file: string;
  readonly source: string;
  readonly rule: string;
}

const PLANTS: readonly Plant[] = [
  {
    file: 'libs/lease-fence/src/planted-zod.ts',
    source: "import { z } from 'zod';\nexport const planted = z.string();\n",
    rule: 'lease-fence-depends-on-nothing',
  },
  {
    file: 'libs/lease-fence/src/planted-protocol.ts',
    source:
      "import { RecordedEventSchema } from '@lease-fence/protocol';\nexport const planted = RecordedEventSchema;\n",
    rule: 'lease-fence-depends-on-nothing',
  },
  {
    file: 'libs/lease-fence/src/planted-fs.ts',
    source: "import { readFileSync } from 'node:fs';\nexport const planted = readFileSync;\n",
    rule: 'lease-fence-no-io',
  },
  {
    file: 'libs/protocol/src/planted-ws.ts',
    source: "import { WebSocket } from 'ws';\nexport const planted = WebSocket;\n",
    rule: 'protocol-depends-on-zod-only',
  },
  {
    file: 'libs/client/src/planted-nest.ts',
    source: "import { Injectable } from '@nestjs/common';\nexport const planted = Injectable;\n",
    rule: 'client-sdk',
  },
  {
    file: 'libs/client/src/planted-core.ts',
    source:
      "import { DurableCoordinator } from '@lease-fence/coordinator-core';\nexport const planted = DurableCoordinator;\n",
    rule: 'client-sdk',
  },
  {
    file: 'libs/coordinator-core/src/planted-sqlite.ts',
    source: "import Database from 'better-sqlite3';\nexport const planted = Database;\n",
    rule: 'core-no-drivers',
  },
  {
    file: 'libs/event-log-sqlite/src/planted-eventstoredb.ts',
    source: "export * from '@lease-fence/event-log-eventstoredb';\n",
    rule: 'adapters-independent',
  },
  {
    file: 'libs/dashboard-model/src/planted-react.ts',
    source: "import { useState } from 'react';\nexport const planted = useState;\n",
    rule: 'dashboard-model-pure',
  },
  {
    file: 'apps/dashboard/src/planted-core.ts',
    source:
      "import { DurableCoordinator } from '@lease-fence/coordinator-core';\nexport const planted = DurableCoordinator;\n",
    rule: 'dashboard-protocol-and-model-only',
  },
  {
    file: 'apps/demo/src/planted-app.ts',
    source: "export * from '../../dashboard/src/main.js';\n",
    rule: 'apps-independent',
  },
  {
    file: 'test/planted-relative.ts',
    source: "export * from '../libs/protocol/src/index.js';\n",
    rule: 'tests-import-packages',
  },
  {
    file: 'libs/protocol/src/planted-missing.ts',
    source: "export * from './no-such-module.js';\n",
    rule: 'not-to-unresolvable',
  },
];

describe('npm run depcruise on a scratch copy of the workspace', () => {
  let scratch = '';

  beforeAll(async () => {
    scratch = await createTempDir('lease-fence-depcruise-');
    // The workspace root's files: the depcruise config, the tsconfigs it reads, the shared eslint config.
    for (const entry of readdirSync(WORKSPACE, { withFileTypes: true })) {
      if (entry.isFile()) copyFileSync(join(WORKSPACE, entry.name), join(scratch, entry.name));
    }
    symlinkSync(join(WORKSPACE, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    for (const folder of [...CRUISED_FOLDERS, ...IMPORTED_FOLDERS])
      copySources(join(WORKSPACE, folder), join(scratch, folder));
  });

  afterAll(async () => {
    if (scratch !== '') await removeTempDir(scratch);
  });

  it(
    'passes on the clean copy',
    () => {
      const result = cruise(scratch);
      expect(result.violations).toEqual([]);
      expect(result.status, result.output).toBe(0);
    },
    CRUISE_TIMEOUT_MILLIS,
  );

  it(
    'fails with every planted forbidden import reported under its rule',
    () => {
      for (const plant of PLANTS) {
        mkdirSync(dirname(join(scratch, plant.file)), { recursive: true });
        writeFileSync(join(scratch, plant.file), plant.source);
      }
      try {
        const result = cruise(scratch);
        expect(result.status, result.output).not.toBe(0);
        const reported = new Set(result.violations.map((violation) => `${violation.from} ${violation.rule}`));
        const missing = PLANTS.filter((plant) => !reported.has(`${plant.file} ${plant.rule}`));
        expect(missing).toEqual([]);
        const planted = new Set(PLANTS.map((plant) => plant.file));
        expect(result.violations.filter((violation) => !planted.has(violation.from))).toEqual([]);
      } finally {
        for (const plant of PLANTS) rmSync(join(scratch, plant.file), { force: true });
      }
    },
    CRUISE_TIMEOUT_MILLIS,
  );
});
