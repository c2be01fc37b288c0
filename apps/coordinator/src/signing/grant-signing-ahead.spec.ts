// The grant's signature made on the signing thread while its append is committed
// (`grant-signer.ts`, `signing-worker.ts`, wired in `coordinator/coordinator-host.ts`): the token
// leaves only with a durable grant, a token signed for a failed append is dropped, and a dead
// signing thread falls back to signing on the main thread.
import { KeyObject } from 'node:crypto';
import { Writable } from 'node:stream';
import { CoordinatorUnavailableError } from '@lease-fence/coordinator-core';
import { createTestEventLog } from '@lease-fence/coordinator-core/testing';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/config.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { OutcomeCounters } from '../coordinator/outcome-counters.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { LeaseOperations } from '../leases/lease-operations.js';
import { GrantSigner } from './grant-signer.js';
import { generateSigningKeysText, parseSigningKeys, type SigningKeys } from './signing-keys.js';
import { SigningWorker, SigningWorkerStoppedError } from './signing-worker.js';

const FILE = '/etc/lease-fence/signing-keys.json';
const config = parseConfig(
  { LEASE_FENCE_EVENT_LOG: 'memory' },
  { cwd: '/', defaultDashboardDir: '/none', hasIndexHtml: () => false },
);
const agent = { role: 'agent', holderId: 'agent-a' } as const;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A signer with a signing thread (its `sign` spied on), and the same keys' signer without one. */
async function signers(onStopped?: (error: SigningWorkerStoppedError) => void) {
  const keys: SigningKeys = await parseSigningKeys(FILE, await generateSigningKeysText());
  const worker = new SigningWorker(KeyObject.from(keys.active.privateKey), onStopped);
  cleanups.push(() => worker.close());
  const workerSign = vi.spyOn(worker, 'sign');
  return {
    worker,
    workerSign,
    signer: new GrantSigner(keys, 'default', worker),
    onMainThread: new GrantSigner(keys, 'default'),
  };
}

/** The lease routes over a coordinator on a test log, signing with `signer`, once it serves. */
async function operations(signer: GrantSigner) {
  const log = createTestEventLog();
  const quiet = pino({ level: 'silent' }, new Writable({ write: (_chunk, _encoding, done) => done() }));
  const host = new CoordinatorHost(
    log,
    config,
    quiet,
    new CoordinatorMetrics(),
    new OutcomeCounters(),
    undefined,
    signer,
  );
  cleanups.push(() => host.beforeApplicationShutdown());
  await host.recovered();
  return { log, host, leases: new LeaseOperations(host, config, signer) };
}

describe('signing a grant while its append is committed', () => {
  it('signs the grant on the signing thread while the append is in flight, and sends the token only with the durable grant', async () => {
    // Arrange
    const { signer, workerSign, onMainThread } = await signers();
    const { log, leases } = await operations(signer);
    const release = log.holdAppends();
    let replied = false;

    // Act
    const reply = leases.acquire('deploy-slot', { requestId: 'req-1' }, agent).finally(() => (replied = true));
    await log.whenAppendsHeld(1);
    expect(workerSign).toHaveBeenCalledTimes(1);
    await workerSign.mock.results[0]!.value; // the thread answered; the append is still held

    // Assert
    expect(replied).toBe(false);
    expect(signer.latestFor('deploy-slot')).toBeUndefined();
    release();
    const { grant } = await reply;
    expect(grant.signedToken).toBe(await onMainThread.sign({ resource: 'deploy-slot', holderId: 'agent-a', fence: 1 }));
    expect(signer.latestFor('deploy-slot')).toMatchObject({ fence: 1, token: grant.signedToken });
    await leases.renew('deploy-slot', { requestId: 'req-2', fence: 1 }, agent);
    expect(workerSign).toHaveBeenCalledTimes(1); // a renewal of the fence reuses the cached token
  });

  it('never sends nor caches a token signed for a grant whose append failed', async () => {
    // Arrange
    const { signer, workerSign } = await signers();
    const { log, leases } = await operations(signer);
    log.failNextAppend(new Error('disk gone'));

    // Act
    const reply = leases.acquire('deploy-slot', { requestId: 'req-1' }, agent);

    // Assert
    await expect(reply).rejects.toBeInstanceOf(CoordinatorUnavailableError);
    expect(workerSign).toHaveBeenCalledTimes(1);
    await workerSign.mock.results[0]!.value; // the token was made, and is dropped
    expect(signer.latestFor('deploy-slot')).toBeUndefined();
  });

  it('signs on the main thread when the signing thread dies with a grant in flight, and says so', async () => {
    // Arrange
    const stopped: SigningWorkerStoppedError[] = [];
    const { signer, worker, workerSign, onMainThread } = await signers((error) => stopped.push(error));
    const grant = { resource: 'deploy-slot', holderId: 'agent-a', fence: 4 };
    signer.presign([grant]);
    const inFlight = workerSign.mock.results[0]!.value as Promise<unknown>;

    // Act
    await worker.terminateForTest();

    // Assert
    await expect(inFlight).rejects.toBeInstanceOf(SigningWorkerStoppedError);
    expect(await signer.sign(grant)).toBe(await onMainThread.sign(grant));
    expect(stopped).toHaveLength(1);
    expect(worker.running).toBe(false);
    signer.presign([{ ...grant, fence: 5 }]);
    expect(workerSign).toHaveBeenCalledTimes(1); // nothing more is posted to a dead thread
    expect(await signer.sign({ ...grant, fence: 5 })).toBe(await onMainThread.sign({ ...grant, fence: 5 }));
  });

  it('never replaces the latest token with an older fence that completes late', async () => {
    const { signer } = await signers();
    const older = { resource: 'deploy-slot', holderId: 'agent-a', fence: 4 };
    const newer = { ...older, holderId: 'agent-b', fence: 5 };
    signer.presign([older]);
    const newerToken = await signer.sign(newer);
    await signer.sign(older); // its token arrives from the thread after the newer one was cached
    expect(signer.latestFor('deploy-slot')).toEqual({ holderId: 'agent-b', fence: 5, token: newerToken });
  });
});
