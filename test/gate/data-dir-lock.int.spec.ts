/**
 * One gate per data directory, black-box: the BUILT sidecar takes `<data dir>/gate.lock` at start,
 * before it reads its floor. A second gate started on the same `LEASE_FENCE_DATA_DIR` (the
 * breaker's stop 29: it admitted fence 58 after the first had admitted 59, and the two handed out
 * clashing refusal seqs) refuses to start, naming the directory, the lock file and the holder's
 * pid, and the first one keeps working. A gate killed with SIGKILL leaves a lock the next start
 * sees as stale at once; one stopped with SIGTERM removes it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from '../sdk/support/coordinator-process.js';
import { eventually, gateBuilt, runGateExpectingExit, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';
import { acquireGrant, type TestGrant } from '../support/coordinator-http.js';

const OWN = '/.well-known/lease-fence-gate';

describe.skipIf(!coordinatorBuilt() || !gateBuilt())('one gate per data directory', () => {
  let coordinator: CoordinatorProcess;
  let upstream: RecordingUpstream;
  let dataRoot: string;
  const gates: GateProcess[] = [];

  beforeAll(async () => {
    coordinator = await startCoordinator();
    upstream = await startRecordingUpstream();
    dataRoot = await mkdtemp(join(tmpdir(), 'gate-lock-'));
  });

  afterAll(async () => {
    for (const gate of gates) await gate.stop('SIGKILL');
    await upstream?.close();
    await coordinator?.stop();
    await rm(dataRoot, { recursive: true, force: true });
  });

  const envFor = (resource: string, dataDir: string): Record<string, string> => ({
    LEASE_FENCE_GATE_RESOURCE: resource,
    LEASE_FENCE_GATE_UPSTREAM: upstream.url,
    LEASE_FENCE_COORDINATOR_URL: coordinator.url,
    LEASE_FENCE_GATE_TOKEN: 'gate-token',
    LEASE_FENCE_DATA_DIR: dataDir,
  });
  const startReady = async (resource: string, dataDir: string): Promise<GateProcess> => {
    const gate = await startGate(envFor(resource, dataDir));
    gates.push(gate);
    await eventually(`${resource}'s gate ready`, async () => (await fetch(`${gate.url}${OWN}/readyz`)).status === 200);
    return gate;
  };
  const acquire = (resource: string): Promise<TestGrant> => acquireGrant(coordinator.url, 'agent-1-token', resource);

  it('a second gate on the same data directory refuses to start, naming the directory, the lock file and the holder; the first keeps admitting', async () => {
    const dataDir = join(dataRoot, 'shared');
    const first = await startReady('deploy-lock-shared', dataDir);

    const second = await runGateExpectingExit(envFor('deploy-lock-shared', dataDir));

    expect(second.stillRunning).toBe(false);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(dataDir);
    expect(second.stderr).toContain(join(dataDir, 'gate.lock'));
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    const lease = await acquire('deploy-lock-shared');
    const written = await fetch(`${first.url}/after-refusal`, {
      method: 'POST',
      body: 'x',
      headers: { 'lease-fence-token': lease.signedToken },
    });
    expect(written.status).toBe(200);
    expect(upstream.received.filter((request) => request.url === '/after-refusal')).toHaveLength(1);
  });

  it('a gate killed with SIGKILL leaves a lock the next gate replaces at once; one stopped with SIGTERM removes it', async () => {
    const dataDir = join(dataRoot, 'crash');
    const crashed = await startReady('deploy-lock-crash', dataDir);
    await crashed.stop('SIGKILL');
    expect(existsSync(join(dataDir, 'gate.lock'))).toBe(true);

    const next = await startReady('deploy-lock-crash', dataDir);
    expect(next.logLines.some((line) => line.includes(`pid ${crashed.child.pid}`))).toBe(true);
    await next.stop('SIGTERM');

    expect(existsSync(join(dataDir, 'gate.lock'))).toBe(false);
  });
});
