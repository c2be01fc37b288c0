/**
 * Black-box tests of the inspection commands (`holders`, `events`, `rejections`, `explain`): the
 * BUILT bin against the BUILT coordinator, on a log with two generations of one resource and one
 * refused write reported by a gate.
 */
import { spawnSync } from 'node:child_process';
import { formatWallTime, investigate, ViewHistory } from '@lease-fence/dashboard-model';
import type { RecordedEvent } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { eventually } from '../support/eventually.js';
import { CLI_MAIN, runCli, startCli } from './support/cli-process.js';

const RESOURCE = 'deploy-cli';
/** A resource whose one refusal the gate reported two minutes after it made it (its outbox delivered it late). */
const LATE_RESOURCE = 'deploy-cli-late';
const LATE_BY_MILLIS = 120_000;
let app: RunningCoordinator;
let env: Record<string, string>;
let first: { fence: number; position: number };
let second: { fence: number };
let rejectionPosition: number;
let lateGateWallMillis: number;

const post = async (token: string, path: string, json: unknown): Promise<unknown> => {
  const reply = await call(app.url, 'POST', path, { token, json });
  if (reply.status >= 300) throw new Error(`${path}: HTTP ${reply.status} ${reply.text}`);
  return reply.body;
};
const readLog = async (): Promise<RecordedEvent[]> =>
  (await call<{ events: RecordedEvent[] }>(app.url, 'GET', '/v1/events?after=0', { token: TEST_TOKENS.viewer.token }))
    .body.events;

beforeAll(async () => {
  app = await startCoordinator();
  env = { LEASE_FENCE_URL: app.url, LEASE_FENCE_AGENT_TOKEN: TEST_TOKENS.viewer.token };
  const { agentA, agentB, gate } = TEST_TOKENS;
  const a = (await post(agentA.token, `/v1/leases/${RESOURCE}/acquire`, { requestId: 'cli-a-1' })) as {
    grant: { fence: number };
  };
  await post(agentA.token, `/v1/leases/${RESOURCE}/release`, { fence: a.grant.fence });
  const b = (await post(agentB.token, `/v1/leases/${RESOURCE}/acquire`, {
    requestId: 'cli-b-1',
    ttlMillis: 600_000,
  })) as {
    grant: { fence: number };
  };
  await post(gate.token, `/v1/resources/${RESOURCE}/rejections`, {
    seq: 1,
    resource: RESOURCE,
    rejected: { holderId: agentA.holderId, fence: a.grant.fence },
    current: { holderId: agentB.holderId, fence: b.grant.fence },
  });
  const lateA = (await post(agentA.token, `/v1/leases/${LATE_RESOURCE}/acquire`, { requestId: 'cli-late-a-1' })) as {
    grant: { fence: number };
  };
  await post(agentA.token, `/v1/leases/${LATE_RESOURCE}/release`, { fence: lateA.grant.fence });
  const lateB = (await post(agentB.token, `/v1/leases/${LATE_RESOURCE}/acquire`, { requestId: 'cli-late-b-1' })) as {
    grant: { fence: number };
  };
  lateGateWallMillis = Date.now() - LATE_BY_MILLIS;
  await post(gate.token, `/v1/resources/${LATE_RESOURCE}/rejections`, {
    seq: 1,
    resource: LATE_RESOURCE,
    rejected: { holderId: agentA.holderId, fence: lateA.grant.fence },
    current: { holderId: agentB.holderId, fence: lateB.grant.fence },
    wallMillis: lateGateWallMillis,
  });
  await post(agentB.token, `/v1/leases/${LATE_RESOURCE}/release`, { fence: lateB.grant.fence });
  const log = await readLog();
  const granted = log.find((e) => e.event.type === 'LeaseGranted' && e.event.data.fence === a.grant.fence);
  first = { fence: a.grant.fence, position: granted?.position ?? 0 };
  second = { fence: b.grant.fence };
  rejectionPosition = log.find((e) => e.event.type === 'FenceRejected')?.position ?? 0;
});

