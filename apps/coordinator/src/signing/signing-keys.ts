/**
 * The coordinator's signing keys (the adapter behind {@link GrantSigner}): a JSON key set file
 * `{ "keys": [ <Ed25519 JWK>, … ] }` (RFC 7517 / RFC 8037). The FIRST key signs every grant and must
 * be private (`d`); every key, old ones included, is published (public part only) by
 * `GET /v1/keys`, so tokens signed before a rotation keep verifying until the operator removes
 * their key from the file.
 *
 * Where the file comes from:
 * - `LEASE_FENCE_SIGNING_KEYS_FILE` set: the operator's file; it must exist and be usable
 *   (required with the EventStoreDB log, so a primary and its standby sign with the same key);
 * - otherwise `<data dir>/signing-keys.json`, generated with one fresh key (mode 0600) on the
 *   first start and read on every later one.
 *
 * Crypto is `jose` (key import/export, JWK thumbprints, JWS); nothing here is hand-rolled.
 */
import { constants } from 'node:fs';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SIGNED_GRANT_ALGORITHM, type PublicSigningKey } from '@lease-fence/protocol';
import {
  calculateJwkThumbprint,
  CompactSign,
  compactVerify,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import { z } from 'zod';

/** The variable naming an operator-supplied key set file. */
export const SIGNING_KEYS_FILE_VARIABLE = 'LEASE_FENCE_SIGNING_KEYS_FILE';

/** Name of the key set file generated in the data directory when no file is configured. */
export const GENERATED_SIGNING_KEYS_FILE = 'signing-keys.json';

/** A base64url encoding of 32 bytes (an Ed25519 public key `x` or private key `d`). */
const Base64Url32Schema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes in base64url (43 characters)');

/** One key of the file: an Ed25519 JWK, private (`d`) or public only. */
const SigningJwkSchema = z.object({
  kty: z.string().refine((kty) => kty === 'OKP', {
    error: (issue) => `must be "OKP" (an Ed25519 key), got ${JSON.stringify(issue.input)}`,
  }),
  crv: z
    .string()
    .refine((crv) => crv === 'Ed25519', { error: (issue) => `must be "Ed25519", got ${JSON.stringify(issue.input)}` }),
  x: Base64Url32Schema,
  d: Base64Url32Schema.optional(),
  kid: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  alg: z.literal(SIGNED_GRANT_ALGORITHM, { error: `must be "${SIGNED_GRANT_ALGORITHM}" when given` }).optional(),
  use: z.literal('sig', { error: 'must be "sig" when given' }).optional(),
});

/** The whole key set file. */
const SigningKeysFileSchema = z.object({
  keys: z.array(SigningJwkSchema).min(1, 'must hold at least one key (the first one signs)'),
});

/** The keys a coordinator signs and publishes with, loaded and checked. */
export interface SigningKeys {
  /** The key that signs every grant: the file's first key. */
  readonly active: { readonly kid: string; readonly privateKey: CryptoKey };
  /** Every key of the file, public part only, the active one first: the `GET /v1/keys` JWKS. */
  readonly published: readonly PublicSigningKey[];
}

/** Where the keys were loaded from, for the start-up log. */
export interface LoadedSigningKeys extends SigningKeys {
  /** Absolute path of the key set file. */
  readonly file: string;
  /** True when this start generated the file (first start on this data directory). */
  readonly generated: boolean;
  /** True when the file is readable by its group or others (mode & 0o077): worth a warning. */
  readonly readableByOthers: boolean;
}

/**
 * The key set file cannot be used: missing, unreadable, not JSON, a key of the wrong type, a
 * private key that does not match its public key, a repeated `kid`. The message names the file,
 * the key (0-based index) and the field; key material is never echoed. The coordinator refuses
 * to start on it.
 */
export class SigningKeysError extends Error {
  /** Stable error code. */
  readonly code = 'invalid-signing-keys';

  /** @param file - Path of the key set file. @param problems - One line per problem. */
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`signing keys file ${file}: ${problems.join('; ')}`, options);
    this.name = 'SigningKeysError';
  }
}

const describePath = (path: readonly PropertyKey[]): string => {
  if (path.length === 0) return 'the file';
  const [top, index, ...rest] = path;
  if (top !== 'keys' || index === undefined) return `field ${path.map(String).join('.')}`;
  return rest.length === 0 ? `key ${String(index)}` : `key ${String(index)} field ${rest.map(String).join('.')}`;
};

/**
 * Parses and checks the text of a key set file: every key an Ed25519 JWK, the first one private,
 * each private key matching its public key (a signature made with `d` verifies with `x`), no
 * `kid` twice. A key without `kid` gets its RFC 7638 thumbprint.
 *
 * @param file - Path, for messages.
 * @param text - The file's content.
 * @throws {@link SigningKeysError} naming the key and field of every problem.
 */
