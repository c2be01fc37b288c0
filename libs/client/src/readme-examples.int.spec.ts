/**
 * The SDK examples of `docs/sdk.md` and this package's README, run against the coordinator test
 * double (the gate-link example runs in `gate-link.spec.ts`). The docs quote the `#region` blocks
 * of both files verbatim, after their import lines; the last test fails when they drift apart or
 * an import names something the package does not export.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGate, StaleFenceError, type FenceToken } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { openFileFloorStore } from './file-floor-store.js';
import { commitVerified, FenceTokenVerifier, InvalidFenceTokenError } from './fence-token-verifier.js';
import { commitDurably, gateOptionsFrom } from './floor-store.js';
import { LeaseFenceClient } from './lease-fence-client.js';
import { reportRejections } from './rejection-reporter.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

describe('SDK documentation examples', () => {
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
    const store = await openFileFloorStore({
      path: join(dataDir, 'deploy-slot-a.floor.json'),
      resource: 'deploy-slot-a',
    });
    const gate = new FenceGate('deploy-slot-a', gateOptionsFrom(await store.load())); // floor + next seq (none on the first start)

    // drains the store's outbox of refusals in seq order, until each is acknowledged; resumes after a restart
    const reporter = reportRejections(store, new FenceGateClient({ baseUrl, token: gateToken }));

    // every write: check and raise the floor, make it durable, then write. A refused write is saved
    // in the outbox (with its seq, in the same atomic write) before StaleFenceError reaches the caller.
    const write = (token: FenceToken) => commitDurably(gate, store, token, () => applyDeployment(token));
    // #endregion
    await write({ resource: 'deploy-slot-a', holderId: 'agent-2', fence: 2 });
    await expect(write({ resource: 'deploy-slot-a', holderId: 'agent-1', fence: 1 })).rejects.toThrow(StaleFenceError);
    await reporter.flush();
    await reporter.close();

    // Assert
    expect(applied).toEqual([2]);
    expect(double.rejections).toHaveLength(1);
    const reopened = await openFileFloorStore({
      path: join(dataDir, 'deploy-slot-a.floor.json'),
      resource: 'deploy-slot-a',
    });
    const restored = await reopened.load();
    expect(restored?.floor).toEqual({ fence: 2, holderId: 'agent-2' });
    expect(restored).toMatchObject({ nextSeq: 2, reportedThroughSeq: 1, outbox: [] }); // the acknowledged refusal is remembered across a restart
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
    const deploy = (token: string) => commitVerified(slot, verifier, token, () => applyDeployment(token));
    // #endregion
    await deploy(acquired.lease.signedToken);
    const [header, payload, signature] = acquired.lease.signedToken.split('.');
    const raised = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), fence: 99 }),
    ).toString('base64url');
    const forged = await deploy(`${header}.${raised}.${signature}`).catch((error: unknown) => error);

    // Assert
    expect(applied).toEqual([acquired.lease.signedToken]);
    expect(forged).toBeInstanceOf(InvalidFenceTokenError);
    expect(slot.floor).toEqual({ holderId: 'agent-1', fence: acquired.lease.fence });
    expect(verifier.stats).toMatchObject({ verified: 1, invalid: 1, invalidByReason: { 'bad-signature': 1 } });
  });

  it('is quoted verbatim, imports included, by the SDK guide and this package README', async () => {
    // Arrange
    const spec =
      (await readFile(new URL(import.meta.url), 'utf8')) +
      (await readFile(new URL('./gate-link.spec.ts', import.meta.url), 'utf8'));
    const guide = await readFile(new URL('../../../docs/sdk.md', import.meta.url), 'utf8');
    const packageReadme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const region = (name: string): string => {
      const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)\\n\\s*// #endregion`).exec(spec);
      if (match?.[1] === undefined) throw new Error(`no region ${name}`);
      const lines = match[1].split('\n');
      const indent = Math.min(
        ...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length),
      );
      return lines.map((line) => line.slice(indent)).join('\n');
    };
    /** The import statements of the ```ts block of `markdown` that ends with `body` (the rest is `body`, verbatim). */
    const quoted = (markdown: string, body: string): { imports: string[] } => {
      const block = [...markdown.matchAll(/```ts\n([\s\S]*?)\n```/g)]
        .map((match) => match[1]!)
        .find((code) => code.endsWith(body));
      if (block === undefined) throw new Error(`no \`\`\`ts block ends with:\n${body}`);
      const head = block.slice(0, block.length - body.length);
      // One entry per import statement, however Prettier wrapped it: `import { a, b } from 'm';`.
      const statements = head.split(';').map((statement) => statement.replace(/\s+/g, ' ').replace(/,\s*\}/, ' }'));
      return {
        imports: statements.filter((statement) => statement.trim() !== '').map((statement) => `${statement.trim()};`),
      };
    };
    /** The values (not the types) that `line` imports, and whether the module exports each. */
    const missingExports = async (line: string): Promise<string[]> => {
      const match = /^import \{ (.+) \} from '([^']+)';$/.exec(line);
      if (match === null) return [`not a named import: ${line}`];
      const modules: Record<string, () => Promise<Record<string, unknown>>> = {
        '@lease-fence/client': () => import('./index.js'),
        'lease-fence': () => import('lease-fence'),
        'node:path': () => import('node:path'),
      };
      const load = modules[match[2]!];
      if (load === undefined) return [`unexpected module ${match[2]}`];
      const exported = await load();
      const names = match[1]!.split(', ').filter((name) => !name.startsWith('type '));
      return names.filter((name) => !(name in exported)).map((name) => `${match[2]} has no export ${name}`);
    };

    // Act
    const quotes = [
      quoted(guide, region('quickstart')),
      quoted(guide, region('resource')),
      quoted(guide, region('signed-gate')),
      quoted(guide, region('gate-link')),
      quoted(packageReadme, region('quickstart')),
    ];
    const problems = (await Promise.all(quotes.flatMap((quote) => quote.imports.map(missingExports)))).flat();

    // Assert: each block is its region verbatim, preceded by imports of names that exist
    expect(quotes.every((quote) => quote.imports.length > 0)).toBe(true);
    expect(problems).toEqual([]);
  });
});
