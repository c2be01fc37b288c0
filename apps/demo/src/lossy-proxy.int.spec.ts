import { LeaseFenceClient } from '@lease-fence/client';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from '@lease-fence/client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLossyProxy, type LossyProxy } from './lossy-proxy.js';

describe('lossy proxy', () => {
  let double: CoordinatorTestDouble;
  let proxy: LossyProxy;

  beforeEach(async () => {
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'token-agent-1', role: 'agent', holderId: 'agent-1' }],
    });
  });

  afterEach(async () => {
    await proxy.close();
    await double.close();
  });

  it('drops a reply after the coordinator processed it, and the retry gets the same grant', async () => {
    // Arrange: drop the first lease reply only.
    let drops = 1;
    const logged: string[] = [];
    proxy = await openLossyProxy({
      upstreamUrl: double.url,
      shouldDrop: () => drops-- > 0,
      log: (_resource, message) => logged.push(message),
    });
    const client = new LeaseFenceClient({
      baseUrl: proxy.url,
      token: 'token-agent-1',
      holderId: 'agent-1',
      clockSkewMillis: 100,
      retry: { initialDelayMillis: 0 },
    });

    // Act
    const result = await client.acquire('deploy-slot-a');

    // Assert
    const requestIds = double.handled.map((request) => (request.body as { requestId: string }).requestId);
    expect(requestIds).toHaveLength(2);
    expect(new Set(requestIds).size).toBe(1);
    expect(result.ok && result.lease.fence).toBe(1);
    expect(proxy.dropped).toBe(1);
    expect(logged).toEqual([
      "proxy dropped the coordinator's 200 reply to the acquire request (it was processed; the agent will retry)",
    ]);
  });
});
