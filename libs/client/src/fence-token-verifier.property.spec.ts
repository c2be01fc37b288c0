/**
 * Forged, altered, truncated and foreign-key tokens: 0 admitted, 0 floors raised. A property over
 * mutations of tokens the coordinator signed (bytes flipped in the header, payload or signature,
 * payload fields swapped under the original signature, re-signed with a foreign key, `alg` `none`
 * and `HS256`, truncation), each sent through {@link commitVerified} to a gate with a floor.
 */
import { SIGNED_GRANT_TYPE, type SignedGrantPayload } from '@lease-fence/protocol';
import fc from 'fast-check';
import { CompactSign } from 'jose';
import { FenceGate } from 'lease-fence';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitVerified, FenceTokenVerifier, InvalidFenceTokenError } from './fence-token-verifier.js';
import { createTestSigningKey, type TestSigningKey } from './testing/test-signing-key.js';

const NAMESPACE = 'default';
const RESOURCE = 'deploy-slot';
const FLOOR = { holderId: 'agent-b', fence: 5 };

const b64 = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url');
const bytesOf = (segment: string): Uint8Array => new Uint8Array(Buffer.from(segment, 'base64url'));

let coordinatorKey: TestSigningKey;
let foreignKey: TestSigningKey;

beforeAll(async () => {
  [coordinatorKey, foreignKey] = [await createTestSigningKey(), await createTestSigningKey()];
});

/** A gate whose floor is (agent-b, 5), as after an earlier grant wrote. */
const gateWithFloor = (): FenceGate => new FenceGate(RESOURCE, { initialFloor: FLOOR, initialSeq: 1 });

const grantArbitrary = fc.record({
  holderId: fc.constantFrom('agent-a', 'agent-b', 'agent-c'),
  fence: fc.integer({ min: 1, max: 1_000 }),
});

/** One way to spoil a genuine token (`genuine` = signed by the coordinator for this gate). */
type Mutation = (genuine: string, grant: SignedGrantPayload) => Promise<string>;

const flipBit = (segmentIndex: 0 | 1 | 2): fc.Arbitrary<Mutation> =>
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })).map(([at, bit]): Mutation => async (genuine) => {
    const segments = genuine.split('.');
    const bytes = bytesOf(segments[segmentIndex]!);
    const index = at % bytes.length;
    bytes[index] = bytes[index]! ^ (1 << bit);
    segments[segmentIndex] = b64(bytes);
    return segments.join('.');
  });

const MUTATIONS: fc.Arbitrary<[string, Mutation]> = fc.oneof(
  flipBit(0).map((m) => ['flip a header bit', m] as [string, Mutation]),
  flipBit(1).map((m) => ['flip a payload bit', m] as [string, Mutation]),
  flipBit(2).map((m) => ['flip a signature bit', m] as [string, Mutation]),
  fc
    .constantFrom<Partial<SignedGrantPayload>>(
      { fence: 1_000_001 },
      { holderId: 'agent-z' },
      { resource: 'other-slot' },
      { namespace: 'other' },
    )
    .map((change): [string, Mutation] => [
      `swap ${Object.keys(change)[0]} under the original signature`,
      async (genuine, grant) => {
        const [header, , signature] = genuine.split('.');
        return `${header}.${b64(JSON.stringify({ ...grant, ...change }))}.${signature}`;
      },
    ]),
  fc.constant<[string, Mutation]>([
    "re-sign with a foreign key under the coordinator's kid",
    (_, grant) => foreignKey.sign(grant, { kid: coordinatorKey.kid }),
  ]),
  fc.constant<[string, Mutation]>([
    're-sign with a foreign key under its own kid',
    (_, grant) => foreignKey.sign(grant),
  ]),
  fc.constant<[string, Mutation]>([
    'alg none',
    async (_, grant) =>
      `${b64(JSON.stringify({ alg: 'none', kid: coordinatorKey.kid, typ: SIGNED_GRANT_TYPE }))}.${b64(JSON.stringify(grant))}.`,
  ]),
  fc.constant<[string, Mutation]>([
    'HS256 keyed with the public key',
    async (_, grant) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(grant)))
        .setProtectedHeader({ alg: 'HS256', kid: coordinatorKey.kid, typ: SIGNED_GRANT_TYPE })
        .sign(bytesOf(coordinatorKey.x)),
  ]),
  fc.constant<[string, Mutation]>(['signed without typ', (_, grant) => coordinatorKey.sign(grant, { typ: undefined })]),
  fc.constant<[string, Mutation]>([
    'signed for another resource',
    (_, grant) => coordinatorKey.sign({ ...grant, resource: 'other-slot' }),
  ]),
  fc.constant<[string, Mutation]>([
    'signed in another namespace',
    (_, grant) => coordinatorKey.sign({ ...grant, namespace: 'other' }),
  ]),
  fc.nat().map((cut): [string, Mutation] => ['truncate', async (genuine) => genuine.slice(0, cut % genuine.length)]),
);

