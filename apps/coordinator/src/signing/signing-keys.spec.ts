import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeysReplySchema, SignedGrantPayloadSchema } from '@lease-fence/protocol';
import { CompactSign, compactVerify, createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrantSigner } from './grant-signer.js';
import {
  createFileExclusively,
  generateSigningKeysText,
  loadSigningKeys,
  parseSigningKeys,
  SigningKeysError,
} from './signing-keys.js';

const FILE = '/etc/lease-fence/signing-keys.json';

const problemsOf = async (text: string): Promise<string> => {
  const error = await parseSigningKeys(FILE, text).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SigningKeysError);
  expect((error as SigningKeysError).code).toBe('invalid-signing-keys');
  return (error as SigningKeysError).message;
};

const keyOf = async (text: string, index = 0): Promise<Record<string, string>> =>
  (JSON.parse(text) as { keys: Record<string, string>[] }).keys[index]!;

describe('parseSigningKeys', () => {
  it('signs with the first key and publishes every key without its private part', async () => {
    // Arrange: a rotated file, new key first, the old one kept as a public key only
    const [fresh, old] = [await keyOf(await generateSigningKeysText()), await keyOf(await generateSigningKeysText())];
    const { d: _d, ...oldPublic } = old;

    // Act
    const keys = await parseSigningKeys(FILE, JSON.stringify({ keys: [fresh, oldPublic] }));

    // Assert
    expect(keys.active.kid).toBe(fresh.kid);
    expect(keys.published.map((k) => k.kid)).toEqual([fresh.kid, old.kid]);
    expect(JSON.stringify(keys.published)).not.toContain(fresh.d);
    expect(KeysReplySchema.safeParse({ keys: keys.published }).success).toBe(true);
  });

  it('gives a key without kid its RFC 7638 thumbprint', async () => {
    const { kid, ...withoutKid } = await keyOf(await generateSigningKeysText());
    const keys = await parseSigningKeys(FILE, JSON.stringify({ keys: [withoutKid] }));
    expect(keys.active.kid).toBe(kid); // generated kids are thumbprints too
  });

  it.each([
    [
      'a PEM file',
      '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----\n',
      'is not a JSON key set',
    ],
    ['an empty key set', JSON.stringify({ keys: [] }), 'field keys: must hold at least one key'],
    ['an array instead of a key set', JSON.stringify([]), 'the file'],
    [
      'an RSA key',
      JSON.stringify({ keys: [{ kty: 'RSA', n: 'abc', e: 'AQAB' }] }),
      'key 0 field kty: must be "OKP" (an Ed25519 key), got "RSA"',
    ],
    [
      'an X25519 key',
      JSON.stringify({ keys: [{ kty: 'OKP', crv: 'X25519', x: 'A'.repeat(43), d: 'A'.repeat(43) }] }),
      'key 0 field crv: must be "Ed25519"',
    ],
    [
      'a truncated public key',
      JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', d: 'A'.repeat(43) }] }),
      'key 0 field x: must be 32 bytes',
    ],
    [
      'an alg other than EdDSA',
      JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43), d: 'A'.repeat(43), alg: 'HS256' }] }),
      'key 0 field alg',
    ],
  ])('refuses %s, naming the key and field', async (_name, text, expected) => {
    expect(await problemsOf(text)).toContain(expected);
  });

  it('refuses a first key without its private part: the first key signs', async () => {
    const { d: _d, ...publicOnly } = await keyOf(await generateSigningKeysText());
    expect(await problemsOf(JSON.stringify({ keys: [publicOnly] }))).toContain('key 0 field d: is missing');
  });

  it('refuses a private key that is not the private key of its x, and never echoes key material', async () => {
    // Arrange: d of one key with x of another
    const [one, other] = [await keyOf(await generateSigningKeysText()), await keyOf(await generateSigningKeysText())];
    const mismatched = { ...one, d: other.d };

    // Act
    const message = await problemsOf(JSON.stringify({ keys: [mismatched] }));

    // Assert
    expect(message).toContain('key 0 field d: is not the private key of x');
    expect(message).not.toContain(other.d);
  });

  it('refuses two keys with the same kid', async () => {
    const [one, other] = [await keyOf(await generateSigningKeysText()), await keyOf(await generateSigningKeysText())];
    expect(await problemsOf(JSON.stringify({ keys: [one, { ...other, kid: one.kid }] }))).toContain(
      'key 1 field kid: repeats the kid',
    );
  });
});

