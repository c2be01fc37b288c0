import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { KeysReply } from '@lease-fence/protocol';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterEach, describe, expect, it } from 'vitest';
import {
  commitDurablyVerified,
  commitVerified,
  FenceTokenVerifier,
  InvalidFenceTokenError,
  SigningKeysUnavailableError,
} from './fence-token-verifier.js';
import { openFileFloorStore } from './file-floor-store.js';
import { gateOptionsFrom } from './floor-store.js';
import { LeaseFenceClient } from './lease-fence-client.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/coordinator-test-double.js';
import { createTestSigningKey, type TestSigningKey } from './testing/test-signing-key.js';

const jwksOf = (...keys: TestSigningKey[]): KeysReply => ({ keys: keys.flatMap((key) => key.jwks.keys) });
const newKey = createTestSigningKey;
const sign = (key: TestSigningKey, payload: unknown): Promise<string> => key.sign(payload);

/** A `/v1/keys` server whose JWKS the test changes (a rotation), counting fetches; or answering 500. */
async function openKeysServer(initial: KeysReply): Promise<{
  url: string;
  fetches: () => number;
  publish: (jwks: KeysReply | 'error') => void;
  close: () => Promise<void>;
}> {
  let jwks: KeysReply | 'error' = initial;
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches += 1;
    if (jwks === 'error') response.writeHead(500).end('boom');
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/keys`,
    fetches: () => fetches,
    publish: (next) => {
      jwks = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('FenceTokenVerifier', () => {
  it("says to send the token alone when it comes with an Authorization-style 'Bearer ' prefix", async () => {
    // Arrange: a genuine token, sent as one would send an Authorization header
    const key = await newKey();
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: jwksOf(key) } });
    const token = await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 3, namespace: 'default' });

    // Act
    const error = (await refusal(verifier.verify(`Bearer ${token}`, 'slot'))) as InvalidFenceTokenError;

    // Assert
    expect(error).toBeInstanceOf(InvalidFenceTokenError);
    expect(error.reason).toBe('malformed');
    expect(error.message).toContain("without the 'Bearer ' prefix");
  });

  it('says to send one token when two arrive joined with a comma (the header sent twice, as HTTP joins repeated headers)', async () => {
    // Arrange
    const key = await newKey();
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: jwksOf(key) } });
    const token = await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 3, namespace: 'default' });

    // Act
    const error = (await refusal(verifier.verify(`${token}, ${token}`, 'slot'))) as InvalidFenceTokenError;

    // Assert
    expect(error.reason).toBe('malformed');
    expect(error.message).toContain('two or more tokens joined with a comma: send the header once');
  });

  it('refuses each kind of bad token with its own reason and counts it; a stale but genuine token goes on to the gate', async () => {
    // Arrange
    const key = await newKey();
    const seen: string[] = [];
    const verifier = new FenceTokenVerifier({
      namespace: 'default',
      keys: { jwks: jwksOf(key) },
      onInvalidToken: (error) => seen.push(error.reason),
    });
    const gate = new FenceGate('slot', { initialFloor: { holderId: 'agent-b', fence: 5 } });
    const grant = { resource: 'slot', holderId: 'agent-a', fence: 3, namespace: 'default' };

    // Act
    const reasons = [];
    for (const token of [
      42,
      'not.a.jws!',
      await sign(key, { ...grant, fence: 'three' }),
      await sign(key, { ...grant, resource: 'other' }),
      await sign(key, { ...grant, namespace: 'tenant-b' }),
    ]) {
      reasons.push(
        ((await refusal(commitVerified(gate, verifier, token, () => 'written'))) as InvalidFenceTokenError).reason,
      );
    }
    const stale = await refusal(commitVerified(gate, verifier, await sign(key, grant), () => 'written'));

    // Assert
    expect(reasons).toEqual(['malformed', 'malformed', 'bad-payload', 'wrong-resource', 'wrong-namespace']);
    expect(seen).toEqual(reasons);
    expect(stale).toBeInstanceOf(StaleFenceError); // verified, then refused by the floor: a real stale-fence refusal
    expect(gate.rejections).toHaveLength(1);
    expect(verifier.stats).toEqual({
      verified: 1,
      invalid: 5,
      invalidByReason: {
        malformed: 2,
        'unsupported-algorithm': 0,
        'wrong-type': 0,
        'unknown-key': 0,
        'bad-signature': 0,
        'bad-payload': 1,
        'wrong-resource': 1,
        'wrong-namespace': 1,
      },
      keysUnavailable: 0,
      cacheHits: 0,
    });
  });

  it("with the durable floor, saves nothing for a forged token and the genuine one's floor before its write", async () => {
    // Arrange
    const key = await newKey();
    const dir = await mkdtemp(join(tmpdir(), 'verified-floor-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'slot.floor.json');
    const store = await openFileFloorStore({ path, resource: 'slot' });
    const gate = new FenceGate('slot', gateOptionsFrom(await store.load()));
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: jwksOf(key) } });
    const genuine = await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 2, namespace: 'default' });
    const forged = await sign(await newKey(), {
      resource: 'slot',
      holderId: 'agent-z',
      fence: 9,
      namespace: 'default',
    });

    // Act
    const refused = await refusal(commitDurablyVerified(gate, store, verifier, forged, async () => 'written'));
    const floorAfterForged = await (await openFileFloorStore({ path, resource: 'slot' })).load();
    const savedBeforeWrite = await commitDurablyVerified(gate, store, verifier, genuine, async () =>
      (await openFileFloorStore({ path, resource: 'slot' })).load(),
    );

    // Assert
    expect((refused as InvalidFenceTokenError).reason).toBe('unknown-key');
    expect(floorAfterForged).toBeUndefined();
    expect(savedBeforeWrite?.floor).toEqual({ holderId: 'agent-a', fence: 2 });
  });

  it('never puts the token in its message', async () => {
    const key = await newKey();
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: jwksOf(key) } });
    const token = await sign(await newKey(), { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' });
    const error = (await refusal(verifier.verify(token, 'slot'))) as InvalidFenceTokenError;
    expect(error.reason).toBe('unknown-key');
    expect(error.message).not.toContain(token.split('.')[2]);
  });

  it('refuses bad options naming the field', () => {
    expect(() => new FenceTokenVerifier({ namespace: '', keys: { jwks: { keys: [] } } })).toThrow(/namespace/);
    expect(
      () => new FenceTokenVerifier({ namespace: 'default', keys: { jwks: { keys: [] } }, tokenCacheCapacity: -1 }),
    ).toThrow(/tokenCacheCapacity/);
    expect(
      () => new FenceTokenVerifier({ namespace: 'default', keys: { jwks: { keys: [] } }, tokenCacheCapacity: 1.5 }),
    ).toThrow(/tokenCacheCapacity/);
    expect(() => new FenceTokenVerifier({ namespace: 'default', keys: { url: 'ftp://coordinator/v1/keys' } })).toThrow(
      /keys\.url must be http/,
    );
    expect(
      () =>
        new FenceTokenVerifier({
          namespace: 'default',
          keys: { jwks: { keys: [{ kty: 'RSA' }] } as unknown as KeysReply },
        }),
    ).toThrow(/keys\.jwks/);
    expect(
      () =>
        new FenceTokenVerifier({
          namespace: 'default',
          keys: { url: 'http://127.0.0.1:1/v1/keys', cooldownMillis: -1 },
        }),
    ).toThrow(/keys\.cooldownMillis/);
  });

  describe('with the keys fetched from the coordinator', () => {
    it('fetches the keys once, and after a rotation refetches for the new kid at most once per cooldown', async () => {
      // Arrange
      const [oldKey, newKeyOfRotation] = [await newKey(), await newKey()];
      const keys = await openKeysServer(jwksOf(oldKey));
      cleanups.push(keys.close);
      const verifier = new FenceTokenVerifier({
        namespace: 'default',
        keys: { url: keys.url, cooldownMillis: 60_000 },
      });
      const grant = { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' };

      // Act: two tokens of the old key, then the coordinator rotates
      await verifier.verify(await sign(oldKey, grant), 'slot');
      await verifier.verify(await sign(oldKey, { ...grant, fence: 2 }), 'slot');
      const fetchesBeforeRotation = keys.fetches();
      keys.publish(jwksOf(newKeyOfRotation, oldKey));
      const rotated = await refusal(verifier.verify(await sign(newKeyOfRotation, { ...grant, fence: 3 }), 'slot'));

      // Assert: one fetch for both old tokens; the new kid is not refetched within the cooldown (the
      // first fetch was just now), so it is refused as unknown-key until the cooldown has passed
      expect(fetchesBeforeRotation).toBe(1);
      expect((rotated as InvalidFenceTokenError).reason).toBe('unknown-key');
      expect(keys.fetches()).toBe(1);

      // And with no cooldown, the unknown kid triggers a refetch and verifies
      const eager = new FenceTokenVerifier({ namespace: 'default', keys: { url: keys.url, cooldownMillis: 0 } });
      keys.publish(jwksOf(oldKey));
      await eager.verify(await sign(oldKey, grant), 'slot');
      keys.publish(jwksOf(newKeyOfRotation, oldKey));
      expect(await eager.verify(await sign(newKeyOfRotation, { ...grant, fence: 4 }), 'slot')).toMatchObject({
        fence: 4,
      });
    });

    it('answers a repeated token from its cache, and refuses it once the coordinator stops publishing its key', async () => {
      // Arrange: the coordinator publishes the old key; refetches are allowed at once (no cooldown)
      const [oldKey, nextKey] = [await newKey(), await newKey()];
      const keys = await openKeysServer(jwksOf(oldKey));
      cleanups.push(keys.close);
      const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: keys.url, cooldownMillis: 0 } });
      const grant = { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' };
      const oldToken = await sign(oldKey, grant);

      // Act: the same token twice (the second from the cache), then the old key is removed and a
      // token of the new key makes the verifier refetch the keys
      await verifier.verify(oldToken, 'slot');
      const again = await verifier.verify(oldToken, 'slot');
      const hitsBeforeRemoval = verifier.stats.cacheHits;
      keys.publish(jwksOf(nextKey));
      await verifier.verify(await sign(nextKey, { ...grant, fence: 2 }), 'slot');
      const afterRemoval = await refusal(verifier.verify(oldToken, 'slot'));

      // Assert
      expect(again).toEqual({ resource: 'slot', holderId: 'agent-a', fence: 1 });
      expect(hitsBeforeRemoval).toBe(1);
      expect((afterRemoval as InvalidFenceTokenError).reason).toBe('unknown-key');
      expect(verifier.stats.cacheHits).toBe(1);
    });

    it('drops its cache when the keys are refetched, even with the same key published again', async () => {
      // Arrange: the key set is older than its maximum age at every call, so each verify refetches it
      const key = await newKey();
      const keys = await openKeysServer(jwksOf(key));
      cleanups.push(keys.close);
      const verifier = new FenceTokenVerifier({
        namespace: 'default',
        keys: { url: keys.url, cacheMaxAgeMillis: 0 },
      });
      const token = await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' });

      // Act
      for (let i = 0; i < 3; i += 1) await verifier.verify(token, 'slot');

      // Assert: every call fetched the keys and checked the signature again
      expect(keys.fetches()).toBeGreaterThanOrEqual(3);
      expect(verifier.stats).toMatchObject({ verified: 3, cacheHits: 0 });
    });

    it('refuses a token of a removed key at once when the key set is refetched on every call, cached or not', async () => {
      const [oldKey, nextKey] = [await newKey(), await newKey()];
      const keys = await openKeysServer(jwksOf(oldKey));
      cleanups.push(keys.close);
      const verifier = new FenceTokenVerifier({
        namespace: 'default',
        keys: { url: keys.url, cacheMaxAgeMillis: 0, cooldownMillis: 0 },
      });
      const token = await sign(oldKey, { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' });
      await verifier.verify(token, 'slot');

      keys.publish(jwksOf(nextKey));
      const refused = await refusal(verifier.verify(token, 'slot'));

      expect((refused as InvalidFenceTokenError).reason).toBe('unknown-key');
    });

    it('loads the keys ahead of the first token (loadKeys), so that token is verified with the coordinator gone; fails retryably while they cannot be had', async () => {
      // Arrange: the coordinator answers 500 at first
      const key = await newKey();
      const keys = await openKeysServer(jwksOf(key));
      cleanups.push(keys.close);
      keys.publish('error');
      const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: keys.url } });
      const token = await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' });

      // Act: loaded while it fails, then once it answers; then the coordinator goes away and a token comes
      const whileFailing = await refusal(verifier.loadKeys());
      keys.publish(jwksOf(key));
      await verifier.loadKeys();
      await keys.close();
      const verified = await verifier.verify(token, 'slot');

      // Assert
      expect(whileFailing).toBeInstanceOf(SigningKeysUnavailableError);
      expect((whileFailing as SigningKeysUnavailableError).retryable).toBe(true);
      expect(verified).toEqual({ resource: 'slot', holderId: 'agent-a', fence: 1 });
      expect(keys.fetches()).toBe(2);
      expect(verifier.stats).toMatchObject({ verified: 1, keysUnavailable: 0 });
    });

    it('fails closed with a retryable SigningKeysUnavailableError, not counted as invalid, when the keys cannot be fetched', async () => {
      const key = await newKey();
      const keys = await openKeysServer('error' as unknown as KeysReply);
      cleanups.push(keys.close);
      keys.publish('error');
      const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: keys.url } });
      const gate = new FenceGate('slot');

      const error = await refusal(
        commitVerified(
          gate,
          verifier,
          await sign(key, { resource: 'slot', holderId: 'agent-a', fence: 1, namespace: 'default' }),
          () => 'written',
        ),
      );

      expect(error).toBeInstanceOf(SigningKeysUnavailableError);
      expect((error as SigningKeysUnavailableError).retryable).toBe(true);
      expect(gate.floor).toBeUndefined();
      expect(verifier.stats).toMatchObject({ invalid: 0, keysUnavailable: 1 });
    });
  });
});

describe('signed leases from the agent SDK (against the coordinator test double)', () => {
  let double: CoordinatorTestDouble;
  afterEach(async () => {
    await double?.close();
  });

  it("carries the coordinator's signedToken on the lease, the same through renewals and on the keeper's live view, and the gate admits it", async () => {
    // Arrange
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'agent-token', role: 'agent', holderId: 'agent-a' }],
    });
    const client = new LeaseFenceClient({
      baseUrl: double.url,
      token: 'agent-token',
      holderId: 'agent-a',
      clockSkewMillis: 10,
    });
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${double.url}/v1/keys` } });
    const gate = new FenceGate('slot');

    // Act
    const acquired = await client.acquire('slot', { ttlMillis: 5_000 });
    if (!acquired.ok) throw new Error(`expected a grant, got ${acquired.reason}`);
    const renewed = await client.renew(acquired.lease);
    if (!renewed.ok) throw new Error(`expected a renewal, got ${renewed.reason}`);
    const keeper = client.keep(renewed.lease);
    const written = await commitVerified(gate, verifier, keeper.view.signedToken, () => 'written');
    await keeper.release();

    // Assert
    expect(acquired.lease.signedToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(renewed.lease.signedToken).toBe(acquired.lease.signedToken);
    expect(written).toBe('written');
    expect(gate.floor).toEqual({ holderId: 'agent-a', fence: acquired.lease.fence });
  });
});
