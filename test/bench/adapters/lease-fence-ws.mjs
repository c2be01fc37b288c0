// Adapter of ../shared/bench-peers' workload.mjs for the lease-fence coordinator over the SDK's
// persistent agent transport (the `/v1/agent` WebSocket, `CoordinatorWebSocket` of the built
// @lease-fence/client, which `LeaseFenceClient({ transport: 'websocket' })` uses): one connection
// per workload agent, no sharing, each with its own agent token (so its own holderId), read from
// LEASE_FENCE_BENCH_TOKENS_FILE like ./lease-fence-coordinator.mjs (the HTTP adapter, whose
// /readyz wait and memory sampling this one reuses through its create()).
//
// The workload's `owner` becomes the requestId; renew sends `<owner>-renew`, release the fence,
// exactly as the HTTP adapter does. Replies are taken as the coordinator sends them (the HTTP
// adapter does not validate them either): statuses are checked, bodies are not re-parsed with zod,
// so the client's CPU is the transport's, not the SDK's validation.
import { readFileSync } from 'node:fs';
import { create as createHttpAdapter } from './lease-fence-coordinator.mjs';

/** Accepts any body: the status decides, as in the HTTP adapter. */
const ANY = { safeParse: (data) => ({ success: true, data }) };
const REPLIES = { 200: ANY, 409: ANY, 410: ANY };

export async function create(cfg) {
  const { CoordinatorWebSocket } = await import('@lease-fence/client');
  const http = await createHttpAdapter(cfg); // waits for /readyz; samples the server's memory
  const agentTokens = JSON.parse(readFileSync(process.env.LEASE_FENCE_BENCH_TOKENS_FILE, 'utf8'))
    .filter((entry) => entry.role === 'agent')
    .map((entry) => entry.token);
  const links = [];
  const unexpected = (what, reply) =>
    new Error(`${what}: status ${reply.status} ${JSON.stringify(reply.value).slice(0, 200)}`);
  return {
    async info() {
      const info = await http.info();
      return { ...info, server_version: `${info.server_version}, agent link (WebSocket /v1/agent)` };
    },
    makeAgent(id) {
      const link = new CoordinatorWebSocket('bench', {
        baseUrl: `http://${cfg.host}:${cfg.port}`,
        token: agentTokens[id],
        timeoutMillis: cfg.opTimeoutMs,
        retry: { maxAttempts: 1 },
      });
      links.push(link);
      const send = (op, r, body) => link.request(`${op} res-${r}`, op, `res-${r}`, body, REPLIES);
      return {
        async acquire(r, owner) {
          const reply = await send('acquire', r, { requestId: owner, ttlMillis: cfg.ttlMs });
          if (reply.status === 200 && reply.value.ok === true) {
            const { fence } = reply.value.grant;
            return { ok: true, token: BigInt(fence), handle: { r, owner, fence } };
          }
          if (reply.status === 409) return { ok: false };
          throw unexpected('acquire', reply);
        },
        async renew(handle) {
          const reply = await send('renew', handle.r, {
            requestId: `${handle.owner}-renew`,
            fence: handle.fence,
            ttlMillis: cfg.ttlMs,
          });
          if (reply.status === 200) return reply.value.ok === true;
          if (reply.status === 409 || reply.status === 410) return false;
          throw unexpected('renew', reply);
        },
        async release(handle) {
          const reply = await send('release', handle.r, { fence: handle.fence });
          if (reply.status === 200) return reply.value.ok === true;
          if (reply.status === 409 || reply.status === 410) return false;
          throw unexpected('release', reply);
        },
      };
    },
    async close() {
      await Promise.all(links.map((link) => link.close()));
      await http.close();
    },
  };
}
