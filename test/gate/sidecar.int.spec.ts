/**
 * The fencing reverse proxy, black-box: the BUILT sidecar (`apps/gate/dist/main.js`) configured
 * only by its environment, in front of a real HTTP upstream that records what reaches it, with
 * the BUILT coordinator (SQLite log, fence-first for `deploy-ff-*`). What must hold: admitted
 * writes reach the upstream unchanged but for `Lease-Fence-Token`; stale, double-granted and
 * invalid tokens are answered by the gate and never reach it; the floor and the refusal outbox
 * survive kill -9; bad input gets a clear answer, never a crash, never a lowered floor.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSigningKey } from '@lease-fence/client/testing';
import { EventsReplySchema, type CoordinatorEvent } from '@lease-fence/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorBuilt, startCoordinator, type CoordinatorProcess } from '../sdk/support/coordinator-process.js';
import { eventually, gateBuilt, startGate, type GateProcess } from './support/gate-process.js';
import { startHoldingProxy, startRecordingUpstream, type RecordingUpstream } from './support/recording-upstream.js';
import { acquireGrant, type TestGrant } from '../support/coordinator-http.js';

const OWN = '/.well-known/lease-fence-gate';
/** The two halves of a write whose body stalls between them. */
const FIRST_HALF = 'first half of the write, ';
const SECOND_HALF = 'second half, after the lease was handed over';

/** The 409 body of agent-1's write on `resource` refused as the gate's first refusal, after agent-2 took the resource over. */
const staleRefusalOfAgent1 = (resource: string, oldFence: number, currentFence: number) => ({
  ok: false,
  reason: 'stale-fence',
  resource,
  seq: 1,
  rejected: { holderId: 'agent-1', fence: oldFence },
  current: { holderId: 'agent-2', fence: currentFence },
});

