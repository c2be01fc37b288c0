/**
 * The one reader of `process.env` in the coordinator (configuration is read in one place): parses it once at startup.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Config, parseConfig } from './config.js';

/**
 * The dashboard package's production build, found relative to this file in the workspace
 * layout (`apps/coordinator/dist/config/` → `apps/dashboard/dist/`).
 */
const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

/**
 * Reads and parses the process environment.
 * @throws {@link ConfigError} naming each bad variable; `main.ts` prints it and exits 1.
 */
export function readConfig(): Config {
  return parseConfig(process.env, {
    cwd: process.cwd(),
    defaultDashboardDir: DEFAULT_DASHBOARD_DIR,
    hasIndexHtml: (dir) => existsSync(join(dir, 'index.html')),
  });
}
