/**
 * The load of `bench-stream`, in a worker thread (its own event loop): an OPEN-LOOP generator.
 * Acquire → release pair `n` is due at `start + n / pairsPerSecond` (2 events per pair) and is
 * issued when due whether or not earlier pairs have been answered, so a slow server shows up as
 * pairs in flight and late answers, not as a lower offered rate (a closed loop would slow down
 * with the server and hide it). Pairs rotate over `resources` resources and the agent tokens;
 * requests go over keep-alive connections (at most `maxSockets` open).
 *
 * With `onePairPerResource` (bench-dashboard) a pair whose resource still has an earlier pair in
 * flight waits for it (it is issued once that pair is answered), so the offered load is one the
 * coordinator can grant: without it, pair `n + resources` could ask for a lease pair `n` still holds
 * and be refused `already-held`, and the figure would be of fewer appended events than offered.
 * A pair waiting for its resource counts as in flight, and every event the coordinator appended (an
 * acquire or release answered 200) is counted in `appendedEvents`.
 *
 * Posts a {@link StreamLoadProgress} every 100 ms and once more, with `done: true`, when told to
 * stop (it stops issuing, then waits for the pairs in flight).
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/** What the parent passes in `workerData`. */
export interface StreamLoadOptions {
  readonly url: string;
  readonly agentTokens: readonly string[];
  /** Offered rate of appended events (each pair = acquire + release = 2 events). */
  readonly eventsPerSecond: number;
  /** Resources to rotate over (pair `n` uses `n % resources`). @defaultValue 4 096 */
  readonly resources?: number;
  /** Most keep-alive connections open at once. @defaultValue 256 */
  readonly maxSockets?: number;
  /**
   * True: at most one pair in flight per resource; a pair that falls due while its resource's
   * previous pair is unanswered is issued when that pair is answered. @defaultValue false
   */
  readonly onePairPerResource?: boolean;
}

/** Progress the worker posts. */
export interface StreamLoadProgress {
  /** Pairs issued (their acquire was sent). */
  readonly offeredPairs: number;
  /** Pairs whose release was answered 200. */
  readonly completedPairs: number;
  /** Events the load asked for so far: 2 per pair due (issued or waiting for its resource). */
  readonly offeredEvents: number;
  /** Events the coordinator appended for the load: acquires and releases answered 200. */
  readonly appendedEvents: number;
  /** Pairs that failed (a non-200 answer or a transport error). */
  readonly errors: number;
  /** Why, for the first few distinct failures (e.g. `acquire answered 409 held`). */
  readonly errorSamples: readonly string[];
  /** Pairs issued but not finished. */
  readonly inFlight: number;
  /** Largest delay between a pair's due time and its issue (milliseconds): the generator's own lateness. */
  readonly maxIssueDelayMillis: number;
  readonly done: boolean;
}

const {
  url: base,
  agentTokens,
  eventsPerSecond,
  resources = 4096,
  maxSockets = 256,
  onePairPerResource = false,
} = workerData as StreamLoadOptions;
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets });
const pairsPerMillisecond = eventsPerSecond / 2 / 1000;
let offeredPairs = 0;
let completedPairs = 0;
let duePairs = 0;
let appendedEvents = 0;
let errors = 0;
const errorSamples: string[] = [];
const ERROR_SAMPLES = 5;
let maxIssueDelayMillis = 0;
const inFlight = new Set<Promise<void>>();
/** With `onePairPerResource`: the pair in flight per resource index. */
const busyResources = new Map<number, Promise<void>>();

const progress = (done: boolean): StreamLoadProgress => ({
  offeredPairs,
  completedPairs,
  offeredEvents: duePairs * 2,
  appendedEvents,
  errors,
  errorSamples: [...errorSamples],
  inFlight: inFlight.size,
  maxIssueDelayMillis,
  done,
});

/** POST JSON; resolves with the status and the parsed reply. */
function post(
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; reply: { grant?: { fence: number }; reason?: string; error?: string } }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.once('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            reply: JSON.parse(Buffer.concat(chunks).toString() || '{}') as {
              grant?: { fence: number };
              reason?: string;
              error?: string;
            },
          }),
        );
      },
    );
    request.once('error', reject);
    request.end(data);
  });
}

async function pair(n: number): Promise<void> {
  const token = agentTokens[n % agentTokens.length]!;
  const resource = `stream-${n % resources}`;
  try {
    const acquired = await post(`/v1/leases/${resource}/acquire`, token, { requestId: `s-${n}` });
    const fence = acquired.reply.grant?.fence;
    if (acquired.status !== 200 || fence === undefined)
      throw new Error(
        `acquire answered ${acquired.status} ${acquired.reply.reason ?? acquired.reply.error ?? ''}`.trim(),
      );
    appendedEvents += 1;
    const released = await post(`/v1/leases/${resource}/release`, token, { fence });
    if (released.status !== 200)
      throw new Error(
        `release answered ${released.status} ${released.reply.reason ?? released.reply.error ?? ''}`.trim(),
      );
    appendedEvents += 1;
    completedPairs += 1;
  } catch (error) {
    errors += 1;
    const why = error instanceof Error ? error.message : String(error);
    if (errorSamples.length < ERROR_SAMPLES && !errorSamples.includes(why)) errorSamples.push(why);
  }
}

const startedAtMillis = performance.now();
/** Issues pair `n` now; with `onePairPerResource`, after the pair in flight on its resource. */
const issue = (n: number): void => {
  const resourceIndex = n % resources;
  const before = onePairPerResource ? busyResources.get(resourceIndex) : undefined;
  const running = before === undefined ? pair(n) : before.then(() => pair(n));
  inFlight.add(running);
  if (onePairPerResource) busyResources.set(resourceIndex, running);
  void running.finally(() => {
    inFlight.delete(running);
    if (busyResources.get(resourceIndex) === running) busyResources.delete(resourceIndex);
  });
};
/** Issues every pair that is due. */
const issueDue = (): void => {
  const now = performance.now();
  const due = Math.floor((now - startedAtMillis) * pairsPerMillisecond);
  duePairs = Math.max(duePairs, due);
  for (; offeredPairs < due; offeredPairs += 1) {
    maxIssueDelayMillis = Math.max(
      maxIssueDelayMillis,
      now - (startedAtMillis + (offeredPairs + 1) / pairsPerMillisecond),
    );
    issue(offeredPairs);
  }
};
const pacer = setInterval(issueDue, 1);
const report = setInterval(() => parentPort!.postMessage(progress(false)), 100);

parentPort!.once('message', () => {
  clearInterval(pacer);
  void Promise.all(inFlight).then(() => {
    clearInterval(report);
    agent.destroy();
    parentPort!.postMessage(progress(true));
  });
});