describe('FenceTokenVerifier against mutated tokens (property)', () => {
  it('admits none of them: the write never runs, the floor and the rejection seq never move, each is counted as invalid', async () => {
    const verifier = new FenceTokenVerifier({ namespace: NAMESPACE, keys: { jwks: coordinatorKey.jwks } });
    let attempts = 0;
    await fc.assert(
      fc.asyncProperty(grantArbitrary, MUTATIONS, async (grantFields, [, mutate]) => {
        // Arrange: a genuine token, then spoiled
        const grant: SignedGrantPayload = { resource: RESOURCE, namespace: NAMESPACE, ...grantFields };
        const forged = await mutate(await coordinatorKey.sign(grant), grant);
        const gate = gateWithFloor();
        let wrote = false;

        // Act
        const outcome = await commitVerified(gate, verifier, forged, () => {
          wrote = true;
        }).then(
          () => undefined,
          (error: unknown) => error,
        );
        attempts += 1;

        // Assert
        expect(outcome).toBeInstanceOf(InvalidFenceTokenError);
        expect(wrote).toBe(false);
        expect(gate.floor).toEqual(FLOOR);
        expect(gate.nextSeq).toBe(1);
        expect(gate.rejections).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(verifier.stats).toMatchObject({ verified: 0, invalid: attempts });
  });

  it('admits the genuine tokens the mutations start from, with the fence and holder they were signed for', async () => {
    const verifier = new FenceTokenVerifier({ namespace: NAMESPACE, keys: { jwks: coordinatorKey.jwks } });
    await fc.assert(
      fc.asyncProperty(grantArbitrary, async (grantFields) => {
        const grant: SignedGrantPayload = { resource: RESOURCE, namespace: NAMESPACE, ...grantFields };
        expect(await verifier.verify(await coordinatorKey.sign(grant), RESOURCE)).toEqual({
          resource: RESOURCE,
          ...grantFields,
        });
      }),
      { numRuns: 50 },
    );
  });
});

describe('FenceTokenVerifier with its verified-token cache (property)', () => {
  it('answers every sequence of genuine, repeated and spoiled tokens exactly as a verifier without the cache does', async () => {
    // Arrange: the same key set, cached and uncached; a few genuine tokens, so they repeat
    const cached = new FenceTokenVerifier({ namespace: NAMESPACE, keys: { jwks: coordinatorKey.jwks } });
    const uncached = new FenceTokenVerifier({
      namespace: NAMESPACE,
      keys: { jwks: coordinatorKey.jwks },
      tokenCacheCapacity: 0,
    });
    const grants: SignedGrantPayload[] = [1, 2, 3].map((fence) => ({
      resource: RESOURCE,
      namespace: NAMESPACE,
      holderId: `agent-${fence}`,
      fence,
    }));
    const genuine = await Promise.all(grants.map((grant) => coordinatorKey.sign(grant)));
    const outcome = (promise: Promise<unknown>): Promise<unknown> =>
      promise.then(
        (token) => ({ admitted: token }),
        (error: unknown) => ({ refused: error instanceof InvalidFenceTokenError ? error.reason : String(error) }),
      );
    const step = fc.record({
      which: fc.integer({ min: 0, max: grants.length - 1 }),
      mutation: fc.option(MUTATIONS, { freq: 2 }),
      resource: fc.constantFrom(RESOURCE, RESOURCE, 'other-slot'),
    });

    // Act / Assert
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        for (const { which, mutation, resource } of steps) {
          const token = mutation === null ? genuine[which]! : await mutation[1](genuine[which]!, grants[which]!);
          expect(await outcome(cached.verify(token, resource))).toEqual(
            await outcome(uncached.verify(token, resource)),
          );
        }
      }),
      { numRuns: 200 },
    );
    expect(cached.stats.cacheHits).toBeGreaterThan(0); // the cache was used, not only filled
    expect(uncached.stats.cacheHits).toBe(0);
    expect(cached.stats.verified).toBe(uncached.stats.verified);
    expect(cached.stats.invalidByReason).toEqual(uncached.stats.invalidByReason);
  });
});
