/**
 * `lease-fence rejections` after a refusal storm, black-box (the BUILT bin and the BUILT
 * coordinator): the coordinator keeps only the most recent refusals of all resources for
 * `GET /v1/rejections`, so one resource's storm pushes another's older refusals out of that list,
 * although the log still holds them. The CLI must not then say a resource has no refused writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/coordinator-http.js';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { runCli } from './support/cli-process.js';

/** The resource refused once, before the storm. */
const QUIET = 'deploy-quiet';
/** The resource of the storm. */
const STORMY = 'deploy-stormy';
/** Refusals of the storm: more than the coordinator keeps for the list. */
const STORM_REFUSALS = 1001;

let app: RunningCoordinator;
let env: Record<string, string>;

const post = async (token: string, path: string, json: unknown): Promise<unknown> => {
  const reply = await call(app.url, 'POST', path, { token, json });
  if (reply.status >= 300) throw new Error(`${path}: HTTP ${reply.status} ${reply.text}`);
  return reply.body;
};
/** agent-a's lease on `resource` handed over to agent-b: the fences a refusal of agent-a's write names. */
const handedOver = async (resource: string): Promise<{ old: number; current: number }> => {
  const { agentA, agentB } = TEST_TOKENS;
  const a = (await post(agentA.token, `/v1/leases/${resource}/acquire`, { requestId: `${resource}-a` })) as {
    grant: { fence: number };
  };
  await post(agentA.token, `/v1/leases/${resource}/release`, { fence: a.grant.fence });
  const b = (await post(agentB.token, `/v1/leases/${resource}/acquire`, {
    requestId: `${resource}-b`,
    ttlMillis: 600_000,
  })) as { grant: { fence: number } };
  return { old: a.grant.fence, current: b.grant.fence };
};
const refuse = (resource: string, fences: { old: number; current: number }, seq: number): Promise<unknown> =>
  post(TEST_TOKENS.gate.token, `/v1/resources/${resource}/rejections`, {
    seq,
    resource,
    rejected: { holderId: TEST_TOKENS.agentA.holderId, fence: fences.old },
    current: { holderId: TEST_TOKENS.agentB.holderId, fence: fences.current },
  });

beforeAll(async () => {
  app = await startCoordinator({ env: { LEASE_FENCE_EVENT_LOG: 'memory' } });
  env = { LEASE_FENCE_URL: app.url, LEASE_FENCE_AGENT_TOKEN: TEST_TOKENS.viewer.token };
  await refuse(QUIET, await handedOver(QUIET), 1);
  const stormy = await handedOver(STORMY);
  for (let seq = 1; seq <= STORM_REFUSALS; seq += 1) await refuse(STORMY, stormy, seq);
}, 60_000);

afterAll(async () => {
  await app?.cleanup();
});

describe('lease-fence rejections after a storm on another resource', () => {
  it("does not say a resource has no refused writes when its refusals were pushed out of the coordinator's list", async () => {
    const result = await runCli(['rejections', '--resource', QUIET], env);

    expect(result.code).toBe(0);
    expect(result.stdout).not.toBe(`no refused writes for ${QUIET}\n`);
    expect(result.stdout).toContain('the most recent 1000');
    expect(result.stdout).toContain('lease-fence events');
  });

  it('says under the table that older refusals are not listed', async () => {
    const result = await runCli(['rejections'], env);

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.includes(STORMY))).toHaveLength(1000);
    expect(lines.at(-1)).toContain('the most recent 1000');
  });
});
