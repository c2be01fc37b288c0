/**
 * Worker-thread entry of one demo agent (`dist/agent-worker.js`). Each agent runs in its own
 * thread so a simulated stall (a blocked event loop) freezes that agent only, renewals included.
 * Stops when the main thread posts `{ type: 'stop' }`; posts `{ type: 'stats', stats }` before exiting.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CoordinatorHttpError, LeaseFenceClient } from '@lease-fence/client';
import { blockThread, runAgent } from './agent/agent.js';
import { createLogger, seconds } from './log.js';
import { createRandom } from './random.js';

/** What main.js passes to each agent thread. */
export interface AgentWorkerData {
  readonly holderId: string;
  readonly token: string;
  /** The coordinator as the agent sees it (through the lossy proxy). */
  readonly coordinatorUrl: string;
  /** Each slot's gate (sidecar base URL), by resource. */
  readonly gateUrls: Readonly<Record<string, string>>;
  readonly resources: readonly string[];
  readonly ttlMillis: number;
  readonly clockSkewMillis: number;
  readonly modelCallMillis: { readonly min: number; readonly max: number };
  readonly stallProbability: number;
  readonly seed: number;
}

const data = workerData as AgentWorkerData;
const log = createLogger(data.holderId);
const stop = new AbortController();
parentPort?.on('message', (message: { type?: string }) => {
  if (message.type === 'stop') stop.abort();
});

const client = new LeaseFenceClient({
  baseUrl: data.coordinatorUrl,
  token: data.token,
  holderId: data.holderId,
  clockSkewMillis: data.clockSkewMillis,
  timeoutMillis: 1000,
  retry: { maxAttempts: 6, initialDelayMillis: 100, maxDelayMillis: 800 },
  onRetry: (event) => {
    const [operation, resource] = event.operation.split(' ');
    log(
      resource,
      `${operation ?? 'request'}: attempt ${event.attempt} ${whatFailed(event.error)}; retrying in ${seconds(event.delayMillis)} with the same request`,
    );
  },
});

const stats = await runAgent({
  client,
  gateUrls: data.gateUrls,
  resources: data.resources,
  ttlMillis: data.ttlMillis,
  modelCallMillis: data.modelCallMillis,
  stallProbability: data.stallProbability,
  random: createRandom(data.seed),
  log,
  stall: blockThread,
  signal: stop.signal,
});
parentPort?.postMessage({ type: 'stats', stats });
// The message listener would keep this thread alive.
parentPort?.close();

/** A retried failure in words: a lost reply, a timeout, or the coordinator's 503. */
function whatFailed(error: unknown): string {
  if (error instanceof CoordinatorHttpError) return `was answered HTTP ${error.status}`;
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  return 'lost its reply (connection closed)';
}
