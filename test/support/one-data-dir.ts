/**
 * Coordinators started one after another on one temporary data dir, for restart, crash and
 * takeover tests: the directory is created before the file's tests, and after them every
 * coordinator started here is stopped (by PID) and the directory removed.
 */
import { afterAll, beforeAll } from 'vitest';
import { type RunningCoordinator, startCoordinator } from './coordinator-process.js';
import { createTempDir, removeTempDir } from './temp-dir.js';

/** What {@link coordinatorsOnOneDataDir} returns. */
export interface OneDataDir {
  /** The shared data dir (set once the file's `beforeAll` ran). */
  readonly dataDir: string;
  /** Starts a coordinator on the data dir with the file's environment plus `extraEnv`, and waits until it is ready. */
  start(extraEnv?: Readonly<Record<string, string>>): Promise<RunningCoordinator>;
}

/**
 * Registers vitest's `beforeAll` / `afterAll` for one shared data dir. Call it at the top of a
 * test file.
 * @param prefix - Name prefix of the temporary directory.
 * @param env - Environment of every coordinator started (see `StartCoordinatorOptions.env`).
 */
export function coordinatorsOnOneDataDir(prefix: string, env: Readonly<Record<string, string>>): OneDataDir {
  let dataDir: string | undefined;
  const running: RunningCoordinator[] = [];
  beforeAll(async () => {
    dataDir = await createTempDir(prefix);
  });
  afterAll(async () => {
    for (const app of running) await app.cleanup();
    if (dataDir !== undefined) await removeTempDir(dataDir);
  });
  const dir = (): string => {
    if (dataDir === undefined)
      throw new Error("coordinatorsOnOneDataDir: the data dir exists only once the file's beforeAll ran");
    return dataDir;
  };
  return {
    get dataDir() {
      return dir();
    },
    async start(extraEnv = {}) {
      const app = await startCoordinator({ dataDir: dir(), env: { ...env, ...extraEnv } });
      running.push(app);
      return app;
    },
  };
}
