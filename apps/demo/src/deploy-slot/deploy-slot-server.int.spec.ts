import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGateClient, FenceTokenVerifier, type Lease } from '@lease-fence/client';
import {
  createTestSigningKey,
  openCoordinatorTestDouble,
  type CoordinatorTestDouble,
  type TestSigningKey,
} from '@lease-fence/client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeToSlot } from '../agent/deploy-slot-client.js';
import { DeployLedger } from './deploy-ledger.js';
import { openDeploySlotServer, type DeploySlotServer } from './deploy-slot-server.js';

const SLOT = 'deploy-slot-a';

describe('deploy slot server', () => {
  let directory: string;
  let double: CoordinatorTestDouble;
  let ledger: DeployLedger | undefined;
  let server: DeploySlotServer | undefined;
  const lines: string[] = [];
  /** The coordinator's signing key, as far as the slot knows. */
  let coordinatorKey: TestSigningKey;
  /** What an agent holding `fence` sends: the grant signed by the coordinator. */
  const leaseOf = async (
    holderId: string,
    fence: number,
    key = coordinatorKey,
  ): Promise<Pick<Lease, 'resource' | 'signedToken'>> => ({
    resource: SLOT,
    signedToken: await key.sign({ resource: SLOT, holderId, fence, namespace: 'default' }),
  });

  const start = async (coordinatorUrl = double.url): Promise<DeploySlotServer> => {
    ledger = new DeployLedger(join(directory, 'deploy-slot.sqlite'));
    server = await openDeploySlotServer({
      resources: [SLOT],
      ledger,
      gateClient: new FenceGateClient({
        baseUrl: coordinatorUrl,
        token: 'token-gate',
        retry: { maxAttempts: 1, initialDelayMillis: 0 },
      }),
      verifier: new FenceTokenVerifier({ namespace: 'default', keys: { jwks: coordinatorKey.jwks } }),
      port: 0,
      log: (resource, message) => lines.push(`${resource ?? '-'} ${message}`),
    });
    return server;
  };
  const stop = async (): Promise<void> => {
    await server?.close();
    ledger?.close();
    server = undefined;
    ledger = undefined;
  };

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'deploy-slot-'));
    coordinatorKey = await createTestSigningKey();
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] }],
    });
    lines.length = 0;
  });

  afterEach(async () => {
    await stop();
    await double.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('accepts the newest holder, refuses an older fence with 409, and reports the refusal to the coordinator', async () => {
    // Arrange
    const slot = await start();
    await writeToSlot(slot.url, await leaseOf('agent-2', 4), 'claim');

    // Act
    const stale = await writeToSlot(slot.url, await leaseOf('agent-1', 3), 'step 1/1');
    await slot.flushReports();

    // Assert
    expect(stale).toEqual({
      ok: false,
      reason: 'refused',
      kind: 'stale-fence',
      floorFence: 4,
      floorHolderId: 'agent-2',
    });
    expect(double.rejections).toEqual([
      {
        gateId: 'deploy-gate',
        body: expect.objectContaining({
          seq: 1,
          resource: SLOT,
          rejected: { holderId: 'agent-1', fence: 3 },
          current: { holderId: 'agent-2', fence: 4 },
        }),
      },
    ]);
  });

  it('comes back after a restart with its floor and its refusal numbering, so new refusals are not taken for duplicates', async () => {
    // Arrange: one refusal before the restart.
    let slot = await start();
    await writeToSlot(slot.url, await leaseOf('agent-2', 4), 'claim');
    await writeToSlot(slot.url, await leaseOf('agent-1', 3), 'step');
    await slot.flushReports();
    await stop();

    // Act
    slot = await start();
    const stale = await writeToSlot(slot.url, await leaseOf('agent-3', 2), 'step');
    await slot.flushReports();

    // Assert
    expect(stale).toMatchObject({ ok: false, reason: 'refused', floorFence: 4 });
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2]);
    expect(lines).toContain(`${SLOT} restored floor fence 4 (agent-2) and next refusal #2 from the slot's database`);
  });

  it('reports after a restart a refusal that was still waiting in its outbox when it stopped', async () => {
    // Arrange: the coordinator is out of reach (nothing listens there) while the slot refuses a write.
    let slot = await start('http://127.0.0.1:9');
    await writeToSlot(slot.url, await leaseOf('agent-2', 4), 'claim');
    const stale = await writeToSlot(slot.url, await leaseOf('agent-1', 3), 'step');
    await stop();

    // Act: the slot comes back with the coordinator reachable.
    slot = await start();
    await slot.flushReports();

    // Assert
    expect(stale).toMatchObject({ ok: false, reason: 'refused', floorFence: 4 });
    expect(double.rejections).toEqual([
      {
        gateId: 'deploy-gate',
        body: expect.objectContaining({
          seq: 1,
          rejected: { holderId: 'agent-1', fence: 3 },
          current: { holderId: 'agent-2', fence: 4 },
        }),
      },
    ]);
    expect(lines).toContain(`${SLOT} 1 refusal(s) waiting in the outbox (#1): reporting them`);
  });

  it('refuses a write whose token the coordinator did not sign with 403: the floor does not move and nothing is reported', async () => {
    // Arrange: agent-2 holds fence 4 and wrote
    const slot = await start();
    await writeToSlot(slot.url, await leaseOf('agent-2', 4), 'claim');

    // Act: a higher fence signed by another key, and an unsigned body
    const forged = await writeToSlot(slot.url, await leaseOf('agent-1', 9, await createTestSigningKey()), 'step');
    const unsigned = await fetch(`${slot.url}/slots/${SLOT}/deploy`, {
      method: 'POST',
      body: JSON.stringify({ holderId: 'agent-1', fence: 9, step: 'step' }),
    });
    await slot.flushReports();

    // Assert
    expect(forged).toEqual({ ok: false, reason: 'invalid-token', tokenReason: 'unknown-key' });
    expect(unsigned.status).toBe(403);
    expect(slot.gates.get(SLOT)?.floor).toEqual({ holderId: 'agent-2', fence: 4 });
    expect(double.rejections).toEqual([]);
    expect(lines).toContain(
      `${SLOT} REFUSED "step": not a grant of the coordinator (unknown-key); the floor did not move`,
    );
  });

  it('answers 404 for a slot it does not serve', async () => {
    // Arrange
    const slot = await start();

    // Act
    const response = await fetch(`${slot.url}/slots/other/deploy`, { method: 'POST', body: '{}' });

    // Assert
    expect(response.status).toBe(404);
  });

  it.each([
    ['a null body', `/slots/${SLOT}/deploy`, 'null'],
    ['an array body', `/slots/${SLOT}/deploy`, '[]'],
    ['a path that is not valid percent-encoding', '/slots/%E0%A4%A/deploy', '{}'],
  ])('answers 400, not 500, to %s', async (_what, path, body) => {
    // Arrange
    const slot = await start();

    // Act
    const response = await fetch(`${slot.url}${path}`, { method: 'POST', body });

    // Assert
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ ok: false, error: 'invalid-request' });
  });
});