export async function parseSigningKeys(file: string, text: string): Promise<SigningKeys> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SigningKeysError(
      file,
      [`is not a JSON key set { "keys": [ <Ed25519 JWK>, … ] } (${(error as Error).message})`],
      { cause: error },
    );
  }
  const parsed = SigningKeysFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new SigningKeysError(
      file,
      parsed.error.issues.map((issue) => `${describePath(issue.path)}: ${issue.message}`),
    );
  }
  const [first] = parsed.data.keys;
  if (first?.d === undefined)
    throw new SigningKeysError(file, ['key 0 field d: is missing: the first key signs, so it must be a private key']);
  const problems: string[] = [];
  const kids = new Set<string>();
  const published: PublicSigningKey[] = [];
  let active: SigningKeys['active'] | undefined;
  for (const [index, key] of parsed.data.keys.entries()) {
    const publicJwk: JWK = { kty: key.kty, crv: key.crv, x: key.x };
    const kid = key.kid ?? (await calculateJwkThumbprint(publicJwk, 'sha256'));
    if (kids.has(kid)) {
      problems.push(`key ${index} field kid: repeats the kid ${JSON.stringify(kid)} of an earlier key`);
      continue;
    }
    kids.add(kid);
    const publicKey = await importKey(publicJwk);
    if (publicKey === undefined) {
      problems.push(`key ${index} field x: is not an Ed25519 public key`);
      continue;
    }
    if (key.d !== undefined) {
      const privateKey = await importKey({ ...publicJwk, d: key.d });
      if (privateKey === undefined || !(await signsFor(privateKey, publicKey))) {
        problems.push(`key ${index} field d: is not the private key of x`);
        continue;
      }
      if (index === 0) active = { kid, privateKey };
    }
    published.push({ kty: 'OKP', crv: 'Ed25519', x: key.x, kid, alg: SIGNED_GRANT_ALGORITHM, use: 'sig' });
  }
  if (problems.length > 0 || active === undefined) throw new SigningKeysError(file, problems);
  return { active, published };
}

const importKey = async (jwk: JWK): Promise<CryptoKey | undefined> => {
  try {
    return (await importJWK(jwk, SIGNED_GRANT_ALGORITHM)) as CryptoKey;
  } catch {
    return undefined;
  }
};

/** Whether a signature made with `privateKey` verifies with `publicKey` (a `d` that does not belong to `x` fails). */
const signsFor = async (privateKey: CryptoKey, publicKey: CryptoKey): Promise<boolean> => {
  try {
    const probe = await new CompactSign(new TextEncoder().encode('lease-fence key check'))
      .setProtectedHeader({ alg: SIGNED_GRANT_ALGORITHM })
      .sign(privateKey);
    await compactVerify(probe, publicKey, { algorithms: [SIGNED_GRANT_ALGORITHM] });
    return true;
  } catch {
    return false;
  }
};

/**
 * A new key set with one fresh Ed25519 key (its `kid` is its RFC 7638 thumbprint), as the text of
 * a key set file. Prepend its key to an existing file's `keys` to rotate.
 */
export async function generateSigningKeysText(): Promise<string> {
  const { privateKey } = await generateKeyPair(SIGNED_GRANT_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const { kty, crv, x, d } = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty, crv, x } as JWK, 'sha256');
  return `${JSON.stringify({ keys: [{ kty, crv, x, d, kid, alg: SIGNED_GRANT_ALGORITHM, use: 'sig' }] }, null, 2)}\n`;
}

/**
 * Writes `text` to `file` only if no file is there, with mode 0600, atomically: a temporary file
 * is written and fsynced, then hard-linked to `file` (which fails if it exists), so two coordinators
 * starting together on one data directory end up with one key set, never a torn file.
 * @returns `true` if this call created the file, `false` if one already existed.
 */
export async function createFileExclusively(file: string, text: string): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = join(dirname(file), `.${GENERATED_SIGNING_KEYS_FILE}.${process.pid}.${Date.now()}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

const readProblem = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return `cannot be read (${code}: permission denied)`;
  if (code === 'EISDIR') return 'is a directory, not a key set file';
  return `cannot be read (${(error as Error).message})`;
};

/**
 * Loads the coordinator's signing keys: the operator's file when `configuredFile` is set, else the
 * data directory's generated file (created with one fresh key on the first start).
 *
 * @param configuredFile - `LEASE_FENCE_SIGNING_KEYS_FILE` (absolute), or `undefined`.
 * @param dataDir - The data directory (absolute), used when no file is configured.
 * @throws {@link SigningKeysError} when the file is missing (configured), unreadable or unusable.
 */
export async function loadSigningKeys(configuredFile: string | undefined, dataDir: string): Promise<LoadedSigningKeys> {
  const file = configuredFile ?? join(dataDir, GENERATED_SIGNING_KEYS_FILE);
  let generated = false;
  if (configuredFile === undefined) {
    try {
      generated = await createFileExclusively(file, await generateSigningKeysText());
    } catch (error) {
      throw new SigningKeysError(file, [`cannot be created (${(error as Error).message})`], { cause: error });
    }
  }
  let text: string;
  let mode: number;
  try {
    text = await readFile(file, 'utf8');
    mode = (await stat(file)).mode;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT' && configuredFile !== undefined;
    const hint = missing ? ` (create one with \`node apps/coordinator/dist/signing/signing-keys-cli.js ${file}\`)` : '';
    throw new SigningKeysError(file, [`${readProblem(error)}${hint}`], { cause: error });
  }
  return { ...(await parseSigningKeys(file, text)), file, generated, readableByOthers: (mode & 0o077) !== 0 };
}
