/**
 * The SDK's agent link across a standby coordinator taking over, black-box: the BUILT coordinator
 * as an active and a standby process on one SQLite log, behind one TCP front (an operator's load
 * balancer) whose open connections go silent while new ones reach the standby: the active
 * coordinator frozen or cut off by a partition, its socket still open, and killed behind the front.
 * What must hold: the client leaves the silent connection and reaches the standby within its retry
 * budget; an operation applied just before the silence (its reply lost) is answered with the grant
 * the log holds, granted once; an idle link whose coordinator went silent is dropped by itself.
 */
import { existsSync } from 'node:fs';
import { LeaseFenceClient, type LeaseFenceClientOptions, type RetryEvent } from '@lease-fence/client';
import { EventsReplySchema, type CoordinatorEvent } from '@lease-fence/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { COORDINATOR_MAIN, startPairBehindFront } from '../support/coordinator-process.js';
import { eventually } from '../support/eventually.js';
import type { TcpFront } from '../support/tcp-front.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

const ENV = {
  LEASE_FENCE_HEARTBEAT: 'true',
  LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '200',
  LEASE_FENCE_MIN_TTL_MILLIS: '100',
};
const TAKEOVER_AFTER_MILLIS = 1000;
const TTL_MILLIS = 60_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * agent-a's client through `front`: 1 s per attempt, up to 15 attempts, each retry recorded in
 * `retries`; `options` on top (the transport, the keepalive, the requestIds). Closed after the test.
 */
function agentAThrough(
  front: TcpFront,
  retries: RetryEvent[],
  options: Partial<LeaseFenceClientOptions> & Pick<LeaseFenceClientOptions, 'transport'>,
): LeaseFenceClient {
  const client = new LeaseFenceClient({
    baseUrl: front.url,
    token: TEST_TOKENS.agentA.token,
    holderId: TEST_TOKENS.agentA.holderId,
    clockSkewMillis: 100,
    timeoutMillis: 1000,
    retry: { maxAttempts: 15, initialDelayMillis: 100, maxDelayMillis: 500 },
    onRetry: (event) => retries.push(event),
    ...options,
  });
  cleanups.push(() => client.close());
  return client;
}

/** Every event of `resource` in the log of the coordinator at `baseUrl`. */
async function eventsOf(baseUrl: string, resource: string): Promise<CoordinatorEvent[]> {
  const response = await fetch(`${baseUrl}/v1/events?after=0&limit=10000`, {
    headers: { authorization: `Bearer ${TEST_TOKENS.viewer.token}` },
  });
  return EventsReplySchema.parse(await response.json())
    .events.map((recorded) => recorded.event)
    .filter((event) => 'resource' in event.data && event.data.resource === resource);
}

const grantsOf = (events: readonly CoordinatorEvent[]): { fence: number; requestId: string }[] =>
  events.flatMap((event) =>
    event.type === 'LeaseGranted' ? [{ fence: event.data.fence, requestId: event.data.requestId }] : [],
  );

describe.skipIf(!existsSync(COORDINATOR_MAIN))('the SDK across a standby coordinator taking over', () => {
  it.each(['websocket', 'http'] as const)(
    'over %s: an acquire whose reply was lost when the coordinator went silent (socket open) is answered by the standby that took over, with the one grant the log holds',
    async (transport) => {
      // Arrange: agent-a's client reaches the active coordinator through the front
      const { active, standby, front } = await startPairBehindFront(
        'agent-link-failover-',
        ENV,
        TAKEOVER_AFTER_MILLIS,
        (cleanup) => cleanups.push(cleanup),
      );
      let nextRequest = 0;
      const retries: RetryEvent[] = [];
      const client = agentAThrough(front, retries, {
        transport,
        newRequestId: () => `${transport}-${(nextRequest += 1)}`,
      });
      expect((await client.acquire('failover-warm', { ttlMillis: TTL_MILLIS })).ok).toBe(true);

      // Act: the coordinator applies agent-a's acquire but its reply is lost; then the connection goes
      // silent (kept open) and the active coordinator dies behind the front; the standby takes over
      front.holdReplies();
      const pending = client.acquire('failover-a', { ttlMillis: TTL_MILLIS });
      await eventually(
        'the grant in the active log',
        async () => grantsOf(await eventsOf(active.url, 'failover-a')).length === 1,
      );
      front.partitionTo(standby.url);
      process.kill(active.pid, 'SIGKILL');
      // (before the agent link's keepalive, every attempt timed out on the silent socket until the retries ran out)
      const result = await pending;
      const afterwards = await client.acquire('failover-b', { ttlMillis: TTL_MILLIS });

      // Assert: the answer is the grant the log holds, granted once, and the client works on the standby
      const grants = grantsOf(await eventsOf(standby.url, 'failover-a'));
      console.log(
        `agent link failover over ${transport}: ${retries.length} retries (${retries.map((r) => (r.error as Error).name).join(', ')}), grants ${JSON.stringify(grants)}`,
      );
      expect(grants).toEqual([{ fence: expect.any(Number), requestId: `${transport}-2` }]);
      expect(result.ok && result.lease.fence).toBe(grants[0]!.fence);
      expect(afterwards.ok).toBe(true);
      expect(grantsOf(await eventsOf(standby.url, 'failover-b'))).toHaveLength(1);
    },
    120_000,
  );

  it('drops an idle agent link whose coordinator went silent, so the next acquire goes to the standby at once', async () => {
    // Arrange
    const { active, standby, front } = await startPairBehindFront(
      'agent-link-failover-',
      ENV,
      TAKEOVER_AFTER_MILLIS,
      (cleanup) => cleanups.push(cleanup),
    );
    const retries: RetryEvent[] = [];
    const client = agentAThrough(front, retries, { transport: 'websocket', pingIntervalMillis: 200 });
    expect((await client.acquire('idle-warm', { ttlMillis: TTL_MILLIS })).ok).toBe(true);

    // Act: the idle link goes silent, the active coordinator dies, the standby takes over
    front.partitionTo(standby.url);
    process.kill(active.pid, 'SIGKILL');
    // (before the keepalive, the client kept the silent socket open for as long as it lived)
    await eventually('the client closed the silent connection', () => front.silencedOpen === 0, 10_000);
    await standby.waitForLog((line) => line.msg === 'ready', 30_000);
    const result = await client.acquire('idle-after', { ttlMillis: TTL_MILLIS });

    // Assert: granted by the standby without an attempt lost on the silent connection
    expect(result.ok).toBe(true);
    expect(retries.filter((retry) => (retry.error as Error).name === 'TimeoutError')).toEqual([]);
    expect(grantsOf(await eventsOf(standby.url, 'idle-after'))).toHaveLength(1);
  }, 120_000);
});
