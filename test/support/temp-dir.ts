/**
 * Temporary directories for tests: created under the OS temp dir, removed by the caller.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Creates a fresh empty directory `<tmp>/<prefix>XXXXXX` and returns its absolute path. */
export function createTempDir(prefix = 'lease-fence-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Removes a directory made by {@link createTempDir}, with everything in it. */
export function removeTempDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}
