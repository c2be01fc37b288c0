// Adapter of ../shared/bench-peers' workload.mjs for the lease-fence coordinator service
// (apps/coordinator), so our service runs the same loop, with the same statistics and the same
// fence/overlap checks, as etcd and Redis in one run.sh invocation.
//
// Our API (docs/service.md § Routes):
//   POST /v1/leases/:resource/acquire {requestId, ttlMillis} → 200 {ok:true, grant:{fence}} | 409 {ok:false, reason:'held'|'already-held'}
//   POST /v1/leases/:resource/renew   {requestId, fence, ttlMillis} → 200 {ok:true} | 409 not-holder | 410 expired
//   POST /v1/leases/:resource/release {fence} → 200 {ok:true} | 409 not-holder | 410 expired
// The holder is the authenticated agent, so every workload agent gets its own agent token (and
// so its own holderId), read from the tokens file named by LEASE_FENCE_BENCH_TOKENS_FILE (agent
// entries in file order; agent i uses the i-th). The workload's per-iteration `owner` becomes
// the requestId, so every acquire is a new intent.
//
// Each workload agent has its own keep-alive HTTP/1.1 connection (an http.Agent with one
// socket). A denial (409/410) is an answer, not an error; any other status is an error.
//
// When LEASE_FENCE_BENCH_SIDE_FILE is set, close() appends one JSON line to it with the
// server's resident memory (VmRSS sampled every 100 ms during the run, and VmHWM, the peak),
// read from /proc/<server pid>/status: run.sh records the server's CPU but not its memory. The
// same line carries the group commit seen from the coordinator's GET /metrics (viewer token of
// the tokens file), read after /readyz and again at close(): appends (one transaction and one
// fsync each), commands and events they carried, and the seconds they took, so a round says how
// large each transport's batches were (warm-up included). It also carries the server's CPU over the
// same window, read from /proc/<server pid>/stat and /proc/<server pid>/task/<server pid>/stat (its
// main thread: the event loop, without the SQLite writer thread and libuv's pool), per command the
// coordinator decided: the CPU cost of an operation, a steadier figure than operations per second
// on a machine whose other load takes CPU from both sides.
//
// When LEASE_FENCE_BENCH_GATE_LINK=1 (bench:service's fence-first mode), create() also plays the
// resource's gate: it opens the SDK's gate link (openGateLink, with the tokens file's gate token)
// for every workload resource, each with a FenceGate and a file floor store in a temp dir (a
// durable save per admit, as a deployed gate does), and waits until the coordinator routes
// admits to it before the workload starts. It runs in this client process, so its CPU is counted
// as client CPU.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MIB = 1024 * 1024;

