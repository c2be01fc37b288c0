/**
 * Signing key set files for coordinators in tests, made by the BUILT coordinator's own tool
 * (`apps/coordinator/dist/signing/signing-keys-cli.js`), so tests use the files operators make.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './coordinator-process.js';

/** The built key set tool. */
export const SIGNING_KEYS_CLI = join(REPO_ROOT, 'apps/coordinator/dist/signing/signing-keys-cli.js');

const run = promisify(execFile);

/**
 * Creates `<dir>/<name>` with one new Ed25519 signing key (mode 0600), for `LEASE_FENCE_SIGNING_KEYS_FILE`.
 * @returns the file's path.
 */
export async function createSigningKeysFile(dir: string, name = 'signing-keys.json'): Promise<string> {
  const file = join(dir, name);
  await run(process.execPath, [SIGNING_KEYS_CLI, file]);
  return file;
}

/** Puts a new key first in `file` (the next start signs with it); older keys stay published. */
export async function rotateSigningKeysFile(file: string): Promise<void> {
  await run(process.execPath, [SIGNING_KEYS_CLI, '--rotate', file]);
}