describe('loadSigningKeys', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lease-fence-signing-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates <data dir>/signing-keys.json with mode 0600 on the first start and reads the same key afterwards', async () => {
    // Act
    const first = await loadSigningKeys(undefined, dir);
    const second = await loadSigningKeys(undefined, dir);

    // Assert
    expect(first).toMatchObject({ file: join(dir, 'signing-keys.json'), generated: true, readableByOthers: false });
    expect((await stat(first.file)).mode & 0o777).toBe(0o600);
    expect(second).toMatchObject({ generated: false });
    expect(second.active.kid).toBe(first.active.kid);
  });

  it('never generates in place of a configured file: a missing one is refused, saying how to create it', async () => {
    const missing = join(dir, 'operator-keys.json');
    const error = await loadSigningKeys(missing, dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SigningKeysError);
    expect((error as Error).message).toMatch(
      /operator-keys\.json: does not exist \(create one with `node apps\/coordinator\/dist\/signing\/signing-keys-cli\.js/,
    );
  });

  it('refuses a configured path that is a directory, and says the file is readable by others when it is', async () => {
    expect(((await loadSigningKeys(dir, dir).catch((e: unknown) => e)) as Error).message).toContain('is a directory');
    const file = join(dir, 'loose.json');
    await writeFile(file, await generateSigningKeysText(), { mode: 0o644 });
    expect((await loadSigningKeys(file, dir)).readableByOthers).toBe(true);
  });

  it('creates a file exclusively: a second creation leaves the first content in place', async () => {
    const file = join(dir, 'keys.json');
    expect(await createFileExclusively(file, 'first')).toBe(true);
    expect(await createFileExclusively(file, 'second')).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('first');
  });
});

describe('GrantSigner', () => {
  it('signs a grant as a compact EdDSA JWS that verifies with the published keys, with the namespace in the payload', async () => {
    // Arrange
    const keys = await parseSigningKeys(FILE, await generateSigningKeysText());
    const signer = new GrantSigner(keys, 'tenant-a');

    // Act
    const token = await signer.sign({ resource: 'deploy-slot', holderId: 'agent-a', fence: 7 });

    // Assert
    const { payload, protectedHeader } = await compactVerify(token, createLocalJWKSet(signer.keysReply), {
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: keys.active.kid, typ: 'lease-fence-grant+jws' });
    expect(SignedGrantPayloadSchema.parse(JSON.parse(new TextDecoder().decode(payload)))).toEqual({
      resource: 'deploy-slot',
      holderId: 'agent-a',
      fence: 7,
      namespace: 'tenant-a',
    });
  });

  it('gives the same grant the same token (a retried requestId, every renewal of a fence) and another fence another token', async () => {
    const signer = new GrantSigner(await parseSigningKeys(FILE, await generateSigningKeysText()), 'default');
    const grant = { resource: 'r', holderId: 'agent-a', fence: 3 };
    expect(await signer.sign(grant)).toBe(await signer.sign({ ...grant }));
    expect(await signer.sign({ ...grant, fence: 4 })).not.toBe(await signer.sign(grant));
  });

  it("makes exactly jose's CompactSign token, for a fresh grant and for a renewal served from the cache", async () => {
    // Arrange
    const keys = await parseSigningKeys(FILE, await generateSigningKeysText());
    const signer = new GrantSigner(keys, 'tenant-a');
    const grant = { resource: 'deploy-slot', holderId: 'agent-ü', fence: 9 };
    const expected = await new CompactSign(
      new TextEncoder().encode(JSON.stringify({ ...grant, namespace: 'tenant-a' })),
    )
      .setProtectedHeader({ alg: 'EdDSA', kid: keys.active.kid, typ: 'lease-fence-grant+jws' })
      .sign(keys.active.privateKey);

    // Act
    const first = await signer.sign(grant);
    const renewal = await signer.sign({ ...grant });

    // Assert
    expect(first).toBe(expected);
    expect(renewal).toBe(expected);
  });

  it('never serves a cached token for another holder or fence of the resource', async () => {
    const signer = new GrantSigner(await parseSigningKeys(FILE, await generateSigningKeysText()), 'default');
    const first = await signer.sign({ resource: 'r', holderId: 'agent-a', fence: 3 });
    const otherHolder = await signer.sign({ resource: 'r', holderId: 'agent-b', fence: 3 });
    const payloadOf = (token: string): unknown =>
      JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    expect(otherHolder).not.toBe(first);
    expect(payloadOf(otherHolder)).toMatchObject({ holderId: 'agent-b', fence: 3 });
    expect(payloadOf(await signer.sign({ resource: 'r', holderId: 'agent-b', fence: 4 }))).toMatchObject({ fence: 4 });
  });

  it('does not verify with a key the coordinator does not publish', async () => {
    const signer = new GrantSigner(await parseSigningKeys(FILE, await generateSigningKeysText()), 'default');
    const token = await signer.sign({ resource: 'r', holderId: 'agent-a', fence: 1 });
    const { publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const foreign = createLocalJWKSet({
      keys: [{ ...(await exportJWK(publicKey)), kid: decodeProtectedHeader(token).kid! }],
    });
    await expect(compactVerify(token, foreign, { algorithms: ['EdDSA'] })).rejects.toThrow(
      'signature verification failed',
    );
  });
});