/** Reads one `Vm*` field of /proc/PID/status in bytes, or null when the process is gone. */
function procMemoryBytes(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** USER_HZ: clock ticks per second of /proc's CPU times (100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU of a process (`/proc/PID/stat`) or of one of its threads
 * (`/proc/PID/task/TID/stat`) so far, in microseconds, or null when it is gone.
 */
function procCpuMicros(path) {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** The server's CPU so far (microseconds): the whole process and its main thread (the event loop), or null. */
function serverCpuMicros(pid) {
  if (!pid) return null;
  const process = procCpuMicros(`/proc/${pid}/stat`);
  const mainThread = procCpuMicros(`/proc/${pid}/task/${pid}/stat`);
  return process === null || mainThread === null ? null : { process, mainThread };
}

/** The first gate token of the tokens file. */
function gateTokenFrom(file) {
  const gate = JSON.parse(readFileSync(file, 'utf8')).find((entry) => entry.role === 'gate');
  if (gate === undefined)
    throw new Error('lease-fence adapter: the fence-first mode needs a gate token in LEASE_FENCE_BENCH_TOKENS_FILE');
  return gate.token;
}

/**
 * Opens the gate link for `res-0` … `res-(resources - 1)` and resolves once the coordinator routes
 * admits to it; `close()` closes it and removes the floor files.
 */
async function openBenchGateLink(cfg) {
  const { openFileFloorStore, openGateLink } = await import('@lease-fence/client');
  const { FenceGate } = await import('lease-fence');
  const directory = mkdtempSync(join(tmpdir(), 'lease-fence-bench-gate-'));
  const guards = [];
  for (let r = 0; r < cfg.resources; r += 1) {
    const resource = `res-${r}`;
    guards.push({
      gate: new FenceGate(resource),
      store: await openFileFloorStore({ path: join(directory, `${resource}.floor.json`), resource }),
    });
  }
  const link = openGateLink({
    baseUrl: `http://${cfg.host}:${cfg.port}`,
    token: gateTokenFrom(process.env.LEASE_FENCE_BENCH_TOKENS_FILE),
    guards,
  });
  const guarding = await Promise.race([
    link.whenGuarding().then(() => true),
    new Promise((resolve) => setTimeout(resolve, 30_000, false)),
  ]);
  if (!guarding) {
    await link.close();
    throw new Error('lease-fence adapter: the gate link was not guarding after 30 s');
  }
  return {
    async close() {
      await link.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The first viewer token of the tokens file (GET /metrics). */
function viewerTokenFrom(file) {
  return JSON.parse(readFileSync(file, 'utf8')).find((entry) => entry.role === 'viewer')?.token;
}

/** The group-commit totals in a Prometheus text: `_sum` and `_count` of the append histograms. */
function groupCommitTotals(text) {
  const value = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    appends: value('lease_fence_append_batch_commands_count'),
    commands: value('lease_fence_append_batch_commands_sum'),
    events: value('lease_fence_append_batch_events_sum'),
    appendSeconds: value('lease_fence_append_duration_seconds_sum'),
    atMillis: Date.now(),
  };
}

/** The agent tokens of the tokens file, in file order. */
function agentTokensFrom(file) {
  if (!file) throw new Error("lease-fence adapter: set LEASE_FENCE_BENCH_TOKENS_FILE to the coordinator's tokens file");
  const entries = JSON.parse(readFileSync(file, 'utf8'));
  return entries.filter((entry) => entry.role === 'agent').map((entry) => entry.token);
}

export async function create(cfg) {
  if (!cfg.endpoint) throw new Error('lease-fence adapter: needs --endpoint 127.0.0.1:PORT');
  const agentTokens = agentTokensFrom(process.env.LEASE_FENCE_BENCH_TOKENS_FILE);
  if (agentTokens.length < cfg.concurrency) {
    throw new Error(
      `lease-fence adapter: ${cfg.concurrency} agents need ${cfg.concurrency} agent tokens, the tokens file has ${agentTokens.length}`,
    );
  }
  const httpAgents = [];

  /** One request on `agent`; resolves { status, body } for any status, rejects on a network error or timeout. */
  const send = (agent, method, path, token, body) =>
    new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const headers = { authorization: `Bearer ${token}` };
      if (data !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(data);
      }
      const request = http.request({ host: cfg.host, port: cfg.port, method, path, agent, headers }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: response.statusCode, body: text === '' ? {} : JSON.parse(text) });
          } catch {
            reject(new Error(`${method} ${path}: HTTP ${response.statusCode}, not JSON: ${text.slice(0, 200)}`));
          }
        });
        response.on('error', reject);
      });
      request.setTimeout(cfg.opTimeoutMs, () =>
        request.destroy(new Error(`timeout after ${cfg.opTimeoutMs} ms: ${method} ${path}`)),
      );
      request.on('error', reject);
      request.end(data);
    });

  const unexpected = (what, reply) =>
    new Error(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);

  // The service listens before recovery finishes: wait for /readyz so warm-up is not spent on 503s.
  const probe = new http.Agent({ keepAlive: false });
  httpAgents.push(probe);
  const readyBy = Date.now() + 30_000;
  let readiness;
  for (;;) {
    readiness = await send(probe, 'GET', '/readyz', agentTokens[0]).catch((error) => ({
      status: 0,
      body: { reason: error.message },
    }));
    if (readiness.status === 200) break;
    if (Date.now() > readyBy) throw unexpected('GET /readyz (not ready after 30 s)', readiness);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const gateLink = process.env.LEASE_FENCE_BENCH_GATE_LINK === '1' ? await openBenchGateLink(cfg) : undefined;

  const viewerToken = viewerTokenFrom(process.env.LEASE_FENCE_BENCH_TOKENS_FILE);
  /** The group-commit totals now, or undefined without a viewer token or on any failure (figures only). */
  const readGroupCommit = async () => {
    if (viewerToken === undefined) return undefined;
    const reply = await new Promise((resolve) => {
      const request = http.get(
        {
          host: cfg.host,
          port: cfg.port,
          path: '/metrics',
          agent: probe,
          headers: { authorization: `Bearer ${viewerToken}` },
        },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () =>
            resolve(response.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : undefined),
          );
          response.on('error', () => resolve(undefined));
        },
      );
      request.on('error', () => resolve(undefined));
    });
    return reply === undefined ? undefined : groupCommitTotals(reply);
  };
  const groupCommitAtStart = await readGroupCommit();
  const cpuAtStart = serverCpuMicros(cfg.serverPid);

  const memory = { samples: 0, rssSumBytes: 0, rssMaxBytes: 0 };
  const sampler = cfg.serverPid
    ? setInterval(() => {
        const rss = procMemoryBytes(cfg.serverPid, 'VmRSS');
        if (rss === null) return;
        memory.samples += 1;
        memory.rssSumBytes += rss;
        memory.rssMaxBytes = Math.max(memory.rssMaxBytes, rss);
      }, 100)
    : undefined;
  sampler?.unref();

  return {
    async info() {
      return {
        server_version: `lease-fence coordinator (boot ${readiness.body.bootId ?? '?'})`,
        durability:
          'SQLite log, WAL, synchronous=FULL: every grant/renew/release fsynced before the reply (group commit); bearer-token auth' +
          (gateLink === undefined
            ? ''
            : '; fence-first: each grant admitted by a gate (file floor store, fsync) before the reply'),
      };
    },
    makeAgent(id) {
      const token = agentTokens[id];
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      httpAgents.push(agent);
      const path = (r, op) => `/v1/leases/res-${r}/${op}`;
      return {
        async acquire(r, owner) {
          const reply = await send(agent, 'POST', path(r, 'acquire'), token, {
            requestId: owner,
            ttlMillis: cfg.ttlMs,
          });
          if (reply.status === 200 && reply.body.ok === true) {
            const { fence } = reply.body.grant;
            return { ok: true, token: BigInt(fence), handle: { r, owner, fence } };
          }
          if (reply.status === 409) return { ok: false };
          throw unexpected('acquire', reply);
        },
        async renew(handle) {
          const reply = await send(agent, 'POST', path(handle.r, 'renew'), token, {
            requestId: `${handle.owner}-renew`,
            fence: handle.fence,
            ttlMillis: cfg.ttlMs,
          });
          if (reply.status === 200) return reply.body.ok === true;
          if (reply.status === 409 || reply.status === 410) return false;
          throw unexpected('renew', reply);
        },
        async release(handle) {
          const reply = await send(agent, 'POST', path(handle.r, 'release'), token, { fence: handle.fence });
          if (reply.status === 200) return reply.body.ok === true;
          if (reply.status === 409 || reply.status === 410) return false;
          throw unexpected('release', reply);
        },
      };
    },
    async close() {
      if (sampler !== undefined) clearInterval(sampler);
      const sideFile = process.env.LEASE_FENCE_BENCH_SIDE_FILE;
      if (sideFile && cfg.serverPid) {
        const end = await readGroupCommit();
        const cpuAtEnd = serverCpuMicros(cfg.serverPid);
        const start = groupCommitAtStart;
        const delta = (key) => (end === undefined || start === undefined ? null : end[key] - start[key]);
        const appends = delta('appends');
        const commands = delta('commands');
        const cpuPerCommand = (key) =>
          cpuAtStart === null || cpuAtEnd === null || !commands
            ? null
            : Number(((cpuAtEnd[key] - cpuAtStart[key]) / commands).toFixed(1));
        const seconds = delta('atMillis') === null ? null : delta('atMillis') / 1000;
        const record = {
          appends_per_s: appends === null || !seconds ? null : Math.round(appends / seconds),
          batch_commands_mean: appends ? Number((delta('commands') / appends).toFixed(2)) : null,
          batch_events_mean: appends ? Number((delta('events') / appends).toFixed(2)) : null,
          append_ms_mean: appends ? Number(((delta('appendSeconds') * 1000) / appends).toFixed(3)) : null,
          server_cpu_us_per_command: cpuPerCommand('process'),
          server_main_thread_cpu_us_per_command: cpuPerCommand('mainThread'),
          system: cfg.label,
          round: cfg.round,
          server_rss_mean_mib: memory.samples ? Math.round(memory.rssSumBytes / memory.samples / MIB) : null,
          server_rss_max_mib: memory.samples ? Math.round(memory.rssMaxBytes / MIB) : null,
          server_rss_peak_mib: Math.round((procMemoryBytes(cfg.serverPid, 'VmHWM') ?? 0) / MIB) || null,
        };
        appendFileSync(sideFile, `${JSON.stringify(record)}\n`);
      }
      for (const agent of httpAgents) agent.destroy();
      await gateLink?.close();
    },
  };
}
