/**
 * Creates or rotates a signing key set file for `LEASE_FENCE_SIGNING_KEYS_FILE`:
 *
 *   node apps/coordinator/dist/signing/signing-keys-cli.js <file>            # a new file with one key (mode 0600)
 *   node apps/coordinator/dist/signing/signing-keys-cli.js --rotate <file>   # a new key first; older keys kept, still published
 *
 * After a rotation, restart every coordinator of the namespace on the file. Remove an old key
 * from the file (and restart) once no gate needs the tokens it signed.
 */
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { createFileExclusively, generateSigningKeysText, parseSigningKeys, SigningKeysError } from './signing-keys.js';

const USAGE =
  'usage: signing-keys-cli.js [--rotate] <file>\n' +
  '  <file>           create a key set file with one new Ed25519 key (mode 0600); refuses to overwrite\n' +
  '  --rotate <file>  put a new key first in an existing file (it signs from the next start); older keys stay published\n';

async function run(args: readonly string[]): Promise<string> {
  const rotate = args[0] === '--rotate';
  const file = rotate ? args[1] : args[0];
  if (file === undefined || file.startsWith('-') || args.length !== (rotate ? 2 : 1)) throw new UsageError(USAGE);
  const fresh = await generateSigningKeysText();
  if (!rotate) {
    if (!(await createFileExclusively(file, fresh)))
      throw new UsageError(`${file} already exists; use --rotate to add a key to it\n`);
    return `created ${file} with one signing key\n`;
  }
  const text = await readFile(file, 'utf8');
  await parseSigningKeys(file, text); // refuse to rotate a file the coordinator could not use
  const existing = (JSON.parse(text) as { keys: unknown[] }).keys;
  const [newKey] = (JSON.parse(fresh) as { keys: unknown[] }).keys;
  const temporary = `${file}.rotate-${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ keys: [newKey, ...existing] }, null, 2)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
  return `added a new signing key first in ${file} (${existing.length + 1} keys); restart the coordinators to sign with it\n`;
}

class UsageError extends Error {}

try {
  process.stdout.write(await run(process.argv.slice(2)));
} catch (error) {
  process.stderr.write(
    error instanceof UsageError || error instanceof SigningKeysError
      ? `${error.message}${error.message.endsWith('\n') ? '' : '\n'}`
      : `signing-keys-cli: ${(error as Error).message}\n`,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
