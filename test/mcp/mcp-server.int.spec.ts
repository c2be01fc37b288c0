/**
 * The MCP server, black-box: the BUILT `lease-fence mcp` (apps/cli/dist/main.js) driven by the
 * official SDK's own `Client` over stdio, against the BUILT coordinator and the BUILT
 * `lease-fence-gate` sidecar in front of a recording upstream.
 *
 * Two agents (two MCP sessions, two agent tokens) contend for one resource. agent-1 stalls past
 * its TTL deterministically: its coordinator traffic goes through a proxy that never answers a
 * renewal, and its write is held by a valve in front of the gate (the stall between the check and
 * the write that fencing exists for). agent-2 acquires once agent-1's lease expired and writes;
 * then the valve opens, and agent-1's late write is refused by the gate in plain words, never
 * reaches the upstream, and is in the coordinator's log.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EventsReplySchema, LeasesReplySchema, RejectionsReplySchema } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, gateBuilt, startGate, type GateProcess } from '../gate/support/gate-process.js';
import {
  startHoldingProxy,
  startRecordingUpstream,
  type RecordingUpstream,
} from '../gate/support/recording-upstream.js';
import {
  ROOT,
  coordinatorBuilt,
  startCoordinator,
  type CoordinatorProcess,
} from '../sdk/support/coordinator-process.js';
import { stopByPid } from '../support/stop-by-pid.js';
import { runCli } from '../cli/support/cli-process.js';

const CLI_MAIN = join(ROOT, 'apps/cli/dist/main.js');
const RESOURCE = 'deploy-mcp';
const OWN = '/.well-known/lease-fence-gate';

/** The tool names the issue fixes. */
const TOOL_NAMES = [
  'acquire_lease',
  'renew_lease',
  'release_lease',
  'who_holds',
  'list_rejections',
  'explain_rejection',
  'fenced_request',
];

/** One agent: an MCP client connected over stdio to its own `lease-fence mcp` process. */
interface Agent {
  readonly client: Client;
  readonly notices: string[];
  /** What the server process wrote on stderr so far. */
  stderr(): string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }>;
  close(): Promise<void>;
}

const startAgent = async (coordinatorUrl: string, token: string): Promise<Agent> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_MAIN, 'mcp'],
    env: { PATH: process.env.PATH ?? '', LEASE_FENCE_URL: coordinatorUrl, LEASE_FENCE_AGENT_TOKEN: token },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const notices: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    notices.push(String(notification.params.data));
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  await client.connect(transport);
  return {
    client,
    notices,
    stderr: () => stderr,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      return { ...result, text };
    },
    close: () => client.close(),
  };
};

const cliBuilt = (): boolean => existsSync(CLI_MAIN);

