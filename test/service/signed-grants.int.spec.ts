/**
 * Signed grants, black-box against the BUILT coordinator: `GET /v1/keys` without a token, a
 * signedToken on every acquire and renew reply (the same for a retried requestId and for every
 * renewal of a fence), the generated key kept across restarts, an operator's key file rotated,
 * and the coordinator refusing to start on a key file it cannot use, saying why.
 */
import { stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FenceTokenVerifier } from '@lease-fence/client';
import { afterEach, describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import {
  spawnCoordinator,
  startCoordinator,
  type RunningCoordinator,
  type StartCoordinatorOptions,
} from '../support/coordinator-process.js';
import { createSigningKeysFile, rotateSigningKeysFile } from '../support/signing-keys.js';
import { waitForExit } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

interface Jwks {
  readonly keys: readonly { readonly kid: string; readonly kty: string; readonly crv: string; readonly d?: string }[];
}
interface GrantBody {
  readonly ok: true;
  readonly grant: { readonly fence: number; readonly signedToken: string };
}

const running: RunningCoordinator[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.cleanup();
  for (const dir of dirs.splice(0)) await removeTempDir(dir);
});

async function start(options: StartCoordinatorOptions = {}): Promise<RunningCoordinator> {
  const app = await startCoordinator(options);
  running.push(app);
  return app;
}

async function tempDir(): Promise<string> {
  const dir = await createTempDir('lease-fence-signed-');
  dirs.push(dir);
  return dir;
}

const keysOf = async (app: RunningCoordinator): Promise<Jwks> =>
  (await coordinatorHttp(app.url).get<Jwks>('/v1/keys')).body;

const acquire = async (app: RunningCoordinator, resource: string, requestId: string): Promise<GrantBody['grant']> => {
  const reply = await coordinatorHttp(app.url, TEST_TOKENS.agentA.token).post<GrantBody>(
    `/v1/leases/${resource}/acquire`,
    { requestId, ttlMillis: 60_000 },
  );
  expect(reply.status).toBe(200);
  return reply.body.grant;
};

