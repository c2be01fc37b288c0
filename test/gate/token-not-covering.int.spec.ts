/**
 * A sidecar whose gate token does not cover its resource, as an operator meets it (the BUILT
 * sidecar and coordinator): the coordinator answers its start-up read 403, so the gate refuses
 * every write 503 until the tokens file is fixed and the coordinator restarted (it reads the file
 * at start). The gate's log must say that at error, naming the variable and the resource, not
 * call it a coordinator that has not answered yet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { startTcpFront, type TcpFront } from '../support/tcp-front.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';

const RESOURCE = 'orders'; // not among the test gate token's resources (deploy-*, db)
const READYZ = '/.well-known/lease-fence-gate/readyz';

describe.skipIf(!gateBuilt())('a sidecar whose gate token does not cover its resource', () => {
  let coordinator: RunningCoordinator | undefined;
  let front: TcpFront;
  let upstream: RecordingUpstream;
  let gate: GateProcess | undefined;
  let logDir: string;
  let gateDir: string;

  beforeAll(async () => {
    logDir = await createTempDir('token-not-covering-log-');
    gateDir = await createTempDir('token-not-covering-gate-');
    coordinator = await startCoordinator({ dataDir: logDir });
    front = await startTcpFront(coordinator.url);
    upstream = await startRecordingUpstream();
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await coordinator?.cleanup();
    await front?.close();
    await upstream?.close();
    await removeTempDir(gateDir);
    await removeTempDir(logDir);
  });

  const lines = (): { level: number; msg: string; reason?: string }[] =>
    gate!.logLines.map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string });

  it('logs at error that LEASE_FENCE_GATE_TOKEN does not cover the resource, and is ready once the tokens file covers it and the coordinator restarted', async () => {
    // Arrange + Act: the gate starts with a token that does not cover its resource
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: RESOURCE,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: front.url,
      LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
      LEASE_FENCE_DATA_DIR: gateDir,
    });
    await eventually('a line about the start-up read', () =>
      lines().some((line) => line.level >= 40 && line.msg.includes('latest fence')),
    );

    // Assert: one line at error, in words, naming the variable, the resource and what to do
    const said = lines().filter((line) => line.level >= 40);
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe(50);
    expect(said[0]!.msg).toContain('LEASE_FENCE_GATE_TOKEN does not cover resource "orders"');
    expect(said[0]!.msg).toContain('restart');
    expect(said[0]!.msg).not.toContain('until it answers');
    expect((await fetch(`${gate.url}${READYZ}`)).status).toBe(503);

    // Act: the operator adds the resource to the gate token in the tokens file and restarts the coordinator
    await coordinator!.stop();
    coordinator = await startCoordinator({
      dataDir: logDir,
      tokens: [
        ...Object.values(TEST_TOKENS).filter((entry) => entry.token !== TEST_TOKENS.gate.token),
        { ...TEST_TOKENS.gate, resources: [...TEST_TOKENS.gate.resources, RESOURCE] },
      ],
    });
    front.pointAt(coordinator.url);

    // Assert: the gate reconciles and is ready, without a restart of its own
    await eventually('the gate to be ready', async () => (await fetch(`${gate!.url}${READYZ}`)).status === 200);
  }, 20_000);
});