afterAll(async () => {
  await app?.cleanup();
});

describe('lease-fence holders', () => {
  it('lists the current holders as JSON, and as a table', async () => {
    const json = await runCli(['holders', '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      holders: [{ resource: RESOURCE, holderId: 'agent-b', fence: second.fence, ttlMillis: 600_000, inGrace: false }],
    });

    const table = await runCli(['holders'], env);
    expect(table.stdout.split('\n')[0]).toMatch(/^RESOURCE\s+HOLDER\s+FENCE\s+TTL\s+IN GRACE$/);
    expect(table.stdout).toMatch(new RegExp(`${RESOURCE}\\s+agent-b\\s+${second.fence}\\s+10 min 0 s\\s+no`));
  });

  it('answers for a past log position, from the log', async () => {
    const result = await runCli(['holders', '--at', String(first.position), '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      at: String(first.position),
      holders: [{ resource: RESOURCE, holderId: 'agent-a', fence: first.fence }],
    });
  });

  it('exits 64 naming --at for a position past the end of the log, as explain does (it answered with the current holders)', async () => {
    const result = await runCli(['holders', '--at', '99999999'], env);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^lease-fence: --at: the log has no event at 99999999 \(it ends at position \d+\)$/m);
    expect(result.stdout).toBe('');
  });

  it('exits 64 naming --at for a time in the future (it printed "no resource is held" while agent-b held one)', async () => {
    const result = await runCli(['holders', '--at', '2099-01-01T00:00:00Z'], env);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(
      /^lease-fence: --at: 2099-01-01T00:00:00Z is in the future \(it is .* by this host's clock\): the log tells who held a resource, not who will; leave --at out for the holders now$/m,
    );
    expect(result.stdout).toBe('');
  });

  it('exits 64 naming --at for a value that is neither a time nor a position', async () => {
    const result = await runCli(['holders', '--at', 'yesterday'], env);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--at: must be an ISO 8601 time');
  });
});

describe('lease-fence rejections and explain', () => {
  it('lists the refused write as JSON, filtered by resource', async () => {
    const result = await runCli(['rejections', '--resource', RESOURCE, '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      rejections: [
        {
          position: rejectionPosition,
          resource: RESOURCE,
          gateId: 'gate-1',
          kind: 'stale',
          rejected: { holderId: 'agent-a', fence: first.fence },
          current: { holderId: 'agent-b', fence: second.fence },
        },
      ],
    });
    const other = await runCli(['rejections', '--resource', 'db', '--json'], env);
    expect(JSON.parse(other.stdout)).toEqual({ rejections: [] });
  });

  it('says in the table, as the dashboard and explain do, that a refusal was reported late and when the gate refused it', async () => {
    const table = await runCli(['rejections'], env);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^POSITION\s+TIME\s+RESOURCE\s+GATE\s+SEQ\s+KIND\s+REFUSED\s+GATE HAD$/);
    const late = rows.find((row) => row.includes(LATE_RESOURCE));
    expect(late).toContain(
      `reported late: the gate refused it at ${formatWallTime(lateGateWallMillis)} by its own clock`,
    );
    const onTime = rows.find((row) => row.includes(` ${RESOURCE} `));
    expect(onTime).toBeDefined();
    expect(onTime).not.toContain('reported late');
    // The gate's seq, as the writer's 409 and the dashboard's table give it, to match one refusal to one row
    expect(onTime).toMatch(
      new RegExp(`^${rejectionPosition}\\s.* ${RESOURCE}\\s+gate-1\\s+1\\s+stale\\s+agent-a fence ${first.fence}\\s`),
    );
  });

  it('explains it with the sentence the dashboard gives', async () => {
    const history = new ViewHistory();
    for (const recorded of await readLog()) if (recorded.position <= rejectionPosition) history.append(recorded);
    const dashboard = investigate(history, rejectionPosition);
    if (!dashboard.ok) throw new Error(`no investigation: ${dashboard.reason}`);

    const text = await runCli(['explain', String(rejectionPosition)], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`${dashboard.investigation.explanation}\n`);
    expect(text.stdout).toContain(`agent-a wrote to ${RESOURCE} with fence ${first.fence}`);

    const json = await runCli(['explain', String(rejectionPosition), '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({
      position: rejectionPosition,
      resource: RESOURCE,
      kind: 'stale',
      explanation: dashboard.investigation.explanation,
    });
  });

  it('exits 64 for a position that is not a refused write, or not in the log', async () => {
    const grant = await runCli(['explain', String(first.position)], env);
    expect(grant.code).toBe(64);
    expect(grant.stderr).toContain(`the event at ${first.position} is a LeaseGranted, not a FenceRejected`);
    const beyond = await runCli(['explain', '999999'], env);
    expect(beyond.code).toBe(64);
    expect(beyond.stderr).toContain('the log has no event at 999999');
    expect((await runCli(['explain', 'abc'], env)).stderr).toContain('<position>: must be a log position');
  });
});

