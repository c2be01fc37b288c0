import { createManualClock, ProtocolMisuseError, type ManualClock } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import {
  CoordinatorHttpError,
  CoordinatorReplyError,
  CoordinatorUnavailableError,
  CoordinatorUnreachableError,
} from './errors.js';
import { LeaseFenceClient, type LeaseFenceClientOptions } from './lease-fence-client.js';
import type { RetryEvent } from './coordinator-http.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

const TTL_MILLIS = 3000;
const SKEW_MILLIS = 100;

describe.each(['http', 'websocket'] as const)('LeaseFenceClient over %s', (transport) => {
  let coordinatorClock: ManualClock;
  let clientClock: ManualClock;
  let double: CoordinatorTestDouble;
  let retries: RetryEvent[];

  const opened: LeaseFenceClient[] = [];
  const connect = (overrides: Partial<LeaseFenceClientOptions> = {}): LeaseFenceClient =>
    track(
      new LeaseFenceClient({
        baseUrl: double.url,
        token: 'token-agent-1',
        holderId: 'agent-1',
        clockSkewMillis: SKEW_MILLIS,
        clock: clientClock,
        timeoutMillis: 2000,
        retry: { maxAttempts: 3, initialDelayMillis: 0 },
        onRetry: (event) => retries.push(event),
        transport,
        ...overrides,
      }),
    );
  const track = (client: LeaseFenceClient): LeaseFenceClient => {
    opened.push(client);
    return client;
  };

  beforeEach(async () => {
    coordinatorClock = createManualClock('coordinator', { start: 50_000 });
    clientClock = createManualClock('client', { start: 1_000 });
    retries = [];
    double = await openCoordinatorTestDouble({
      ttlMillis: TTL_MILLIS,
      clock: coordinatorClock,
      tokens: [
        { token: 'token-agent-1', role: 'agent', holderId: 'agent-1' },
        { token: 'token-agent-2', role: 'agent', holderId: 'agent-2' },
        { token: 'token-viewer', role: 'viewer' },
      ],
    });
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((client) => client.close()));
    await double.close();
  });

  describe('acquire', () => {
    it('returns a live lease whose deadline is the send instant plus ttl minus skew', async () => {
      // Arrange
      const client = connect();
      double.onHandled(() => clientClock.advance(40)); // the reply takes 40 ms to arrive

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.lease.fence).toBe(1);
      expect(result.lease.token).toEqual({ resource: 'deploy-slot-a', holderId: 'agent-1', fence: 1 });
      expect(result.lease.deadline.millis).toBe(1_000 + TTL_MILLIS - SKEW_MILLIS);
      expect(result.lease.coordinatorExpiresAt.domain).toBe('coordinator');
    });

    it('retries a lost reply with the same requestId and keeps the first send instant as the anchor', async () => {
      // Arrange: the coordinator processes the first attempt, then its reply is lost; the retry
      // leaves 700 ms later on the client's clock.
      const client = connect();
      double.inject({ route: 'acquire', kind: 'drop-reply' });
      double.onHandled(() => clientClock.advance(700));

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      const attempts = double.handled.filter((request) => request.route === 'acquire');
      expect(attempts).toHaveLength(2);
      expect((attempts[0]?.body as { requestId: string }).requestId).toBe(
        (attempts[1]?.body as { requestId: string }).requestId,
      );
      expect(double.coordinator.issuedFence).toBe(1);
      expect(retries).toHaveLength(1);
      expect(result.ok && result.lease.fence).toBe(1);
      expect(result.ok && result.lease.deadline.millis).toBe(1_000 + TTL_MILLIS - SKEW_MILLIS);
    });

    it('retries after a per-attempt timeout with the same requestId, never minting a second fence', async () => {
      // Arrange: the first reply is held back until the client has given up on it. The per-attempt
      // timeout is wall time (AbortSignal.timeout / setTimeout), so it must also leave the retry —
      // and, over WebSocket, the handshake — room to finish on a busy machine: 150 ms did not.
      const client = connect({ timeoutMillis: 1000 });
      let releaseHeldReply!: () => void;
      double.inject({
        route: 'acquire',
        kind: 'delay-reply',
        until: new Promise<void>((resolve) => (releaseHeldReply = resolve)),
      });

      // Act
      const result = await client.acquire('deploy-slot-a');
      releaseHeldReply();

      // Assert
      const requestIds = double.handled
        .filter((request) => request.route === 'acquire')
        .map((request) => (request.body as { requestId: string }).requestId);
      expect(new Set(requestIds).size).toBe(1);
      expect(requestIds).toHaveLength(2);
      expect(double.coordinator.issuedFence).toBe(1);
      expect(retries[0]?.error).toMatchObject({ name: 'TimeoutError' });
      expect(result.ok && result.lease.fence).toBe(1);
    });

    it('retries a 503 and then succeeds', async () => {
      // Arrange
      const client = connect();
      double.inject({ route: 'acquire', kind: 'unavailable', times: 2 });

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      expect(result.ok).toBe(true);
      expect(retries.map((event) => event.attempt)).toEqual([1, 2]);
      expect(retries[0]?.error).toBeInstanceOf(CoordinatorHttpError);
    });

    it('throws CoordinatorUnavailableError, not "unreachable", when every attempt was answered 503, naming the reason and the attempts', async () => {
      // Arrange
      const client = connect();
      double.inject({ route: 'acquire', kind: 'unavailable', times: 3 });

      // Act
      const failure = client.acquire('deploy-slot-a');

      // Assert
      await expect(failure).rejects.toBeInstanceOf(CoordinatorUnavailableError);
      await expect(failure).rejects.toMatchObject({
        code: 'coordinator-unavailable',
        status: 503,
        reason: 'recovering',
        attempts: 3,
        retryable: true,
      });
      await expect(failure).rejects.toThrow(
        /^acquire deploy-slot-a: coordinator unavailable \(HTTP 503, reason recovering\) after 3 attempts: injected fault: unavailable$/,
      );
    });

    it('throws CoordinatorUnreachableError when no attempt got an answer (nothing listens)', async () => {
      // Arrange: a loopback port that was free a moment ago
      const port = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const address = server.address();
          server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
        });
      });
      const client = connect({ baseUrl: `http://127.0.0.1:${port}` });

      // Act
      const failure = client.acquire('deploy-slot-a');

      // Assert
      await expect(failure).rejects.toBeInstanceOf(CoordinatorUnreachableError);
      await expect(failure).rejects.toMatchObject({ code: 'coordinator-unreachable', attempts: 3, retryable: true });
      await expect(failure).rejects.toThrow(
        transport === 'http'
          ? /^acquire deploy-slot-a: coordinator unreachable after 3 attempts: fetch failed/
          : /^acquire deploy-slot-a: coordinator unreachable after 3 attempts: connect ECONNREFUSED/,
      );
    });

    it('says, on one line, to use http:// when the URL is https:// and the coordinator speaks plain HTTP', async () => {
      // Arrange: the double serves plain HTTP; the user wrote https://
      const client = connect({ baseUrl: double.url.replace(/^http:/, 'https:') });

      // Act
      const failure = client.acquire('deploy-slot-a');

      // Assert: not OpenSSL's "ssl3_get_record:wrong version number:../deps/openssl/…" and a newline
      await expect(failure).rejects.toBeInstanceOf(CoordinatorUnreachableError);
      await expect(failure).rejects.toThrow(
        /the server answered without TLS: is its URL http:\/\/, not https:\/\/\?\)$/,
      );
      await expect(failure).rejects.not.toThrow(/\n|openssl/);
    });

    it('does not retry a 401 and throws CoordinatorHttpError with the status and body', async () => {
      // Arrange
      const client = connect({ token: 'not-a-token' });

      // Act
      const failure = client.acquire('deploy-slot-a');

      // Assert
      await expect(failure).rejects.toBeInstanceOf(CoordinatorHttpError);
      await expect(failure).rejects.toMatchObject({
        code: 'coordinator-http',
        status: 401,
        body: { error: 'unauthorized' },
      });
      expect(retries).toHaveLength(0);
    });

    it('does not retry a 403 for a token of another role', async () => {
      // Arrange
      const client = connect({ token: 'token-viewer' });

      // Act / Assert
      await expect(client.acquire('deploy-slot-a')).rejects.toMatchObject({ status: 403 });
      expect(double.handled).toHaveLength(1);
    });

    it('reports held as data with the holder and the retry hint', async () => {
      // Arrange
      await connect({ token: 'token-agent-2', holderId: 'agent-2' }).acquire('deploy-slot-a');
      coordinatorClock.advance(1000);

      // Act
      const result = await connect().acquire('deploy-slot-a');

      // Assert
      expect(result).toEqual({ ok: false, reason: 'held', heldBy: 'agent-2', retryAfterMillis: TTL_MILLIS - 1000 });
    });

    it('reports already-held as data with the fence this holder already has', async () => {
      // Arrange
      const client = connect();
      await client.acquire('deploy-slot-a');

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      expect(result).toMatchObject({ ok: false, reason: 'already-held', heldBy: 'agent-1', fence: 1 });
      expect(double.coordinator.issuedFence).toBe(1);
    });

    it('reports expired when the grant owed to a retried requestId has already ended', async () => {
      // Arrange: the first reply is lost, and the lease it granted expires before the retry.
      const client = connect();
      double.inject({ route: 'acquire', kind: 'drop-reply' });
      double.onHandled((request) => {
        if (request.route === 'acquire' && request.fault === 'drop-reply') coordinatorClock.advance(TTL_MILLIS);
      });

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      expect(result).toEqual({ ok: false, reason: 'expired', fence: 1 });
    });

    it('releases a grant that arrives after its send-anchored deadline and reports it as dead on arrival', async () => {
      // Arrange: the reply arrives 3 s after the send on the client's clock (ttl 3 s, skew 100 ms).
      const client = connect();
      double.onHandled((request) => {
        if (request.route === 'acquire') clientClock.advance(TTL_MILLIS);
      });

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert
      expect(result).toEqual({
        ok: false,
        reason: 'dead-on-arrival',
        fence: 1,
        lateByMillis: SKEW_MILLIS,
        released: true,
      });
      expect(double.coordinator.holder('deploy-slot-a')).toBeUndefined();
    });

    it('treats a grant as dead on arrival when slow retries used up its window, even though each attempt was quick', async () => {
      // Arrange: two lost replies, 1600 ms apart on the client's clock.
      const client = connect();
      double.inject({ route: 'acquire', kind: 'drop-reply', times: 2 });
      double.onHandled((request) => {
        if (request.route === 'acquire' && request.fault === 'drop-reply') clientClock.advance(1600);
      });

      // Act
      const result = await client.acquire('deploy-slot-a');

      // Assert: anchored at the first send (t=1000): deadline 3900 < arrival 4200.
      expect(result).toMatchObject({
        ok: false,
        reason: 'dead-on-arrival',
        fence: 1,
        lateByMillis: 300,
        released: true,
      });
      expect(double.coordinator.issuedFence).toBe(1);
    });

    it('releases the grant and throws ProtocolMisuseError when the token belongs to another holder than holderId', async () => {
      // Arrange: configured as agent-1 but holding agent-2's token.
      const client = connect({ token: 'token-agent-2' });

      // Act / Assert
      await expect(client.acquire('deploy-slot-a')).rejects.toBeInstanceOf(ProtocolMisuseError);
      expect(double.coordinator.holder('deploy-slot-a')).toBeUndefined();
    });

    it("names the holderId to configure (the token's holder) when the token belongs to another holder, not 'another request'", async () => {
      // Arrange: configured as agent-1 but holding agent-2's token, the mistake a copied example makes.
      const client = connect({ token: 'token-agent-2' });

      // Act
      const error: unknown = await client.acquire('deploy-slot-a').catch((thrown: unknown) => thrown);

      // Assert: the message says what to change, and that the grant was given back
      expect(error).toBeInstanceOf(ProtocolMisuseError);
      const { message } = error as Error;
      expect(message).toContain('holderId is "agent-1"');
      expect(message).toContain('set holderId to "agent-2"');
      expect(message).toContain('released');
      expect(message).not.toContain('another request');
    });

    it('rejects with the abort reason and sends nothing when the signal is already aborted', async () => {
      // Arrange
      const reason = new Error('caller gave up');

      // Act / Assert
      await expect(connect().acquire('deploy-slot-a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(double.handled).toHaveLength(0);
    });

    it('throws CoordinatorReplyError for a 200 reply without a grant', async () => {
      // Arrange: a proxy-like double that answers 200 {} for everything.
      const { createServer } = await import('node:http');
      const server = createServer((_request, response) =>
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        // Act / Assert
        await expect(connect({ baseUrl: `http://127.0.0.1:${port}` }).acquire('deploy-slot-a')).rejects.toBeInstanceOf(
          CoordinatorReplyError,
        );
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('renew', () => {
    it('keeps the fence and anchors the new deadline at the renewal send instant', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      clientClock.advance(1000);
      coordinatorClock.advance(1000);

      // Act
      const renewed = await client.renew(acquired.lease);

      // Assert
      expect(renewed.ok && renewed.lease.fence).toBe(1);
      expect(renewed.ok && renewed.lease.deadline.millis).toBe(2_000 + TTL_MILLIS - SKEW_MILLIS);
      expect(double.coordinator.holder('deploy-slot-a')?.expiresAt.millis).toBe(51_000 + TTL_MILLIS);
    });

    it('reports expired as data once the coordinator expired the lease, and never revives it', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      coordinatorClock.advance(TTL_MILLIS);

      // Act
      const renewed = await client.renew(acquired.lease);

      // Assert
      expect(renewed).toEqual({ ok: false, reason: 'expired' });
      expect(double.handled.at(-1)?.status).toBe(410);
    });

    it('retries a lost renewal reply and anchors at the renewal first send', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      double.inject({ route: 'renew', kind: 'drop-reply' });
      double.onHandled((request) => {
        if (request.route === 'renew') clientClock.advance(500);
      });

      // Act
      const renewed = await client.renew(acquired.lease);

      // Assert
      expect(renewed.ok && renewed.lease.deadline.millis).toBe(1_000 + TTL_MILLIS - SKEW_MILLIS);
      expect(double.handled.filter((request) => request.route === 'renew')).toHaveLength(2);
    });
  });

  describe('release', () => {
    it('frees the resource for the next holder, who gets a higher fence', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');

      // Act
      const released = await client.release(acquired.lease);
      const next = await connect({ token: 'token-agent-2', holderId: 'agent-2' }).acquire('deploy-slot-a');

      // Assert
      expect(released).toEqual({ ok: true });
      expect(next.ok && next.lease.fence).toBe(2);
    });

    it('answers ok to the same release sent again (a retry after a lost reply), and the next holder gets a higher fence', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      await client.release(acquired.lease);

      // Act
      const again = await client.release(acquired.lease);
      const next = await connect({ token: 'token-agent-2', holderId: 'agent-2' }).acquire('deploy-slot-a');

      // Assert
      expect(again).toEqual({ ok: true });
      expect(next.ok && next.lease.fence).toBe(2);
    });

    it('reports expired as data for a generation that already ended, presented by another holder', async () => {
      // Arrange
      const client = connect();
      const acquired = await client.acquire('deploy-slot-a');
      if (!acquired.ok) throw new Error('expected a grant');
      await client.release(acquired.lease);

      // Act
      const other = await connect({ token: 'token-agent-2', holderId: 'agent-2' }).release(acquired.lease);

      // Assert
      expect(other).toEqual({ ok: false, reason: 'expired' });
    });
  });

  describe('constructor', () => {
    it.each([
      [{ baseUrl: 'ftp://example' }, TypeError, /baseUrl must use http/],
      [{ baseUrl: 'not a url' }, TypeError, /baseUrl must be an absolute/],
      [{ baseUrl: 'http://u:secret@127.0.0.1:3000' }, TypeError, /baseUrl must not carry credentials/],
      [{ baseUrl: 'http://127.0.0.1:3000/?x=1' }, TypeError, /baseUrl must have no query \(\?…\) or fragment/],
      [{ baseUrl: 'http://127.0.0.1:3000/#top' }, TypeError, /baseUrl must have no query \(\?…\) or fragment/],
      [{ token: '' }, TypeError, /token must be a non-empty string/],
      [{ timeoutMillis: 0 }, RangeError, /timeoutMillis must be a positive integer \(milliseconds\), got 0/],
      [{ retry: { maxAttempts: 0 } }, RangeError, /retry.maxAttempts must be an integer ≥ 1/],
      [{ clockSkewMillis: -1 }, RangeError, /clockSkewMillis/],
      [
        { pingIntervalMillis: 0 },
        RangeError,
        /LeaseFenceClient: pingIntervalMillis must be an integer number of milliseconds in \[1, 2147483647\], got 0/,
      ],
    ] as const)('refuses %j with a message naming the field', (overrides, type, message) => {
      // Act / Assert
      expect(() => connect(overrides as Partial<LeaseFenceClientOptions>)).toThrow(type);
      expect(() => connect(overrides as Partial<LeaseFenceClientOptions>)).toThrow(message);
    });
  });
});
