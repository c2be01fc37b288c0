/**
 * The resource side of signed grants, black-box: agents lease through the SDK from the BUILT
 * coordinator, and a resource's gate admits writes only through `commitVerified` with a
 * `FenceTokenVerifier` that fetches the coordinator's `/v1/keys`. Forged, altered, foreign-key
 * and other-namespace tokens: 0 admitted, 0 floors raised, none recorded as a stale-fence
 * refusal, every one counted; a genuine but stale token is still a real stale-fence refusal.
 */
import {
  commitVerified,
  FenceTokenVerifier,
  InvalidFenceTokenError,
  LeaseFenceClient,
  type Lease,
} from '@lease-fence/client';
import { createTestSigningKey } from '@lease-fence/client/testing';
import fc from 'fast-check';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from './support/coordinator-process.js';

const RESOURCE = 'deploy-signed-gate';

const agent = (coordinator: CoordinatorProcess, index: number): LeaseFenceClient =>
  new LeaseFenceClient({
    baseUrl: coordinator.url,
    token: `agent-${index}-token`,
    holderId: `agent-${index}`,
    clockSkewMillis: 50,
    retry: { maxAttempts: 20, initialDelayMillis: 50, maxDelayMillis: 200 },
  });

const leaseOf = async (client: LeaseFenceClient, resource: string, ttlMillis: number): Promise<Lease> => {
  const result = await client.acquire(resource, { ttlMillis });
  if (!result.ok) throw new Error(`expected a grant of ${resource}, got ${result.reason}`);
  return result.lease;
};

const b64 = (value: Uint8Array | string): string => Buffer.from(value).toString('base64url');

/** Spoils a genuine token: flips one bit in one segment, re-encodes the payload with a changed field, or truncates it. */
const spoiled = (genuine: string): fc.Arbitrary<string> => {
  const segments = genuine.split('.');
  return fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.integer({ min: 0, max: 7 })).map(([segment, at, bit]) => {
      const bytes = new Uint8Array(Buffer.from(segments[segment]!, 'base64url'));
      bytes[at % bytes.length] = bytes[at % bytes.length]! ^ (1 << bit);
      return segments.map((s, i) => (i === segment ? b64(bytes) : s)).join('.');
    }),
    fc.constantFrom({ fence: 1_000_000 }, { holderId: 'agent-2' }, { namespace: 'other' }).map((change) => {
      const payload = { ...JSON.parse(Buffer.from(segments[1]!, 'base64url').toString()), ...change };
      return `${segments[0]}.${b64(JSON.stringify(payload))}.${segments[2]}`;
    }),
    fc.nat({ max: genuine.length - 1 }).map((cut) => genuine.slice(0, cut)),
  );
};

describe.skipIf(!coordinatorBuilt())('a resource gate verifying signed grants from the real coordinator', () => {
  let coordinator: CoordinatorProcess;
  /** A coordinator of another namespace signing with the same key file (as an operator might share one). */
  let otherNamespace: CoordinatorProcess;

  beforeAll(async () => {
    coordinator = await startCoordinator();
    otherNamespace = await startCoordinator({
      env: {
        LEASE_FENCE_NAMESPACE: 'other',
        LEASE_FENCE_SIGNING_KEYS_FILE: join(coordinator.dataDir, 'signing-keys.json'),
      },
    });
  });

  afterAll(async () => {
    await otherNamespace?.stop();
    await coordinator?.stop();
  });

  it('admits only genuine tokens for its resource: forged, altered, foreign-key and other-namespace tokens move nothing', async () => {
    // Arrange: agent-1 holds the lease and has written once; the gate's floor is its fence
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${coordinator.url}/v1/keys` } });
    const gate = new FenceGate(RESOURCE);
    const lease = await leaseOf(agent(coordinator, 1), RESOURCE, 60_000);
    await commitVerified(gate, verifier, lease.signedToken, () => undefined);
    const floor = gate.floor;
    const attacker = await createTestSigningKey();
    const payload = JSON.parse(Buffer.from(lease.signedToken.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const foreignKid = await attacker.sign({ ...payload, fence: lease.fence + 1 });
    const foreignUnderOurKid = await attacker.sign(
      { ...payload, fence: lease.fence + 1 },
      { kid: JSON.parse(Buffer.from(lease.signedToken.split('.')[0]!, 'base64url').toString()).kid },
    );
    const otherNamespaceLease = await leaseOf(agent(otherNamespace, 2), RESOURCE, 60_000);
    const refused: string[] = [];
    const attempt = async (token: string): Promise<void> => {
      let wrote = false;
      const error = await commitVerified(gate, verifier, token, () => {
        wrote = true;
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidFenceTokenError);
      expect(wrote).toBe(false);
      refused.push((error as InvalidFenceTokenError).reason);
    };

    // Act
    await attempt(foreignKid);
    await attempt(foreignUnderOurKid);
    await attempt(otherNamespaceLease.signedToken);
    await fc.assert(fc.asyncProperty(spoiled(lease.signedToken), attempt), { numRuns: 100 });

    // Assert
    expect(refused.slice(0, 3)).toEqual(['unknown-key', 'bad-signature', 'wrong-namespace']);
    expect(gate.floor).toEqual(floor);
    expect(gate.rejections).toEqual([]);
    expect(gate.nextSeq).toBe(1);
    expect(verifier.stats).toMatchObject({ verified: 1, invalid: refused.length, keysUnavailable: 0 });
  });

  it('refuses a genuine but stale token as a stale-fence refusal, once a newer holder wrote', async () => {
    // Arrange: agent-1's short lease expires and agent-2 takes the resource and writes
    const resource = `${RESOURCE}-stale`;
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${coordinator.url}/v1/keys` } });
    const gate = new FenceGate(resource);
    const stale = await leaseOf(agent(coordinator, 1), resource, 200);
    let fresh: Lease | undefined;
    while (fresh === undefined) {
      const result = await agent(coordinator, 2).acquire(resource, { ttlMillis: 60_000 });
      if (result.ok) fresh = result.lease;
      else await new Promise((resolve) => setTimeout(resolve, result.reason === 'held' ? result.retryAfterMillis : 50));
    }
    await commitVerified(gate, verifier, fresh.signedToken, () => undefined);

    // Act
    const error = await commitVerified(gate, verifier, stale.signedToken, () => undefined).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assert
    expect(error).toBeInstanceOf(StaleFenceError);
    expect(gate.rejections).toEqual([
      expect.objectContaining({
        kind: 'stale',
        rejected: { holderId: 'agent-1', fence: stale.fence },
        current: { holderId: 'agent-2', fence: fresh.fence },
      }),
    ]);
    expect(verifier.stats).toMatchObject({ verified: 2, invalid: 0 });
  });
});
