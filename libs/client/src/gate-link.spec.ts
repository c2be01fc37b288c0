import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATE_LINK_PATH, type GateToCoordinatorFrame } from '@lease-fence/protocol';
import { FenceGate } from 'lease-fence';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { openFileFloorStore } from './file-floor-store.js';
import { commitDurably, gateOptionsFrom, type FloorStore, type GateState } from './floor-store.js';
import { openGateLink, type GateLink, type GateLinkEvent } from './gate-link.js';

/** A coordinator stand-in: accepts links, records what gates send, lets the test send frames. */
async function fakeCoordinator(options: { readonly autoPong?: boolean } = {}) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, path: GATE_LINK_PATH, ...options });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const received: GateToCoordinatorFrame[] = [];
  const sockets: WebSocket[] = [];
  const authorizations: (string | undefined)[] = [];
  let onFrame = (): void => undefined;
  server.on('connection', (socket, request) => {
    authorizations.push(request.headers.authorization);
    sockets.push(socket);
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as GateToCoordinatorFrame;
      received.push(frame);
      if (frame.type === 'guard') socket.send(JSON.stringify({ type: 'guarding', resources: frame.resources }));
      onFrame();
    });
  });
  const until = async (predicate: () => boolean): Promise<void> => {
    while (!predicate())
      await new Promise<void>((resolve) => {
        onFrame = resolve;
        setTimeout(resolve, 20);
      });
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    sockets,
    authorizations,
    until,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of server.clients) s.terminate();
        server.close(() => resolve());
      }),
  };
}

/**
 * How long to wait for the link to act on a frame: generous, as CI machines can be busy; a
 * correct run ends as soon as the condition holds (a fixed sleep here made the tests flaky).
 */
const WAIT = { timeout: 10_000, interval: 10 };

/**
 * Resolves once `socket`'s peer answered a ping. The peer's frames arrive in order on one
 * connection, so any frame it sent before handling the ping has been received by then.
 */
const roundTrip = (socket: WebSocket): Promise<void> =>
  new Promise((resolve) => {
    socket.once('pong', () => resolve());
    socket.ping();
  });

