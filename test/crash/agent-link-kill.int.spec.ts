/**
 * kill -9 of the coordinator while agent links have many acquires in flight (the agent link's
 * group commit mid-batch): after a restart on the same data dir, every grant the links were
 * answered 200 for is in the log with the same holder and fence. Nothing acknowledged is lost:
 * a reply leaves only after its batch's append is durable.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openRawAgentLink, type RawAgentLink } from '../support/agent-link-client.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { COORDINATOR_MAIN } from '../support/coordinator-process.js';
import { coordinatorsOnOneDataDir } from '../support/one-data-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

const { start } = coordinatorsOnOneDataDir('lease-fence-agent-link-kill-', { LEASE_FENCE_TTL_MILLIS: '60000' });

/** Links per agent token, and acquires each keeps in flight. */
const LINKS_PER_AGENT = 3;
const IN_FLIGHT_PER_LINK = 16;

interface Acknowledged {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
}

describe.skipIf(!existsSync(COORDINATOR_MAIN))('agent links through a kill -9 of the coordinator', () => {
  it('loses no acknowledged grant when the coordinator dies with batches in flight', async () => {
    // Arrange: agent links keeping acquires of fresh resources in flight
    const first = await start();
    const acknowledged: Acknowledged[] = [];
    let sent = 0;
    let stopped = false;
    const agents = [TEST_TOKENS.agentA, TEST_TOKENS.agentB];
    const links: RawAgentLink[] = [];
    for (const agent of agents)
      for (let index = 0; index < LINKS_PER_AGENT; index += 1)
        links.push(await openRawAgentLink(first.wsUrl, agent.token));
    const pump = (link: RawAgentLink, holderId: string, linkIndex: number): void => {
      let next = 1;
      const one = (): void => {
        if (stopped) return;
        const id = next++;
        const resource = `kill-${linkIndex}-${id}`;
        sent += 1;
        void link.request(id, 'acquire', resource, { requestId: `req-${linkIndex}-${id}` }).then((reply) => {
          if (reply.status === 200) {
            const { grant } = reply.body as { grant: { fence: number; holderId: string } };
            expect(grant.holderId).toBe(holderId);
            acknowledged.push({ resource, holderId, fence: grant.fence });
          }
          one();
        });
      };
      for (let slot = 0; slot < IN_FLIGHT_PER_LINK; slot += 1) one();
    };
    links.forEach((link, index) => pump(link, agents[Math.floor(index / LINKS_PER_AGENT)]!.holderId, index));
    while (acknowledged.length < 300) await new Promise((resolve) => setTimeout(resolve, 5));

    // Act: kill -9 with acquires in flight, then restart on the same log
    const crash = await first.kill();
    stopped = true;
    const answeredAtKill = acknowledged.length;
    const second = await start();

    // Assert
    expect(crash.signal).toBe('SIGKILL');
    expect(sent).toBeGreaterThan(answeredAtKill); // the kill came with frames unanswered
    const viewer = coordinatorHttp(second.url, TEST_TOKENS.viewer.token);
    const events: {
      position: number;
      event: { type: string; data: { resource?: string; holderId?: string; fence?: number } };
    }[] = [];
    for (;;) {
      const after = events.at(-1)?.position ?? 0;
      const page = await viewer.get<{ events: typeof events }>(`/v1/events?after=${after}&limit=1000`);
      expect(page.status).toBe(200);
      if (page.body.events.length === 0) break;
      events.push(...page.body.events);
    }
    const logged = new Map(
      events
        .filter(({ event }) => event.type === 'LeaseGranted')
        .map(({ event }) => [event.data.resource, event.data] as const),
    );
    const lost = acknowledged.filter(
      (grant) =>
        logged.get(grant.resource)?.fence !== grant.fence || logged.get(grant.resource)?.holderId !== grant.holderId,
    );
    expect(lost).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);
    await Promise.all(links.map((link) => link.close()));
  }, 120_000);
});