describe('lease-fence events', () => {
  it('prints the log as one JSON document from --from', async () => {
    const result = await runCli(['events', '--from', String(first.position), '--json'], env);
    expect(result.code).toBe(0);
    const { events, head } = JSON.parse(result.stdout) as { events: RecordedEvent[]; head: number };
    expect(events[0]?.position).toBe(first.position);
    expect(events.map((e) => e.event.type)).toEqual(
      expect.arrayContaining(['LeaseGranted', 'LeaseReleased', 'FenceRejected']),
    );
    expect(head).toBeGreaterThanOrEqual(rejectionPosition);
  });

  it('--follow prints new events as JSON lines until interrupted', async () => {
    const cli = startCli(['events', '--follow', '--json', '--from', String(rejectionPosition)], env);
    const seen = JSON.parse(await cli.waitForLine((line) => line.includes('FenceRejected'))) as RecordedEvent;
    expect(seen.position).toBe(rejectionPosition);

    await post(TEST_TOKENS.agentA.token, '/v1/leases/cli-follow/acquire', { requestId: 'cli-follow-1' });
    const live = JSON.parse(await cli.waitForLine((line) => line.includes('cli-follow'))) as RecordedEvent;
    expect(live.event).toMatchObject({ type: 'LeaseGranted', data: { resource: 'cli-follow', holderId: 'agent-a' } });

    process.kill(cli.pid, 'SIGINT');
    expect((await cli.exited).code).toBe(0);
  });

  it('--follow without --from prints only events logged from now on, and says where it starts', async () => {
    const cli = startCli(['events', '--follow', '--json'], env);
    await eventually('the follow to start', () => cli.stderr().includes('following the log after position'));

    await post(TEST_TOKENS.agentA.token, '/v1/leases/cli-follow-new/acquire', { requestId: 'cli-follow-new-1' });
    await cli.waitForLine((line) => line.includes('cli-follow-new'));

    const startedAfter = Number(/following the log after position (\d+)/.exec(cli.stderr())?.[1]);
    const printed = cli.lines.map((line) => JSON.parse(line) as RecordedEvent);
    expect(startedAfter).toBeGreaterThan(0);
    expect(printed.every((recorded) => recorded.position > startedAfter)).toBe(true);
    expect(printed.map((recorded) => recorded.event.type)).toContain('LeaseGranted');
    process.kill(cli.pid, 'SIGINT');
    expect((await cli.exited).code).toBe(0);
  });

  it('ends quietly with exit 0 when its reader goes away (| head)', async () => {
    const result = spawnSync(
      'sh',
      ['-c', `node ${JSON.stringify(CLI_MAIN)} events --json --follow --from 1 | head -c 1`],
      {
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(result.stderr).not.toContain('EPIPE');
  });

  it('exits 77 when the token is refused', async () => {
    const result = await runCli(['events', '--token', 'not-a-listed-token'], { LEASE_FENCE_URL: app.url });
    expect(result.code).toBe(77);
    expect(result.stderr).toContain(`the coordinator at ${app.url} refused the token from --token (HTTP 401)`);
  });
});