describe.skipIf(!coordinatorBuilt() || !gateBuilt() || !cliBuilt())(
  'lease-fence mcp (built) with the SDK client',
  () => {
    let coordinator: CoordinatorProcess;
    let upstream: RecordingUpstream;
    let gate: GateProcess;
    let renewalsBlocked: Awaited<ReturnType<typeof startHoldingProxy>>;
    let valve: Awaited<ReturnType<typeof startHoldingProxy>>;
    let dataDir: string;
    const agents: Agent[] = [];

    beforeAll(async () => {
      coordinator = await startCoordinator({ env: { LEASE_FENCE_MIN_TTL_MILLIS: '100' } });
      upstream = await startRecordingUpstream();
      dataDir = await mkdtemp(join(tmpdir(), 'mcp-gate-'));
      gate = await startGate({
        LEASE_FENCE_GATE_RESOURCE: RESOURCE,
        LEASE_FENCE_GATE_UPSTREAM: upstream.url,
        LEASE_FENCE_COORDINATOR_URL: coordinator.url,
        LEASE_FENCE_GATE_TOKEN: 'gate-token',
        LEASE_FENCE_DATA_DIR: dataDir,
      });
      await eventually('the gate to be ready', async () => (await fetch(`${gate.url}${OWN}/readyz`)).status === 200);
      renewalsBlocked = await startHoldingProxy(coordinator.url, /\/renew$/);
      valve = await startHoldingProxy(gate.url, /^\/deployments\//, ['lease-fence-token', 'content-type']);
    });

    afterAll(async () => {
      for (const agent of agents) await agent.close().catch(() => undefined);
      await valve?.close();
      await renewalsBlocked?.close();
      await gate?.stop();
      await upstream?.close();
      await coordinator?.stop();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    });

    const viewerGet = async <T>(path: string, schema: { parse(data: unknown): T }): Promise<T> =>
      schema.parse(
        await (await fetch(`${coordinator.url}${path}`, { headers: { authorization: 'Bearer viewer-token' } })).json(),
      );
    const fenceIn = (text: string): number => Number(/with fence (\d+)/.exec(text)?.[1]);

    it('lists exactly the tools of the issue, and refuses bad input naming the field', async () => {
      const agent = await startAgent(coordinator.url, 'agent-3-token');
      agents.push(agent);
      const { tools } = await agent.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      for (const tool of tools) expect(tool.description?.length ?? 0).toBeGreaterThan(40);

      const badTtl = await agent.call('acquire_lease', { resource: RESOURCE, ttlMillis: -5 });
      expect(badTtl.isError).toBe(true);
      expect(badTtl.text).toMatch(/ttlMillis/);
      const badResource = await agent.call('acquire_lease', { resource: '' });
      expect(badResource.isError).toBe(true);
      expect(badResource.text).toMatch(/resource/);
      const badUrl = await agent.call('fenced_request', { resource: RESOURCE, method: 'POST', url: 'not a url' });
      expect(badUrl.isError).toBe(true);
      expect(badUrl.text).toMatch(/url/);
      // nothing was acquired by any of them
      const { leases } = await viewerGet('/v1/leases', LeasesReplySchema);
      expect(leases.filter((lease) => lease.holderId === 'agent-3')).toEqual([]);
    });

    it('refuses a who_holds position past the end of the log or a time in the future, naming the field, rather than guessing', async () => {
      const agent = await startAgent(coordinator.url, 'agent-3-token');
      agents.push(agent);
      const acquired = await agent.call('acquire_lease', { resource: 'deploy-mcp-when', ttlMillis: 60_000 });
      expect(acquired.text).toMatch(/^acquired deploy-mcp-when /);

      const position = await agent.call('who_holds', { resource: 'deploy-mcp-when', atPosition: 1_000_000 });
      expect(position.isError).toBe(true);
      expect(position.text).toMatch(/^atPosition: the log has no event at 1000000 \(it ends at position \d+\)/);

      // agent-3 holds it, renewed in the background: a guess for 2099 ("nobody held it") is wrong.
      const future = await agent.call('who_holds', { resource: 'deploy-mcp-when', atTime: '2099-01-01T00:00:00Z' });
      expect(future.isError).toBe(true);
      expect(future.text).toMatch(/^atTime: 2099-01-01T00:00:00Z is in the future/);
      expect(future.text).toContain('without atTime');
    });

    it("says on stderr why a stdio session ended when the client sent a message over the SDK's 10 MiB limit", async () => {
      const agent = await startAgent(coordinator.url, 'agent-4-token');
      agents.push(agent);
      await agent.call('acquire_lease', { resource: 'deploy-mcp-big', ttlMillis: 60_000 });

      const tooBig = agent.call('fenced_request', {
        resource: 'deploy-mcp-big',
        method: 'POST',
        url: `${gate.url}/deployments/big`,
        body: 'x'.repeat(11 * 1024 * 1024),
      });

      await expect(tooBig).rejects.toThrow();
      await eventually('the reason on stderr', () => agent.stderr().includes('session ended'));
      expect(agent.stderr()).toMatch(
        /lease-fence mcp: session ended: a message from the MCP client could not be read \(ReadBuffer exceeded maximum size of 10485760 bytes\); its leases were released/,
      );
      const { leases } = await viewerGet('/v1/leases', LeasesReplySchema);
      expect(leases.filter((lease) => lease.resource === 'deploy-mcp-big')).toEqual([]);
    });

    it('releases its leases when the client died mid-call (its answer cannot be written: EPIPE), not at the TTL', async () => {
      const child = spawn(process.execPath, [CLI_MAIN, 'mcp'], {
        env: {
          PATH: process.env.PATH ?? '',
          LEASE_FENCE_URL: coordinator.url,
          LEASE_FENCE_AGENT_TOKEN: 'agent-4-token',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      try {
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const answers = createInterface({ input: child.stdout });
        const answered = (id: number) =>
          new Promise<void>((resolve) =>
            answers.on('line', (line) => {
              if ((JSON.parse(line) as { id?: number }).id === id) resolve();
            }),
          );
        const send = (message: unknown): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
        const initialized = answered(1);
        send({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        });
        await initialized;
        send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        const acquired = answered(2);
        send({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'acquire_lease', arguments: { resource: 'deploy-mcp-gone', ttlMillis: 60_000 } },
        });
        await acquired;

        // The agent dies with a call in flight: its end of the pipes closes before the answer is written.
        send({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'who_holds', arguments: { resource: 'deploy-mcp-gone' } },
        });
        answers.close();
        child.stdout.destroy();
        child.stdin.end();
        await new Promise((resolve) => child.once('exit', resolve));

        const { leases } = await viewerGet('/v1/leases', LeasesReplySchema);
        expect(leases.filter((lease) => lease.resource === 'deploy-mcp-gone')).toEqual([]);
        expect(stderr).not.toContain('    at ');
      } finally {
        await stopByPid(child, 'SIGKILL');
      }
    });

    it('two agents contend; the stalled one is refused at the gate in plain words, and the refusal is logged', async () => {
      const stalled = await startAgent(renewalsBlocked.url, 'agent-1-token');
      const other = await startAgent(coordinator.url, 'agent-2-token');
      agents.push(stalled, other);

      // agent-1 takes the lease; agent-2 is told who holds it.
      const first = await stalled.call('acquire_lease', { resource: RESOURCE, ttlMillis: 2000 });
      expect(first.text).toMatch(/^acquired deploy-mcp with fence \d+/);
      const fence1 = fenceIn(first.text);
      const denied = await other.call('acquire_lease', { resource: RESOURCE, ttlMillis: 60_000 });
      expect(denied.text).toMatch(/^not acquired: deploy-mcp is held by agent-1\./);

      // agent-1 writes while its lease is live; the write stalls in the valve, and its renewals never land.
      const late = stalled.call('fenced_request', {
        resource: RESOURCE,
        method: 'POST',
        url: `${valve.url}/deployments/late`,
        body: '{"version":"stale"}',
      });
      await eventually('agent-1 write to reach the valve', () => valve.held === 1);

      // agent-2 waits until agent-1's lease expired at the coordinator, takes it, and writes.
      const second = await other.call('acquire_lease', { resource: RESOURCE, ttlMillis: 60_000, waitMillis: 30_000 });
      expect(second.text).toMatch(/^acquired deploy-mcp with fence \d+/);
      const fence2 = fenceIn(second.text);
      expect(fence2).toBeGreaterThan(fence1);
      const fresh = await other.call('fenced_request', {
        resource: RESOURCE,
        method: 'POST',
        url: `${gate.url}/deployments/fresh`,
        body: '{"version":"fresh"}',
      });
      expect(fresh.isError).toBeFalsy();
      expect(fresh.text).toMatch(/^200/);
      expect(upstream.received.filter((r) => r.url === '/deployments/fresh')).toHaveLength(1);
      // The token goes only to the gate that guards the resource: the service itself is not sent it.
      const direct = await other.call('fenced_request', {
        resource: RESOURCE,
        method: 'POST',
        url: `${upstream.url}/deployments/direct`,
      });
      expect(direct.isError).toBe(true);
      expect(direct.text).toMatch(/^not sent: .* not a lease-fence-gate's readiness/);
      expect(upstream.received.filter((r) => r.url === '/deployments/direct')).toEqual([]);

      // The valve opens: agent-1's late write reaches the gate and is refused.
      valve.release();
      const refused = await late;
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain(
        `refused: your fence ${fence1} is older than the resource's floor ${fence2} held by agent-2 since `,
      );
      expect(upstream.received.filter((r) => r.url === '/deployments/late')).toEqual([]);
      // The refusal gives the gate's seq, not a log position: it says where the position is, and
      // explain_rejection does not send the agent to the refusal for one.
      expect(refused.text).toMatch(/the gate recorded the refusal \(its seq \d+, not a log position: list_rejections/);
      const { tools } = await stalled.client.listTools();
      expect(tools.find((tool) => tool.name === 'explain_rejection')?.description).toMatch(
        /fenced_request refusal gives the gate's seq, which is not a log position/,
      );

      // The refusal is in the coordinator's log.
      await eventually('the refusal in GET /v1/rejections', async () => {
        const { rejections } = await viewerGet('/v1/rejections', RejectionsReplySchema);
        return rejections.some(
          (r) =>
            r.resource === RESOURCE &&
            r.rejected.holderId === 'agent-1' &&
            r.rejected.fence === fence1 &&
            r.current.holderId === 'agent-2' &&
            r.current.fence === fence2,
        );
      });

      // agent-1 was told of the loss: as a notification, and in a tool result.
      await eventually('the lost-lease notification', () => stalled.notices.some((n) => n.startsWith('LEASE LOST')));
      expect(stalled.notices.find((n) => n.startsWith('LEASE LOST'))).toContain(`deploy-mcp (fence ${fence1})`);
      expect(refused.text + (await stalled.call('who_holds', { resource: RESOURCE })).text).toContain(
        `LEASE LOST: your lease on deploy-mcp (fence ${fence1})`,
      );
      // A later write with the lost lease is not even sent.
      const again = await stalled.call('fenced_request', {
        resource: RESOURCE,
        method: 'POST',
        url: `${gate.url}/deployments/again`,
      });
      expect(again.isError).toBe(true);
      expect(again.text).toMatch(/^not sent: your lease on deploy-mcp \(fence \d+\) was lost/);
      expect(upstream.received.filter((r) => r.url === '/deployments/again')).toEqual([]);

      // Reads: who holds it now, the refusal listed, and explained by the dashboard's sentence.
      expect((await stalled.call('who_holds', { resource: RESOURCE })).text).toContain(
        `deploy-mcp is held by agent-2 with fence ${fence2}`,
      );
      const listed = await other.call('list_rejections', { resource: RESOURCE });
      const position = Number(/^position (\d+): deploy-mcp: agent-1's fence/m.exec(listed.text)?.[1]);
      expect(position).toBeGreaterThan(0);
      const explained = await other.call('explain_rejection', { position });
      expect(explained.isError).toBeFalsy();
      expect(explained.text).toMatch(
        new RegExp(`^agent-1 wrote to deploy-mcp with fence ${fence1} .*agent-2.*refused`),
      );

      // Who held it when the refusal was recorded: the log's answer.
      expect((await other.call('who_holds', { resource: RESOURCE, atPosition: position })).text).toMatch(
        new RegExp(`^at log position ${position}, deploy-mcp was held by agent-2 with fence ${fence2} \\(from `),
      );

      // Ending agent-2's session releases its lease (its TTL is 60 s, so only the release frees it).
      await other.close();
      await eventually('agent-2 lease released at session end', async () => {
        const { leases } = await viewerGet('/v1/leases', LeasesReplySchema);
        return !leases.some((lease) => lease.resource === RESOURCE);
      });
      const { events } = await viewerGet('/v1/events?after=0&limit=10000', EventsReplySchema);
      expect(
        events.some(
          (e) =>
            e.event.type === 'LeaseReleased' && e.event.data.resource === RESOURCE && e.event.data.fence === fence2,
        ),
      ).toBe(true);
    });

    it.each([
      // The coordinator's own port: in use. A user's first --port is often one already taken.
      [(url: string) => ['--port', new URL(url).port], /^lease-fence: --port \d+: 127\.0\.0\.1:\d+ is in use/m],
      [() => ['--host', 'no-such-host.invalid', '--port', '0'], /^lease-fence: --host no-such-host\.invalid: /m],
    ])('exits 64 in words, not 70 with a stack, when --http cannot listen (%#)', async (flags, message) => {
      const result = await runCli(['mcp', '--http', ...flags(coordinator.url)], {
        LEASE_FENCE_URL: coordinator.url,
        LEASE_FENCE_AGENT_TOKEN: 'agent-4-token',
      });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('    at ');
      expect(result.code).toBe(64);
    });

    it.each([
      [['--port', '3300'], '--port'],
      [['--host', '0.0.0.0', '--max-sessions', '5'], '--host, --max-sessions'],
    ])('exits 64 naming %j when HTTP flags come without --http (stdio would ignore them)', async (flags, named) => {
      const result = await runCli(['mcp', ...flags], {
        LEASE_FENCE_URL: coordinator.url,
        LEASE_FENCE_AGENT_TOKEN: 'agent-4-token',
      });
      expect(result.stderr).toContain(`lease-fence: ${named}: only with --http`);
      expect(result.code).toBe(64);
    });

    it('answers initialize over Streamable HTTP on 127.0.0.1, and releases at the end of the session', async () => {
      const child = spawn(process.execPath, [CLI_MAIN, 'mcp', '--http', '--port', '0', '--host', '127.0.0.1'], {
        env: {
          PATH: process.env.PATH ?? '',
          LEASE_FENCE_URL: coordinator.url,
          LEASE_FENCE_AGENT_TOKEN: 'agent-4-token',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stderr }).on('line', (line) => {
            const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(line);
            if (match?.[1] !== undefined) resolve(match[1]);
          });
          child.once('exit', (code) => reject(new Error(`lease-fence mcp --http exited with ${String(code)}`)));
        });
        const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(url));
        await client.connect(transport);
        expect(client.getServerVersion()?.name).toBe('lease-fence');
        expect(transport.sessionId).toBeTruthy();
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
        // A lease taken in the session is released when the client deletes the session.
        const acquired = (await client.callTool({
          name: 'acquire_lease',
          arguments: { resource: 'deploy-http', ttlMillis: 60_000 },
        })) as CallToolResult;
        expect(acquired.content[0]).toMatchObject({ text: expect.stringMatching(/^acquired deploy-http with fence/) });
        await transport.terminateSession();
        await eventually('the HTTP session lease released', async () => {
          const { leases } = await viewerGet('/v1/leases', LeasesReplySchema);
          return !leases.some((lease) => lease.resource === 'deploy-http');
        });
        await client.close();
      } finally {
        await stopByPid(child, 'SIGTERM');
      }
    });
  },
);
