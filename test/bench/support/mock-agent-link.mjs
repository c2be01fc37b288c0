#!/usr/bin/env node
// An in-memory, NON-durable stand-in for the coordinator's agent link, for bench:service's
// `mock-ws` system (test/bench/bench-service.ts): what one Node process serving WebSockets and
// JSON reaches on this machine, as the peer harness's `mock-http` is for HTTP. It is a ceiling,
// not a peer: no log, no fsync, no signature, no schema check, no idempotency by requestId.
//
//   node test/bench/support/mock-agent-link.mjs PORT
//
// It speaks the agent link's frames (libs/protocol/src/agent-link.ts) on `/v1/agent` with `ws`,
// the library the coordinator uses: `{id, op, resource, body}` → `{id, status, body}`, with the
// statuses and bodies the coordinator's lease routes answer (200 `{ok: true, grant: {fence}}`, 409
// `{ok: false, reason}`), so the same SDK client (`CoordinatorWebSocket`) drives it through the same
// adapter (test/bench/adapters/lease-fence-ws.mjs). The bearer token of the upgrade is the
// holder (not checked against a list). A Map of resource → holder and a fence counter per resource
// are the whole state.
//
// For the adapter it also answers `GET /readyz` (200) and `GET /metrics` with the one counter the
// adapter reads per round: `lease_fence_append_batch_commands_sum`, the operations answered, so
// the side file gets this process's CPU and main-thread CPU per operation like the coordinator's
// (its append count stays 0: nothing is appended). Listens on 127.0.0.1 only.
import http from 'node:http';
import { WebSocketServer } from 'ws';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: mock-agent-link.mjs PORT');
  process.exit(2);
}

/** resource → { holder, fence, expiresAtMillis } of its live lease. */
const held = new Map();
/** resource → the last fence granted for it. */
const fences = new Map();
let answered = 0;

/** One operation: [status, body], as the coordinator's lease routes answer it. */
function decide(holder, op, resource, body, nowMillis) {
  const lease = held.get(resource);
  const live = lease !== undefined && lease.expiresAtMillis > nowMillis;
  switch (op) {
    case 'acquire': {
      if (live)
        return lease.holder === holder
          ? [409, { ok: false, reason: 'already-held', fence: lease.fence }]
          : [409, { ok: false, reason: 'held', heldBy: lease.holder }];
      const fence = (fences.get(resource) ?? 0) + 1;
      fences.set(resource, fence);
      held.set(resource, { holder, fence, expiresAtMillis: nowMillis + body.ttlMillis });
      return [200, { ok: true, grant: { resource, holderId: holder, fence, ttlMillis: body.ttlMillis } }];
    }
    case 'renew':
      if (!live) return [410, { ok: false, reason: 'expired' }];
      if (lease.holder !== holder || lease.fence !== body.fence) return [409, { ok: false, reason: 'not-holder' }];
      lease.expiresAtMillis = nowMillis + body.ttlMillis;
      return [200, { ok: true }];
    case 'release':
      if (!live) return [410, { ok: false, reason: 'expired' }];
      if (lease.holder !== holder || lease.fence !== body.fence) return [409, { ok: false, reason: 'not-holder' }];
      held.delete(resource);
      return [200, { ok: true }];
    default:
      return [
        400,
        { error: 'invalid-request', issues: [{ path: 'op', message: 'must be one of acquire, renew, release' }] },
      ];
  }
}

const server = http.createServer((request, response) => {
  const text =
    request.url === '/readyz'
      ? JSON.stringify({ ready: true, bootId: 'mock-agent-link' })
      : request.url === '/metrics'
        ? `lease_fence_append_batch_commands_sum ${answered}\nlease_fence_append_batch_commands_count 0\n` +
          'lease_fence_append_batch_events_sum 0\nlease_fence_append_duration_seconds_sum 0\n'
        : undefined;
  response.writeHead(text === undefined ? 404 : 200, { 'content-type': 'text/plain' });
  response.end(text ?? '');
});
const sockets = new WebSocketServer({
  server,
  path: '/v1/agent',
  perMessageDeflate: false,
  handleProtocols: (offered) => (offered.has('lease-fence.agent.v1') ? 'lease-fence.agent.v1' : false),
});
sockets.on('connection', (socket, request) => {
  const holder = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
  socket.on('message', (data) => {
    let reply;
    try {
      const { id, op, resource, body } = JSON.parse(data.toString());
      const [status, answer] = decide(holder, op, resource, body, Date.now());
      reply = { id, status, body: answer };
    } catch (error) {
      reply = { id: null, status: 400, body: { error: 'invalid-request', message: String(error) } };
    }
    answered += 1;
    socket.send(JSON.stringify(reply));
  });
});
server.listen(port, '127.0.0.1', () => console.error(`mock-agent-link listening on 127.0.0.1:${port}`));
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    for (const socket of sockets.clients) socket.terminate();
    server.close();
    process.exit(0);
  });
