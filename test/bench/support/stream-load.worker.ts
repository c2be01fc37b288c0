/**
 * The load of `bench-stream`, in a worker thread so the viewers' event loop cannot starve it:
 * one acquire → release loop per agent token, on resources no other agent takes (never contended),
 * paced by a token bucket to `eventsPerSecond` (2 events per pair), until told to stop.
 * Posts `{ pairs, errors }` every 100 ms and once more when it has stopped.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/** What the parent passes in `workerData`. */
export interface StreamLoadOptions {
  readonly url: string;
  readonly agentTokens: readonly string[];
  readonly eventsPerSecond: number;
  /** Resources to spread over (agent `i` takes those whose index is `i` modulo the agents). @defaultValue one per agent */
  readonly resources?: number;
}

const { url: base, agentTokens, eventsPerSecond, resources = agentTokens.length } = workerData as StreamLoadOptions;
const url = new URL(base);
let loading = true;
let pairs = 0;
let errors = 0;
let permits = 0;
const waiting: (() => void)[] = [];
const pairsPer5Millis = (eventsPerSecond / 2 / 1000) * 5;
const refill = setInterval(() => {
  permits = Math.min(permits + pairsPer5Millis, agentTokens.length * 2);
  while (permits >= 1 && waiting.length > 0) {
    permits -= 1;
    waiting.shift()!();
  }
}, 5);
const report = setInterval(() => parentPort!.postMessage({ pairs, errors, done: false }), 100);
parentPort!.on('message', () => {
  loading = false;
  for (const wake of waiting.splice(0)) wake();
});

/** POST JSON; resolves with the status and the parsed reply. */
function post(agent: http.Agent, path: string, token: string, body: unknown): Promise<{ status: number; reply: { grant?: { fence: number } } }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const request = http.request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, reply: JSON.parse(Buffer.concat(chunks).toString() || '{}') as { grant?: { fence: number } } }));
    });
    request.once('error', reject);
    request.end(data);
  });
}

await Promise.all(agentTokens.map(async (token, i) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let n = 0; loading; n += 1) {
    await new Promise<void>((resolve) => waiting.push(resolve));
    if (!loading) break;
    const resource = `stream-${(i + agentTokens.length * n) % resources}`; // ≡ i (mod agents) when agents divide resources
    try {
      const acquired = await post(agent, `/v1/leases/${resource}/acquire`, token, { requestId: `s-${i}-${n}` });
      const fence = acquired.reply.grant?.fence;
      if (acquired.status !== 200 || fence === undefined) throw new Error(`acquire answered ${acquired.status}`);
      if ((await post(agent, `/v1/leases/${resource}/release`, token, { fence })).status !== 200) throw new Error('release failed');
      pairs += 1;
    } catch {
      errors += 1;
    }
  }
  agent.destroy();
}));
clearInterval(refill);
clearInterval(report);
parentPort!.postMessage({ pairs, errors, done: true });
