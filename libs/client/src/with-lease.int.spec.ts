import { createManualClock, type Lease, type ManualClock } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError } from './errors.js';
import { LeaseFenceClient } from './lease-fence-client.js';
import {
  createManualTimers,
  openCoordinatorTestDouble,
  type CoordinatorTestDouble,
  type ManualTimers,
} from './testing/index.js';

const TTL_MILLIS = 3000;
const SKEW_MILLIS = 100;

describe.each(['http', 'websocket'] as const)(
  'LeaseFenceClient.withLease and keep (against the coordinator test double), over %s',
  (transport) => {
    let coordinatorClock: ManualClock;
    let clientClock: ManualClock;
    let timers: ManualTimers;
    let double: CoordinatorTestDouble;
    let client: LeaseFenceClient;

    /** Moves both clocks together, as real time would. */
    const elapse = async (millis: number): Promise<void> => {
      coordinatorClock.advance(millis);
      await timers.advance(millis);
    };

    beforeEach(async () => {
      coordinatorClock = createManualClock('coordinator', { start: 10_000 });
      clientClock = createManualClock('client', { start: 0 });
      timers = createManualTimers(clientClock);
      double = await openCoordinatorTestDouble({
        ttlMillis: TTL_MILLIS,
        clock: coordinatorClock,
        tokens: [
          { token: 'token-agent-1', role: 'agent', holderId: 'agent-1' },
          { token: 'token-agent-2', role: 'agent', holderId: 'agent-2' },
        ],
      });
      client = new LeaseFenceClient({
        baseUrl: double.url,
        token: 'token-agent-1',
        holderId: 'agent-1',
        clockSkewMillis: SKEW_MILLIS,
        clock: clientClock,
        timers,
        retry: { maxAttempts: 2, initialDelayMillis: 0 },
        transport,
      });
    });

    afterEach(async () => {
      await client.close();
      await double.close();
    });

    it('renews in the background while the callback works, then releases at the end', async () => {
      // Arrange
      const renewals: Lease[] = [];
      let finishWork!: (value: string) => void;
      let started!: () => void;
      const working = new Promise<void>((resolve) => (started = resolve));

      // Act
      const running = client.withLease(
        'deploy-slot-a',
        (lease, signal) => {
          started();
          return new Promise<string>((resolve) => {
            finishWork = (value) => resolve(`${value} with fence ${lease.fence}, aborted=${signal.aborted}`);
          });
        },
        { onRenewed: (lease) => renewals.push(lease) },
      );
      await working;
      for (let round = 1; round <= 3; round += 1) {
        await timers.waitForSleepers(2);
        const renewed = double.nextHandled((request) => request.route === 'renew');
        await elapse(1450);
        await renewed;
        await waitUntil(() => renewals.length === round);
      }
      await elapse(2000); // beyond the first deadline (2900): only the renewals keep it alive
      finishWork('deployed');
      const result = await running;

      // Assert
      expect(result).toMatchObject({
        ok: true,
        value: 'deployed with fence 1, aborted=false',
        lost: undefined,
        release: { ok: true },
      });
      expect(renewals.map((lease) => lease.fence)).toEqual([1, 1, 1]);
      expect(double.coordinator.holder('deploy-slot-a')).toBeUndefined();
    });

    it('aborts the callback signal with LeaseLostError when a renewal is answered expired', async () => {
      // Arrange: the coordinator's clock jumps past the expiry (the holder stalled, say).
      let seen: AbortSignal | undefined;
      const running = client.withLease('deploy-slot-a', (_lease, signal) => {
        seen = signal;
        return new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      });
      await timers.waitForSleepers(2);
      coordinatorClock.advance(TTL_MILLIS);

      // Act
      await timers.advance(1450);
      const failure = await running.catch((error: unknown) => error);

      // Assert
      expect(failure).toBeInstanceOf(LeaseLostError);
      expect(failure).toMatchObject({ code: 'lease-lost', reason: 'expired', resource: 'deploy-slot-a', fence: 1 });
      expect(seen?.aborted).toBe(true);
      expect(double.handled.filter((request) => request.route === 'release')).toHaveLength(0);
    });

    it('aborts the signal at the deadline when renewals keep failing, then still tries to release', async () => {
      // Arrange: every renewal is answered 503.
      double.inject({ route: 'renew', kind: 'unavailable', times: 1000 });
      const lost: LeaseLostError[] = [];
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      const keeper = client.keep(acquired.lease, { onLost: (error) => lost.push(error), renewalRetryDelayMillis: 500 });
      await timers.waitForSleepers(2);

      // Act
      await timers.advance(1450);
      await double.nextHandled((request) => request.route === 'renew');
      for (let elapsed = 1450; elapsed < 2900; elapsed += 500) await timers.advance(500);
      const released = await keeper.release();

      // Assert
      expect(keeper.signal.reason).toMatchObject({ reason: 'deadline-passed' });
      expect(lost).toHaveLength(1);
      expect(keeper.state).toBe('lost');
      expect(released).toEqual({ ok: true });
    });

    it('releases with the same fence while a renewal reply is held back, and stays released when it lands', async () => {
      // Arrange
      let releaseRenewalReply!: () => void;
      double.inject({
        route: 'renew',
        kind: 'delay-reply',
        until: new Promise<void>((resolve) => (releaseRenewalReply = resolve)),
      });
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      const keeper = client.keep(acquired.lease);
      await timers.waitForSleepers(2);
      const renewalHandled = double.nextHandled((request) => request.route === 'renew');
      await elapse(1450);
      await renewalHandled;

      // Act
      const released = await keeper.release();
      releaseRenewalReply();
      await timers.advance(0);

      // Assert
      expect(released).toEqual({ ok: true });
      expect(keeper.state).toBe('released');
      expect(keeper.lease).toBe(acquired.lease);
      expect(double.coordinator.holder('deploy-slot-a')).toBeUndefined();
    });

    it('returns the denial without running the callback when another holder has the resource', async () => {
      // Arrange
      const other = new LeaseFenceClient({
        baseUrl: double.url,
        token: 'token-agent-2',
        holderId: 'agent-2',
        clockSkewMillis: SKEW_MILLIS,
        timers,
        transport,
      });
      await other.acquire('deploy-slot-a');
      await other.close();
      let ran = false;

      // Act
      const result = await client.withLease('deploy-slot-a', async () => {
        ran = true;
      });

      // Assert
      expect(result).toMatchObject({ ok: false, reason: 'held', heldBy: 'agent-2' });
      expect(ran).toBe(false);
    });

    it('releases the lease when the callback throws, and rethrows', async () => {
      // Arrange
      const boom = new Error('model call failed');

      // Act
      const failure = await client
        .withLease('deploy-slot-a', () => Promise.reject(boom))
        .catch((error: unknown) => error);

      // Assert
      expect(failure).toBe(boom);
      expect(double.coordinator.holder('deploy-slot-a')).toBeUndefined();
    });

    it('renews through the live view it passes to the callback', async () => {
      // Arrange / Act
      const result = await client.withLease('deploy-slot-a', async (lease) => {
        clientClock.advance(500);
        const renewed = await client.renew(lease);
        return { renewedFence: renewed.ok ? renewed.lease.fence : undefined, deadline: lease.deadline.millis };
      });

      // Assert
      expect(result).toMatchObject({ ok: true, value: { renewedFence: 1 } });
    });
  },
);

/** Waits for a condition that depends on a chain of promise callbacks (no timers involved). */
const waitUntil = async (condition: () => boolean): Promise<void> => {
  for (let turn = 0; turn < 1000 && !condition(); turn += 1)
    await new Promise<void>((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('condition not reached');
};