/** Runs a coordinator until it exits; its exit code and stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnCoordinator({ PORT: '0', HOST: '127.0.0.1', ...env });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exit = await waitForExit(child);
  return { code: exit.code, stderr };
}

describe('signed grants', () => {
  it('serves the public keys without a token, and signs acquire and renew replies with them: one token per fence', async () => {
    // Arrange
    const app = await start();
    const agent = coordinatorHttp(app.url, TEST_TOKENS.agentA.token);

    // Act
    const keys = await coordinatorHttp(app.url).get<Jwks>('/v1/keys');
    const granted = await acquire(app, 'deploy-signed', 'r-1');
    const retried = await acquire(app, 'deploy-signed', 'r-1');
    const renewed = await agent.post<GrantBody>('/v1/leases/deploy-signed/renew', {
      requestId: 'r-2',
      fence: granted.fence,
    });
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${app.url}/v1/keys` } });

    // Assert
    expect(keys.status).toBe(200);
    expect(keys.body.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })]);
    expect(keys.body.keys[0]).not.toHaveProperty('d');
    expect(retried.signedToken).toBe(granted.signedToken);
    expect(renewed.body.grant.signedToken).toBe(granted.signedToken);
    expect(await verifier.verify(granted.signedToken, 'deploy-signed')).toEqual({
      resource: 'deploy-signed',
      holderId: 'agent-a',
      fence: granted.fence,
    });
    expect((await stat(join(app.dataDir, 'signing-keys.json'))).mode & 0o777).toBe(0o600);
  });

  it('keeps the generated key across a restart: tokens signed before it still verify', async () => {
    // Arrange
    const first = await start();
    const granted = await acquire(first, 'deploy-restart', 'r-1');
    const kidBefore = (await keysOf(first)).keys[0]?.kid;
    await first.stop();

    // Act
    const second = await start({ dataDir: first.dataDir });

    // Assert
    expect((await keysOf(second)).keys.map((key) => key.kid)).toEqual([kidBefore]);
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${second.url}/v1/keys` } });
    expect(await verifier.verify(granted.signedToken, 'deploy-restart')).toMatchObject({ fence: granted.fence });
  });

  it('rotates an operator key file: the new key signs, the old one stays published and its tokens still verify', async () => {
    // Arrange: a coordinator on the operator's file, and a token it signed
    const keysDir = await tempDir();
    const file = await createSigningKeysFile(keysDir);
    const dataDir = await tempDir();
    const before = await start({ dataDir, env: { LEASE_FENCE_SIGNING_KEYS_FILE: file } });
    const oldToken = (await acquire(before, 'deploy-rotate', 'r-1')).signedToken;
    const [oldKid] = (await keysOf(before)).keys.map((key) => key.kid);
    await before.stop();

    // Act
    await rotateSigningKeysFile(file);
    const after = await start({ dataDir, env: { LEASE_FENCE_SIGNING_KEYS_FILE: file } });
    const newToken = (await acquire(after, 'deploy-rotated', 'r-2')).signedToken;

    // Assert
    const kids = (await keysOf(after)).keys.map((key) => key.kid);
    expect(kids).toHaveLength(2);
    expect(kids[1]).toBe(oldKid);
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${after.url}/v1/keys` } });
    expect(await verifier.verify(oldToken, 'deploy-rotate')).toMatchObject({ holderId: 'agent-a' });
    expect(await verifier.verify(newToken, 'deploy-rotated')).toMatchObject({ holderId: 'agent-a' });
    expect(JSON.parse(Buffer.from(newToken.split('.')[0]!, 'base64url').toString()).kid).toBe(kids[0]);
    expect(
      after.logs.some(
        (line) => line.msg === 'signing grants with the first key of the key set file' && line.kid === kids[0],
      ),
    ).toBe(true);
  });

  it.each([
    [
      'a file that does not exist',
      async (dir: string) => join(dir, 'missing.json'),
      /missing\.json: does not exist \(create one with `node apps\/coordinator\/dist\/signing\/signing-keys-cli\.js/,
    ],
    [
      'a PEM key',
      async (dir: string) =>
        writeKeyFile(dir, '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA\n-----END PRIVATE KEY-----\n'),
      /is not a JSON key set/,
    ],
    [
      'an RSA key',
      async (dir: string) => writeKeyFile(dir, JSON.stringify({ keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB' }] })),
      /key 0 field kty: must be "OKP" \(an Ed25519 key\), got "RSA"/,
    ],
    [
      'a directory',
      async (dir: string) => {
        const path = join(dir, 'keys.d');
        await mkdir(path);
        return path;
      },
      /keys\.d: is a directory/,
    ],
  ])(
    'refuses to start on %s, naming LEASE_FENCE_SIGNING_KEYS_FILE and what is wrong, having appended nothing',
    async (_name, makeFile, expected) => {
      // Arrange
      const dir = await tempDir();
      const file = await makeFile(dir);
      const tokensFile = join(dir, 'tokens.json');
      await writeFile(tokensFile, JSON.stringify(Object.values(TEST_TOKENS)));

      // Act
      const { code, stderr } = await refusedStart({
        LEASE_FENCE_DATA_DIR: join(dir, 'data'),
        LEASE_FENCE_TOKENS_FILE: tokensFile,
        LEASE_FENCE_SIGNING_KEYS_FILE: file,
      });

      // Assert
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^lease-fence coordinator: invalid configuration:\n {2}LEASE_FENCE_SIGNING_KEYS_FILE: signing keys file /,
      );
      expect(stderr).toMatch(expected);
      expect(stderr).not.toMatch(/^\s+at /m);
      await expect(stat(join(dir, 'data', 'default.events.sqlite'))).rejects.toThrow(/ENOENT/);
    },
  );

  it('refuses to start on the EventStoreDB log without LEASE_FENCE_SIGNING_KEYS_FILE, saying why', async () => {
    const { code, stderr } = await refusedStart({
      LEASE_FENCE_EVENT_LOG: 'eventstoredb',
      EVENTSTORE_CONNECTION_STRING: 'kurrentdb://127.0.0.1:1?tls=false',
    });
    expect(code).toBe(1);
    expect(stderr).toContain(
      'LEASE_FENCE_SIGNING_KEYS_FILE: is required when LEASE_FENCE_EVENT_LOG=eventstoredb, so that a primary and its standby sign grants with the same key',
    );
  });
});

async function writeKeyFile(dir: string, text: string): Promise<string> {
  const file = join(dir, 'keys.json');
  await writeFile(file, text, { mode: 0o600 });
  return file;
}
