/**
 * The README's SDK examples, run against the coordinator test double. The README quotes the
 * `#region` blocks below verbatim; the last test fails when they drift apart.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGate, StaleFenceError, type FenceToken } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { openFileFloorStore } from './file-floor-store.js';
import { commitVerified, FenceTokenVerifier, InvalidFenceTokenError } from './fence-token-verifier.js';
import { commitDurably, gateOptionsFrom, gateStateOf } from './floor-store.js';
import { LeaseFenceClient } from './lease-fence-client.js';
import { reportRejections } from './rejection-reporter.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

describe('README examples', () => {
  let double: CoordinatorTestDouble;
  let dataDir: string;
  let baseUrl: string;
  const agentToken = 'token-agent-1';
  const gateToken = 'token-gate';

  beforeEach(async () => {
    double = await openCoordinatorTestDouble({
      tokens: [
        { token: agentToken, role: 'agent', holderId: 'agent-1' },
        { token: gateToken, role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] },
      ],
    });
    baseUrl = double.url;
    dataDir = await mkdtemp(join(tmpdir(), 'readme-'));
  });

  afterEach(async () => {
    await double.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs the agent quickstart: acquire, work while renewed, write with the fence, release', async () => {
    // Arrange
    const written: FenceToken[] = [];
    const callTheModel = async (_options: { signal: AbortSignal }) => 'plan';
    const deploySlot = { write: async (token: FenceToken, _plan: string) => written.push(token) };

    // Act
    // #region quickstart
    const client = new LeaseFenceClient({ baseUrl, token: agentToken, holderId: 'agent-1', clockSkewMillis: 100 });

    const result = await client.withLease('deploy-slot-a', async (lease, signal) => {
      const plan = await callTheModel({ signal }); // may outlast the ttl: renewed in the background
      return deploySlot.write(lease.token, plan); // the resource's FenceGate checks lease.token
    });
    if (!result.ok) console.log(`not now: ${result.reason}`); // held | already-held | lock-delay | expired | dead-on-arrival
    // #endregion

    // Assert
    expect(result).toMatchObject({ ok: true, release: { ok: true } });
    expect(written).toEqual([{ resource: 'deploy-slot-a', holderId: 'agent-1', fence: 1 }]);
  });

  it('runs the resource example: restored floor, durable commits, reported refusals', async () => {
    // Arrange
    const applied: number[] = [];
    const applyDeployment = async (token: FenceToken) => applied.push(token.fence);

    // Act
    // #region resource
    const store = await openFileFloorStore({ path: join(dataDir, 'deploy-slot-a.floor.json'), resource: 'deploy-slot-a' });
    const saved = await store.load(); // undefined on the first start
    const gate = new FenceGate('deploy-slot-a', {
      ...gateOptionsFrom(saved), // initialFloor + initialSeq: never forget the floor
      onRejection: (rejection) => {
        reporter.notify(rejection); // called only after reporter exists (on a refused write)
        void store.save(gateStateOf(gate, reporter.reportedThroughSeq));
      },
    });
    const reporter = reportRejections(gate, new FenceGateClient({ baseUrl, token: gateToken }), {
      reportedThroughSeq: saved?.reportedThroughSeq ?? 0,
      // once acknowledged, never sent again, even after a restart
      onReported: () => void store.save(gateStateOf(gate, reporter.reportedThroughSeq)),
    });

    // every write: check and raise the floor, make it durable, then write
    const write = (token: FenceToken) => commitDurably(gate, store, token, () => applyDeployment(token));
    // #endregion
    await write({ resource: 'deploy-slot-a', holderId: 'agent-2', fence: 2 });
    const stale = () => write({ resource: 'deploy-slot-a', holderId: 'agent-1', fence: 1 });
    expect(stale).toThrow(StaleFenceError);
    await reporter.flush();
    await reporter.close();

    // Assert
    expect(applied).toEqual([2]);
    expect(double.rejections).toHaveLength(1);
    expect((await store.load())?.floor).toEqual({ fence: 2, holderId: 'agent-2' });
    await store.save(gateStateOf(gate, 0)); // saves are merged in order: this resolves after every save the example started
    const reopened = await openFileFloorStore({ path: join(dataDir, 'deploy-slot-a.floor.json'), resource: 'deploy-slot-a' });
    expect((await reopened.load())?.reportedThroughSeq).toBe(1); // the acknowledged refusal is remembered across a restart
  });

  it('runs the signed-gate example: a genuine signedToken writes, a forged one is refused and counted', async () => {
    // Arrange
    const applied: string[] = [];
    const applyDeployment = async (signedToken: string) => applied.push(signedToken);
    const client = new LeaseFenceClient({ baseUrl, token: agentToken, holderId: 'agent-1', clockSkewMillis: 100 });
    const acquired = await client.acquire('deploy-slot-b');
    if (!acquired.ok) throw new Error(`expected a grant, got ${acquired.reason}`);

    // Act
    // #region signed-gate
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${baseUrl}/v1/keys` } });
    const slot = new FenceGate('deploy-slot-b');
    // the agent sends lease.signedToken with its write; the gate takes the fence from it, once verified
    const deploy = (signedToken: string) => commitVerified(slot, verifier, signedToken, () => applyDeployment(signedToken));
    // #endregion
    await deploy(acquired.lease.signedToken);
    const [header, payload, signature] = acquired.lease.signedToken.split('.');
    const raised = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), fence: 99 })).toString('base64url');
    const forged = await deploy(`${header}.${raised}.${signature}`).catch((error: unknown) => error);

    // Assert
    expect(applied).toEqual([acquired.lease.signedToken]);
    expect(forged).toBeInstanceOf(InvalidFenceTokenError);
    expect(slot.floor).toEqual({ holderId: 'agent-1', fence: acquired.lease.fence });
    expect(verifier.stats).toMatchObject({ verified: 1, invalid: 1, invalidByReason: { 'bad-signature': 1 } });
  });

  it('is quoted verbatim by the README', async () => {
    // Arrange
    const spec = await readFile(new URL(import.meta.url), 'utf8');
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const region = (name: string): string => {
      const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)\\n\\s*// #endregion`).exec(spec);
      if (match?.[1] === undefined) throw new Error(`no region ${name}`);
      const lines = match[1].split('\n');
      const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length));
      return lines.map((line) => line.slice(indent)).join('\n');
    };

    // Act / Assert
    expect(readme).toContain(region('quickstart'));
    expect(readme).toContain(region('resource'));
    expect(readme).toContain(region('signed-gate'));
  });
});