describe.skipIf(!coordinatorBuilt() || !gateBuilt())('lease-fence-gate in front of a real upstream', () => {
  let coordinator: CoordinatorProcess;
  let upstream: RecordingUpstream;
  let dataRoot: string;
  const gates: GateProcess[] = [];

  beforeAll(async () => {
    coordinator = await startCoordinator({
      env: { LEASE_FENCE_FENCE_FIRST: 'deploy-ff-*', LEASE_FENCE_MIN_TTL_MILLIS: '100' },
    });
    upstream = await startRecordingUpstream();
    dataRoot = await mkdtemp(join(tmpdir(), 'gate-sidecar-'));
  });

  afterAll(async () => {
    for (const gate of gates) await gate.stop('SIGKILL');
    await upstream?.close();
    await coordinator?.stop();
    await rm(dataRoot, { recursive: true, force: true });
  });

  /** Starts a sidecar for `resource` as an operator would, and waits until it is ready. */
  const gateFor = async (
    resource: string,
    env: Readonly<Record<string, string>> = {},
    waitReady = true,
  ): Promise<GateProcess> => {
    const gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: resource,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: coordinator.url,
      LEASE_FENCE_GATE_TOKEN: 'gate-token',
      LEASE_FENCE_DATA_DIR: join(dataRoot, resource),
      ...env,
    });
    gates.push(gate);
    if (waitReady)
      await eventually(
        `${resource}'s gate to be ready`,
        async () => (await fetch(`${gate.url}${OWN}/readyz`)).status === 200,
      );
    return gate;
  };
  const guarding = async (gate: GateProcess): Promise<void> => {
    await eventually('the gate link', () => gate.logLines.some((line) => line.includes('"gate link: guarding"')));
  };

  const acquire = (agent: number, resource: string): Promise<TestGrant> =>
    acquireGrant(coordinator.url, `agent-${agent}-token`, resource);
  const release = async (agent: number, resource: string, fence: number): Promise<void> => {
    const response = await fetch(`${coordinator.url}/v1/leases/${encodeURIComponent(resource)}/release`, {
      method: 'POST',
      headers: { authorization: `Bearer agent-${agent}-token`, 'content-type': 'application/json' },
      body: JSON.stringify({ fence }),
    });
    expect(response.status).toBe(200);
  };
  const events = async (resource: string): Promise<CoordinatorEvent[]> => {
    const response = await fetch(`${coordinator.url}/v1/events?after=0&limit=10000`, {
      headers: { authorization: 'Bearer viewer-token' },
    });
    return EventsReplySchema.parse(await response.json())
      .events.map((recorded) => recorded.event)
      .filter((event) => 'resource' in event.data && event.data.resource === resource);
  };
  const rejectedSeqs = async (resource: string): Promise<number[]> =>
    (await events(resource))
      .filter((event) => event.type === 'FenceRejected')
      .map((event) => (event.data as { seq: number }).seq);
  const floorOf = async (gate: GateProcess): Promise<unknown> =>
    ((await (await fetch(`${gate.url}${OWN}/readyz`)).json()) as { floor: unknown }).floor;
  const write = async (
    gate: GateProcess,
    path: string,
    token: string | undefined,
    init: RequestInit = {},
  ): Promise<{ status: number; body: string; headers: Headers }> => {
    const response = await fetch(`${gate.url}${path}`, {
      method: 'POST',
      body: `write to ${path}`,
      ...init,
      headers: {
        ...(token === undefined ? {} : { 'lease-fence-token': token }),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  const reached = (path: string): number => upstream.received.filter((request) => request.url === path).length;

  it('forwards admitted writes and open reads unchanged, minus Lease-Fence-Token and hop-by-hop headers', async () => {
    const resource = 'deploy-ff-pass';
    const gate = await gateFor(resource);
    await guarding(gate);
    const lease = await acquire(1, resource);

    const written = await httpSend(
      gate.url,
      'PUT',
      '/orders/7?dry=0',
      {
        'lease-fence-token': lease.signedToken,
        'content-type': 'application/json',
        'x-request-tag': 'abc',
        connection: 'keep-alive, x-hop',
        'x-hop': 'drop me',
      },
      '{"qty":3}',
    );
    const read = await fetch(`${gate.url}/orders/7`);

    expect(written).toMatchObject({ status: 200, body: 'PUT /orders/7?dry=0 9' });
    expect(written.headers['x-upstream']).toBe('recording');
    expect(written.headers['keep-alive']).not.toBe('timeout=5');
    expect(read.status).toBe(200);
    const [put, get] = upstream.received.filter((request) => request.url.startsWith('/orders/7'));
    expect(put).toMatchObject({
      method: 'PUT',
      url: '/orders/7?dry=0',
      body: '{"qty":3}',
      headers: { 'content-type': 'application/json', 'x-request-tag': 'abc' },
    });
    expect(put?.headers).not.toHaveProperty('lease-fence-token');
    expect(put?.headers).not.toHaveProperty('x-hop');
    expect(get).toMatchObject({ method: 'GET', url: '/orders/7' });
    expect(await floorOf(gate)).toEqual({ holderId: 'agent-1', fence: lease.fence });
  });

  it("after a fence-first handover, the old holder's write gets 409 and never reaches the upstream, although the new holder never wrote", async () => {
    const resource = 'deploy-ff-handover';
    const gate = await gateFor(resource);
    await guarding(gate);
    const old = await acquire(1, resource);
    expect((await write(gate, '/deploy/1', old.signedToken)).status).toBe(200);
    await release(1, resource, old.fence);

    const current = await acquire(2, resource);
    const late = await write(gate, '/deploy/late', old.signedToken);

    expect(late.status).toBe(409);
    expect(JSON.parse(late.body)).toEqual(staleRefusalOfAgent1(resource, old.fence, current.fence));
    expect(reached('/deploy/late')).toBe(0);
    await eventually("the refusal in the coordinator's log", async () => (await rejectedSeqs(resource)).length === 1);
    expect(await rejectedSeqs(resource)).toEqual([1]);
  });

  it.each([
    ['chunked', { 'transfer-encoding': 'chunked' }],
    ['content-length', { 'content-length': String(Buffer.byteLength(FIRST_HALF + SECOND_HALF)) }],
  ])(
    'a write admitted before a handover whose body (%s) is still streaming is cut and refused (409) once the floor moved: the upstream never gets it whole',
    async (framing, framingHeaders) => {
      // Arrange: the old holder's write is admitted (its floor durable), then its body stalls
      const resource = `deploy-ff-slow-${framing}`;
      const gate = await gateFor(resource);
      await guarding(gate);
      const old = await acquire(1, resource);
      const slow = httpRequest(`${gate.url}/slow/late-${framing}`, {
        method: 'POST',
        headers: { 'lease-fence-token': old.signedToken, ...framingHeaders },
      });
      const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
        slow.on('response', (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          response.on('error', reject);
        });
        slow.on('error', reject);
      });
      slow.write(FIRST_HALF);
      // admitted and on its way upstream (the floor alone says nothing: fence-first raised it at the grant)
      await eventually('the old write admitted', async () =>
        /^lease_fence_gate_admitted_total\{[^}]*\} 1$/m.test(await (await fetch(`${gate.url}${OWN}/metrics`)).text()),
      );

      // Act: a fence-first handover moves the floor, then the old writer finishes its body
      await release(1, resource, old.fence);
      const current = await acquire(2, resource);
      slow.end(SECOND_HALF);
      const late = await answered;

      // Assert: refused like any stale write, recorded, and never complete at the upstream
      expect(late.status).toBe(409);
      expect(JSON.parse(late.body)).toEqual(staleRefusalOfAgent1(resource, old.fence, current.fence));
      expect(reached(`/slow/late-${framing}`)).toBe(0);
      await eventually("the refusal in the coordinator's log", async () => (await rejectedSeqs(resource)).length === 1);
    },
  );

  /** The signature with its first byte's low bit flipped: always a different signature (replacing its last characters is not, when they already decode to the same bytes). */
  const flipFirstByte = (signature: string): string => {
    const bytes = Buffer.from(signature, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    return bytes.toString('base64url');
  };

  it('answers 401 invalid-token to missing, garbage, altered, foreign-key and other-resource tokens, forwarding none and moving no floor', async () => {
    const resource = 'deploy-forged';
    const gate = await gateFor(resource);
    const lease = await acquire(1, resource);
    expect((await write(gate, '/forged/genuine', lease.signedToken)).status).toBe(200);
    const floor = await floorOf(gate);
    const [header, payload, signature] = lease.signedToken.split('.') as [string, string, string];
    const raised = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), fence: lease.fence + 1000 }),
    ).toString('base64url');
    const attacker = await createTestSigningKey();
    const kid = (JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string }).kid;
    const other = await acquire(2, 'deploy-elsewhere');
    const forged: readonly (string | undefined)[] = [
      undefined,
      'garbage',
      '',
      `${header}.${raised}.${signature}`,
      `${header}.${payload}.${flipFirstByte(signature)}`,
      await attacker.sign({ resource, holderId: 'agent-9', fence: lease.fence + 1000, namespace: 'default' }, { kid }),
      other.signedToken,
    ];

    for (const [index, token] of forged.entries()) {
      const answer = await write(gate, `/forged/${index}`, token);
      expect(answer.status, `token ${index}`).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({
        ok: false,
        reason: 'invalid-token',
        message: expect.any(String),
      });
    }

    expect(
      upstream.received.filter((request) => request.url.startsWith('/forged/') && request.url !== '/forged/genuine'),
    ).toEqual([]);
    expect(await floorOf(gate)).toEqual(floor);
  });

  it("reports each new fence it admits once, so the log shows when the handover's exposure ended", async () => {
    const resource = 'deploy-exposure';
    const gate = await gateFor(resource);
    const admittedFences = async (): Promise<number[]> =>
      (await events(resource))
        .filter((event) => event.type === 'FenceAdmitted')
        .map((event) => (event.data as { fence: number }).fence);

    const first = await acquire(1, resource);
    for (const attempt of [1, 2, 3])
      expect((await write(gate, `/exposure/first-${attempt}`, first.signedToken)).status).toBe(200);
    await eventually('the first fence to be reported', async () => (await admittedFences()).length === 1);
    await release(1, resource, first.fence);
    const second = await acquire(2, resource);
    expect((await write(gate, '/exposure/second', second.signedToken)).status).toBe(200);
    await eventually('the second fence to be reported', async () => (await admittedFences()).length === 2);

    expect(await admittedFences()).toEqual([first.fence, second.fence]);
    const [grant, admit] = (await events(resource)).filter(
      (event) =>
        (event.type === 'LeaseGranted' || event.type === 'FenceAdmitted') &&
        (event.data as { fence: number }).fence === second.fence,
    );
    expect([grant?.type, admit?.type]).toEqual(['LeaseGranted', 'FenceAdmitted']);
    expect(admit?.data).toMatchObject({ holderId: 'agent-2', gateId: expect.any(String) });
  });

  it("kill -9 and restart: the floor is remembered and the refusal outbox is drained, seqs contiguous in the coordinator's log", async () => {
    const resource = 'deploy-crash';
    // The first life reports through a proxy that never acknowledges a refusal: they stay in the outbox.
    const holding = await startHoldingProxy(coordinator.url, /\/rejections(\/batch)?$/);
    try {
      const first = await gateFor(resource, { LEASE_FENCE_COORDINATOR_URL: holding.url });
      const old = await acquire(1, resource);
      expect((await write(first, '/crash/old', old.signedToken)).status).toBe(200);
      await release(1, resource, old.fence);
      const current = await acquire(2, resource);
      expect((await write(first, '/crash/current', current.signedToken)).status).toBe(200);
      for (const attempt of [1, 2, 3])
        expect((await write(first, `/crash/stale-${attempt}`, old.signedToken)).status).toBe(409);
      await eventually('a report to be held', () => holding.held > 0);

      await first.stop('SIGKILL');
      expect(await rejectedSeqs(resource)).toEqual([]);
      const second = await gateFor(resource);
      const afterRestart = await write(second, '/crash/stale-4', old.signedToken);

      expect(afterRestart.status).toBe(409);
      expect(JSON.parse(afterRestart.body)).toMatchObject({
        seq: 4,
        current: { holderId: 'agent-2', fence: current.fence },
      });
      expect(await floorOf(second)).toEqual({ holderId: 'agent-2', fence: current.fence });
      await eventually('the outbox to drain', async () => (await rejectedSeqs(resource)).length === 4);
      expect(await rejectedSeqs(resource)).toEqual([1, 2, 3, 4]);
      expect(upstream.received.filter((request) => request.url.startsWith('/crash/stale'))).toEqual([]);
    } finally {
      await holding.close();
    }
  });

  /** Log lines of a refusal the gate dropped (the coordinator refused its report for good). */
  const dropped = (gate: GateProcess): string[] => gate.logLines.filter((line) => line.includes('dropped'));

  it('data directory emptied while a newer fence was granted: the restarted gate refuses the stale token (409), its refusal seqs continue and reach the log', async () => {
    // The reproduction of apps/gate/README.md: stop the gate, empty its data directory, restart it,
    // write with an old token while the coordinator has already granted a newer fence.
    const resource = 'deploy-lost-dir';
    const first = await gateFor(resource);
    const oldest = await acquire(1, resource);
    expect((await write(first, '/lost/oldest', oldest.signedToken)).status).toBe(200);
    await release(1, resource, oldest.fence);
    const older = await acquire(2, resource);
    expect((await write(first, '/lost/older', older.signedToken)).status).toBe(200);
    expect((await write(first, '/lost/stale-1', oldest.signedToken)).status).toBe(409);
    await eventually('refusal #1 in the log', async () => (await rejectedSeqs(resource)).length === 1);
    await first.stop();
    await rm(join(dataRoot, resource), { recursive: true, force: true });
    await release(2, resource, older.fence);
    const current = await acquire(3, resource); // granted while the gate is down: it never saw this fence

    const second = await gateFor(resource);
    const stale = await write(second, '/lost/stale-2', oldest.signedToken);
    const staleOlder = await write(second, '/lost/stale-3', older.signedToken);
    const admitted = await write(second, '/lost/current', current.signedToken);

    expect(stale.status).toBe(409);
    expect(JSON.parse(stale.body)).toMatchObject({
      reason: 'stale-fence',
      seq: 2,
      rejected: { holderId: 'agent-1', fence: oldest.fence },
      current: { holderId: 'agent-3', fence: current.fence },
    });
    expect(staleOlder.status).toBe(409);
    expect(JSON.parse(staleOlder.body)).toMatchObject({ seq: 3 });
    expect(admitted.status).toBe(200);
    expect(upstream.received.filter((request) => request.url.startsWith('/lost/stale'))).toEqual([]);
    await eventually('the refusals to reach the log', async () => (await rejectedSeqs(resource)).length === 3);
    expect(await rejectedSeqs(resource)).toEqual([1, 2, 3]);
    expect(dropped(second)).toEqual([]);
  });

  it('coordinator down at start: writes get 503 coordinator-floor-unavailable and nothing is forwarded; once it answers, the floor is reconciled', async () => {
    const resource = 'deploy-down-at-start';
    const old = await acquire(1, resource);
    await release(1, resource, old.fence);
    const current = await acquire(2, resource);
    // A coordinator that answers nothing (every request held) while the gate starts with an empty data directory.
    const down = await startHoldingProxy(coordinator.url, /./);
    try {
      const gate = await gateFor(resource, { LEASE_FENCE_COORDINATOR_URL: down.url }, false);

      const refused = await write(gate, '/down-at-start/stale', old.signedToken);
      const refusedCurrent = await write(gate, '/down-at-start/current', current.signedToken);

      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body)).toMatchObject({ ok: false, reason: 'coordinator-floor-unavailable' });
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refusedCurrent.status).toBe(503);
      expect((await fetch(`${gate.url}${OWN}/readyz`)).status).toBe(503);
      expect(reached('/down-at-start/stale') + reached('/down-at-start/current')).toBe(0);

      down.release();
      await eventually('the gate to be ready', async () => (await fetch(`${gate.url}${OWN}/readyz`)).status === 200);
      expect((await write(gate, '/down-at-start/stale', old.signedToken)).status).toBe(409);
      expect((await write(gate, '/down-at-start/current', current.signedToken)).status).toBe(200);
      expect(reached('/down-at-start/stale')).toBe(0);
    } finally {
      await down.close();
    }
  });

  it('data directory restored from an old backup: the floor rises to the latest grant and seqs continue after the last one recorded', async () => {
    const resource = 'deploy-old-backup';
    const dataDir = join(dataRoot, resource);
    const backup = join(dataRoot, `${resource}.backup`);
    const first = await gateFor(resource);
    const old = await acquire(1, resource);
    expect((await write(first, '/backup/old', old.signedToken)).status).toBe(200);
    await first.stop();
    await cp(dataDir, backup, { recursive: true }); // the backup: floor at the old fence, no refusal yet

    const second = await gateFor(resource);
    await release(1, resource, old.fence);
    const current = await acquire(2, resource);
    expect((await write(second, '/backup/current', current.signedToken)).status).toBe(200);
    expect((await write(second, '/backup/stale-1', old.signedToken)).status).toBe(409);
    await eventually('refusal #1 in the log', async () => (await rejectedSeqs(resource)).length === 1);
    await second.stop();
    await rm(dataDir, { recursive: true, force: true });
    await cp(backup, dataDir, { recursive: true });

    const restored = await gateFor(resource);
    const stale = await write(restored, '/backup/stale-2', old.signedToken);

    expect(stale.status).toBe(409);
    expect(JSON.parse(stale.body)).toMatchObject({ seq: 2, current: { holderId: 'agent-2', fence: current.fence } });
    expect(await floorOf(restored)).toEqual({ holderId: 'agent-2', fence: current.fence });
    expect((await write(restored, '/backup/current-again', current.signedToken)).status).toBe(200);
    expect(reached('/backup/stale-1') + reached('/backup/stale-2')).toBe(0);
    await eventually('refusal #2 in the log', async () => (await rejectedSeqs(resource)).length === 2);
    expect(await rejectedSeqs(resource)).toEqual([1, 2]);
    expect(dropped(restored)).toEqual([]);
  });

  it('bad input: a 10 MB header, an upstream that hangs, resets or is down get clear answers; no crash, no lowered floor', async () => {
    const resource = 'deploy-bad-input';
    const gate = await gateFor(resource, { LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS: '300' });
    const lease = await acquire(1, resource);
    const status = async (path: string): Promise<number> => (await write(gate, path, lease.signedToken)).status;

    const huge = await rawStatus(
      new URL(gate.url),
      `POST /huge HTTP/1.1\r\nHost: x\r\nLease-Fence-Token: ${'a'.repeat(10 * 1024 * 1024)}\r\nContent-Length: 0\r\n\r\n`,
    );
    const hung = await write(gate, '/hang/1', lease.signedToken);
    const reset = await write(gate, '/reset/1', lease.signedToken);

    expect(huge).toBe(431);
    expect(hung.status).toBe(504);
    expect(JSON.parse(hung.body)).toMatchObject({ ok: false, reason: 'upstream-timeout' });
    expect(reset.status).toBe(502);
    expect(JSON.parse(reset.body)).toMatchObject({ ok: false, reason: 'upstream-unreachable' });
    expect(reached('/huge')).toBe(0);
    expect(await status('/after-bad-input')).toBe(200);
    expect(await floorOf(gate)).toEqual({ holderId: 'agent-1', fence: lease.fence });

    const downUpstream = await startRecordingUpstream();
    await downUpstream.close();
    const orphan = await gateFor('deploy-no-upstream', { LEASE_FENCE_GATE_UPSTREAM: downUpstream.url });
    const orphanLease = await acquire(1, 'deploy-no-upstream');
    const down = await write(orphan, '/down', orphanLease.signedToken);
    const downRead = await fetch(`${orphan.url}/down`);
    expect(down.status).toBe(502);
    expect(JSON.parse(down.body)).toMatchObject({ ok: false, reason: 'upstream-unreachable' });
    expect(downRead.status).toBe(502);
    expect((await fetch(`${orphan.url}${OWN}/healthz`)).status).toBe(200);
  });

  it('answers 503 and forwards nothing when the floor cannot be saved', async () => {
    const resource = 'deploy-unwritable';
    const gate = await gateFor(resource);
    const lease = await acquire(1, resource);
    await rm(join(dataRoot, resource), { recursive: true, force: true });

    const answer = await write(gate, '/unwritable', lease.signedToken);

    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, reason: 'floor-store-unavailable' });
    expect(reached('/unwritable')).toBe(0);
  });

  it('fuzz: random methods, paths, headers and tokens never crash it, never forward an unadmitted write, never lower the floor', async () => {
    const resource = 'deploy-fuzz';
    const gate = await gateFor(resource);
    const older = await acquire(1, resource);
    await release(1, resource, older.fence);
    const lease = await acquire(2, resource);
    expect((await write(gate, '/fuzz/seed', lease.signedToken)).status).toBe(200);
    const floor = await floorOf(gate);
    const genuine = lease.signedToken;
    const token = fc.oneof(
      fc.constant(undefined),
      fc.constant(genuine),
      fc.constant(older.signedToken),
      fc.string({ maxLength: 300 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
      fc
        .tuple(fc.nat(genuine.length - 1), fc.constantFrom('A', 'b', '.', '-', '_'))
        .map(([at, char]) => `${genuine.slice(0, at)}${char}${genuine.slice(at + 1)}`),
      fc.nat(genuine.length).map((cut) => genuine.slice(0, cut)),
    );
    const request = fc.record({
      method: fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'),
      path: fc.webPath().map((path) => `/fuzz${path.startsWith('/') ? path : `/${path}`}`),
      token,
      body: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
      header: fc.option(
        fc.tuple(
          fc.constantFrom('x-a', 'content-type', 'expect', 'te', 'transfer-encoding', 'upgrade'),
          fc.string({ maxLength: 40 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
        ),
        { nil: undefined },
      ),
    });
    const outcomes: { method: string; path: string; status: number; admittedWrite: boolean }[] = [];
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const path = input.path.slice(0, 2000);
        const status = await rawStatus(
          new URL(gate.url),
          [
            `${input.method} ${encodeURI(decodeURIComponentSafe(path))} HTTP/1.1`,
            'Host: fuzz',
            ...(input.token === undefined ? [] : [`Lease-Fence-Token: ${input.token}`]),
            ...(input.header === undefined ? [] : [`${input.header[0]}: ${input.header[1]}`]),
            `Content-Length: ${Buffer.byteLength(input.body ?? '')}`,
            'Connection: close',
            '',
            input.body ?? '',
          ].join('\r\n'),
        );
        expect(status, `${input.method} ${path}`).toBeGreaterThan(0);
        expect(status).toBeLessThan(500);
        outcomes.push({
          method: input.method,
          path,
          status,
          admittedWrite: !['GET', 'HEAD', 'OPTIONS'].includes(input.method) && status === 200,
        });
      }),
      { numRuns: 300, seed: 13 },
    );

    const writesThatReached = upstream.received.filter(
      (received) =>
        received.url.startsWith('/fuzz') &&
        received.url !== '/fuzz/seed' &&
        !['GET', 'HEAD', 'OPTIONS'].includes(received.method),
    );
    expect(writesThatReached.length).toBe(outcomes.filter((outcome) => outcome.admittedWrite).length);
    expect(await floorOf(gate)).toEqual(floor);
    expect((await fetch(`${gate.url}${OWN}/healthz`)).status).toBe(200);
  }, 120_000);
});

const decodeURIComponentSafe = (text: string): string => {
  try {
    return decodeURI(text);
  } catch {
    return text;
  }
};

/** Writes `raw` on a socket of its own and resolves with the status of the first answer (0 when the connection closed without one, or none came within 20 s). */
function rawStatus(url: URL, raw: string): Promise<number> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => socket.destroy(), 20_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (/^HTTP\/1\.[01] \d{3}/.test(answer)) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0));
    });
    socket.write(raw, 'latin1');
  });
}

/** One request with node:http (which, unlike fetch, sends any Connection header as given). */
function httpSend(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      new URL(path, url),
      { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, headers: response.headers }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