/** A floor store whose saves wait until the test releases them. */
function gatedStore() {
  const saved: GateState[] = [];
  let release = (): void => undefined;
  const store: FloorStore = {
    load: async () => saved.at(-1),
    save: (state) =>
      new Promise<void>((resolve) => {
        release = () => {
          saved.push(state);
          resolve();
        };
      }),
  };
  return { store, saved, release: () => release() };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

describe('openGateLink', () => {
  it('guards its resources, and answers admitted only after the raised floor is saved', async () => {
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const gate = new FenceGate('deploy-slot');
    const { store, saved, release } = gatedStore();
    const events: GateLinkEvent[] = [];
    const link: GateLink = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store }],
      onEvent: (e) => events.push(e),
    });
    opened.push(link);
    await link.whenGuarding();
    expect(coordinator.received).toEqual([{ type: 'guard', resources: ['deploy-slot'] }]);
    expect(coordinator.authorizations).toEqual(['Bearer gate-token']);

    coordinator.sockets[0]!.send(
      JSON.stringify({ type: 'admit', id: 5, resource: 'deploy-slot', holderId: 'agent-b', fence: 9 }),
    );
    await vi.waitFor(() => expect(gate.floor).toEqual({ holderId: 'agent-b', fence: 9 }), WAIT);
    await roundTrip(coordinator.sockets[0]!); // an answer sent before the pong would have arrived by now
    expect(coordinator.received).toHaveLength(1); // not answered while the save is pending

    release();
    await coordinator.until(() => coordinator.received.length === 2);
    expect(saved).toEqual([expect.objectContaining({ floor: { holderId: 'agent-b', fence: 9 } })]);
    expect(coordinator.received[1]).toEqual({ type: 'admitted', id: 5, resource: 'deploy-slot', fence: 9 });
    expect(events).toContainEqual({ type: 'admitted', resource: 'deploy-slot', holderId: 'agent-b', fence: 9 });
  });

  it('sends a status frame only while guarding, and says whether it did', async () => {
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const gate = new FenceGate('deploy-slot');
    const status = {
      resources: [{ resource: 'deploy-slot', floor: null, outboxBacklog: 0, refusals: 2, invalidTokens: 1 }],
      reportedAtMillis: 1_700_000_000_000,
    };
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store: gatedStore().store }],
    });
    opened.push(link);
    const beforeGuarding = link.sendStatus(status);
    await link.whenGuarding();

    const sent = link.sendStatus(status);
    await coordinator.until(() => coordinator.received.length === 2);

    expect(beforeGuarding).toBe(false);
    expect(sent).toBe(true);
    expect(coordinator.received).toEqual([
      { type: 'guard', resources: ['deploy-slot'] },
      { type: 'status', ...status },
    ]);
  });

  it("runs the SDK guide's gate-link example: a durable floor store, guarding once linked, admits saved before answered", async () => {
    // Arrange
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const dataDir = await mkdtemp(join(tmpdir(), 'gate-link-example-'));
    opened.push({ close: () => rm(dataDir, { recursive: true, force: true }) });
    const baseUrl = coordinator.url;
    const gateToken = 'gate-token';

    // Act
    // #region gate-link
    const store = await openFileFloorStore({
      path: join(dataDir, 'deploy-slot-a.floor.json'),
      resource: 'deploy-slot-a',
    });
    const gate = new FenceGate('deploy-slot-a', gateOptionsFrom(await store.load()));
    const link = openGateLink({ baseUrl, token: gateToken, guards: [{ gate, store }] });
    await link.whenGuarding(); // the coordinator now routes admits of deploy-slot-a here
    // #endregion
    opened.push(link);
    coordinator.sockets[0]!.send(
      JSON.stringify({ type: 'admit', id: 1, resource: 'deploy-slot-a', holderId: 'agent-b', fence: 4 }),
    );
    await coordinator.until(() => coordinator.received.length === 2);

    // Assert: the admit was answered only once the raised floor was in the file
    expect(coordinator.received).toEqual([
      { type: 'guard', resources: ['deploy-slot-a'] },
      { type: 'admitted', id: 1, resource: 'deploy-slot-a', fence: 4 },
    ]);
    const reopened = await openFileFloorStore({
      path: join(dataDir, 'deploy-slot-a.floor.json'),
      resource: 'deploy-slot-a',
    });
    expect((await reopened.load())?.floor).toEqual({ holderId: 'agent-b', fence: 4 });
  });

  it('does not answer an admit below its floor, and reports it', async () => {
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const gate = new FenceGate('deploy-slot', { initialFloor: { holderId: 'agent-c', fence: 12 } });
    const events: GateLinkEvent[] = [];
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store: { load: async () => undefined, save: async () => undefined } }],
      onEvent: (e) => events.push(e),
    });
    opened.push(link);
    await link.whenGuarding();
    coordinator.sockets[0]!.send(
      JSON.stringify({ type: 'admit', id: 1, resource: 'deploy-slot', holderId: 'agent-b', fence: 9 }),
    );
    await vi.waitFor(
      () => expect(events).toContainEqual(expect.objectContaining({ type: 'admit-failed', fence: 9 })),
      WAIT,
    );
    await roundTrip(coordinator.sockets[0]!); // an answer sent before the pong would have arrived by now
    expect(coordinator.received).toHaveLength(1);
    expect(gate.floor).toEqual({ holderId: 'agent-c', fence: 12 });
  });

  it("records nothing for an admit it refuses, as a SQL gate's guard does: the next write's refusal takes the next seq, so the coordinator sees no gap", async () => {
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const gate = new FenceGate('deploy-slot', { initialFloor: { holderId: 'agent-c', fence: 12 }, initialSeq: 4 });
    const saved: GateState[] = [];
    const store: FloorStore = { load: async () => saved.at(-1), save: async (state) => void saved.push(state) };
    const events: GateLinkEvent[] = [];
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store }],
      onEvent: (e) => events.push(e),
    });
    opened.push(link);
    await link.whenGuarding();

    // Below the floor (stale) and the floor's fence for another holder (a double grant): neither is a write.
    for (const [id, holderId, fence] of [
      [1, 'agent-b', 9],
      [2, 'agent-b', 12],
    ] as const)
      coordinator.sockets[0]!.send(JSON.stringify({ type: 'admit', id, resource: 'deploy-slot', holderId, fence }));
    await vi.waitFor(
      () =>
        expect(events.filter((e) => e.type === 'admit-failed').map((e) => (e as { fence: number }).fence)).toEqual([
          9, 12,
        ]),
      WAIT,
    );
    expect(gate.nextSeq).toBe(4);
    expect(gate.rejections).toEqual([]);

    // The next stale write is refusal 4: seqs stay gap-free, so its report raises no RejectionsMissing.
    await expect(
      commitDurably(gate, store, { resource: 'deploy-slot', holderId: 'agent-a', fence: 3 }, async () => undefined),
    ).rejects.toMatchObject({ rejection: { seq: 4 } });
    expect(saved.at(-1)).toMatchObject({ nextSeq: 5, outbox: [expect.objectContaining({ seq: 4 })] });
  });

  it('drops a link whose coordinator went silent (socket open, no pong) and links again', async () => {
    // A frozen or partitioned-away coordinator: the socket stays open, nothing comes back
    const coordinator = await fakeCoordinator({ autoPong: false });
    opened.push(coordinator);
    const events: GateLinkEvent[] = [];
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [
        { gate: new FenceGate('deploy-slot'), store: { load: async () => undefined, save: async () => undefined } },
      ],
      pingIntervalMillis: 50,
      reconnect: { initialDelayMillis: 10, maxDelayMillis: 10 },
      onEvent: (e) => events.push(e),
    });
    opened.push(link);
    await link.whenGuarding();

    await vi.waitFor(() => expect(coordinator.authorizations.length).toBeGreaterThanOrEqual(2), WAIT);
    expect(events.map((e) => e.type)).toContain('disconnected');
    expect(() =>
      openGateLink({
        baseUrl: coordinator.url,
        token: 't',
        guards: [{ gate: new FenceGate('x'), store: { load: async () => undefined, save: async () => undefined } }],
        pingIntervalMillis: 0,
      }),
    ).toThrow(/pingIntervalMillis/);
  });

  it('reconnects after the link drops and guards again', async () => {
    const coordinator = await fakeCoordinator();
    opened.push(coordinator);
    const gate = new FenceGate('deploy-slot');
    const link = openGateLink({
      baseUrl: coordinator.url,
      token: 'gate-token',
      guards: [{ gate, store: { load: async () => undefined, save: async () => undefined } }],
      reconnect: { initialDelayMillis: 5, maxDelayMillis: 10 },
    });
    opened.push(link);
    await link.whenGuarding();
    coordinator.sockets[0]!.terminate();
    await coordinator.until(() => coordinator.received.filter((f) => f.type === 'guard').length === 2);
    await link.whenGuarding();
    expect(coordinator.sockets).toHaveLength(2);
  });

  it.each([
    ['baseUrl', { baseUrl: 'ftp://x', token: 't', guards: [{ gate: new FenceGate('r'), store: {} as FloorStore }] }],
    [
      'token',
      { baseUrl: 'http://127.0.0.1:1', token: '', guards: [{ gate: new FenceGate('r'), store: {} as FloorStore }] },
    ],
    ['guards', { baseUrl: 'http://127.0.0.1:1', token: 't', guards: [] }],
    [
      'guards.1',
      {
        baseUrl: 'http://127.0.0.1:1',
        token: 't',
        guards: [
          { gate: new FenceGate('r'), store: {} as FloorStore },
          { gate: new FenceGate('r'), store: {} as FloorStore },
        ],
      },
    ],
  ])('refuses a bad %s, naming it', (field, options) => {
    expect(() => openGateLink(options)).toThrow(field);
  });
});
