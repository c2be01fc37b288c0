/**
 * Screenshots of the browser suites: every one goes to `test/e2e/artifacts/` (ignored by git);
 * with `UPDATE_SCREENSHOTS=1` the ones given a docs name also refresh `docs/<docsName>` from this run.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '../../support/coordinator-process.js';

/** Where the suites' screenshots go. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../artifacts/', import.meta.url));

const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

/** Creates {@link ARTIFACTS_DIR} (a suite's `beforeStart`). */
export async function createArtifactsDir(): Promise<void> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
}

/**
 * Saves what `page` shows as `artifacts/<name>`, and as `docs/<docsName>` with `UPDATE_SCREENSHOTS=1`.
 *
 * @param name - File name in the artifacts folder, e.g. `live-lanes.png`.
 * @param docsName - File name in `docs/` that this screenshot illustrates, if any.
 */
export async function screenshot(page: Page, name: string, docsName?: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS_DIR, name) });
  if (UPDATE_SCREENSHOTS && docsName !== undefined) await page.screenshot({ path: join(REPO_ROOT, 'docs', docsName) });
}
