/**
 * The BUILT sidecar whose data directory fills up while refusals wait in its outbox (the
 * coordinator is down, so none is acknowledged and the floor file grows with each). Its files are
 * capped by `ulimit -f` (RLIMIT_FSIZE), which fails a write with EFBIG after its first bytes, as a
 * full disk fails it with ENOSPC. What must hold: a refusal it could not save is answered 503
 * `floor-store-unavailable`, never 409; every 409 is in the file; and a failed save leaves no
 * temporary file behind, which on a full disk holds the space the next save needs.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireGrant, coordinatorHttp, type TestGrant } from '../support/coordinator-http.js';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';

const RESOURCE = 'deploy-disk-full';
const READYZ = '/.well-known/lease-fence-gate/readyz';
/** 2 blocks of 512 bytes: the floor file holds the floor and about four refusals. */
const FILE_SIZE_LIMIT_BLOCKS = 2;

describe.skipIf(!gateBuilt())('a sidecar whose data directory fills up', () => {
  let coordinator: RunningCoordinator;
  let upstream: RecordingUpstream;
  let gate: GateProcess;
  let gateDir: string;

  beforeAll(async () => {
    gateDir = await createTempDir('floor-disk-full-gate-');
    coordinator = await startCoordinator();
    upstream = await startRecordingUpstream();
    gate = await startGate(
      {
        LEASE_FENCE_GATE_RESOURCE: RESOURCE,
        LEASE_FENCE_GATE_UPSTREAM: upstream.url,
        LEASE_FENCE_COORDINATOR_URL: coordinator.url,
        LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
        LEASE_FENCE_DATA_DIR: gateDir,
      },
      { fileSizeLimitBlocks: FILE_SIZE_LIMIT_BLOCKS },
    );
    await eventually('the gate to be ready', async () => (await fetch(`${gate.url}${READYZ}`)).status === 200);
  });

  afterAll(async () => {
    await gate?.stop('SIGKILL');
    await coordinator?.cleanup();
    await upstream?.close();
    await removeTempDir(gateDir);
  });

  const acquire = (agent: { token: string }): Promise<TestGrant> =>
    acquireGrant(coordinator.url, agent.token, RESOURCE);
  const write = async (path: string, signedToken: string): Promise<{ status: number; body: string }> => {
    const response = await fetch(`${gate.url}${path}`, {
      method: 'POST',
      headers: { 'lease-fence-token': signedToken },
      body: 'write',
    });
    return { status: response.status, body: await response.text() };
  };

  it('answers 503 for a refusal it cannot save, keeps every 409 in the file, and leaves no temporary file', async () => {
    // Arrange: agent-b holds the resource after agent-a; its write raised the floor; the coordinator stops
    const old = await acquire(TEST_TOKENS.agentA);
    expect(
      (
        await coordinatorHttp(coordinator.url, TEST_TOKENS.agentA.token).post(`/v1/leases/${RESOURCE}/release`, {
          fence: old.fence,
        })
      ).status,
    ).toBe(200);
    const current = await acquire(TEST_TOKENS.agentB);
    expect((await write('/current', current.signedToken)).status).toBe(200);
    await coordinator.stop();

    // Act: agent-a's stale writes, until the data directory is full and a few more
    const answers: { status: number; body: string }[] = [];
    for (let attempt = 0; attempt < 12 && answers.filter((answer) => answer.status === 503).length < 4; attempt += 1)
      answers.push(await write(`/stale-${attempt}`, old.signedToken));

    // Assert: 409 while there was room, then 503 saying why; each 409's seq in the file; no temporary file
    const refused = answers.filter((answer) => answer.status === 409);
    const unsaved = answers.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(unsaved).toHaveLength(4);
    expect(answers.map((answer) => answer.status)).toEqual([...refused.map(() => 409), ...unsaved.map(() => 503)]);
    for (const answer of unsaved) {
      expect(JSON.parse(answer.body)).toMatchObject({ ok: false, reason: 'floor-store-unavailable' });
      expect(answer.body).toContain('EFBIG');
    }
    const saved = JSON.parse(await readFile(`${gateDir}/${RESOURCE}.floor.json`, 'utf8')) as {
      outbox: { seq: number }[];
    };
    expect(saved.outbox.map((entry) => entry.seq)).toEqual(
      refused.map((answer) => (JSON.parse(answer.body) as { seq: number }).seq),
    );
    expect((await readdir(gateDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(upstream.received.map((request) => request.url)).toEqual(['/current']);
  });
});
