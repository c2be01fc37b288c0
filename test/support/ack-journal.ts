/**
 * A client-side journal of every acknowledgement SDK clients received, and its check against the
 * coordinator's log, for crash and fault tests (`test/crash/grouped-commit-kill-loop.int.spec.ts`,
 * `test/crash/disk-fault.int.spec.ts`). The workload: SDK clients over agent links, each running
 * loops of acquire (a fresh resource), two renewals, release; every reply the SDK returned `ok`
 * for is journaled; errors (the coordinator down, recovering or failing) are not acknowledgements.
 */
import { LeaseFenceClient, type Lease } from '@lease-fence/client';
import { coordinatorHttp } from './coordinator-http.js';
import { TEST_TOKENS } from './test-tokens.js';

/** One acknowledgement an SDK client received: a grant (with its fence), a renewal, a release. */
export type Acknowledgement =
  | { readonly kind: 'acquire'; readonly resource: string; readonly holderId: string; readonly fence: number }
  | { readonly kind: 'renew' | 'release'; readonly resource: string; readonly fence: number };

/** One entry of `GET /v1/events`. */
export interface LoggedEvent {
  readonly position: number;
  readonly event: {
    readonly type: string;
    readonly data: { resource?: string; holderId?: string; fence?: number; requestId?: string };
  };
}

/** A running workload (see the module comment). */
export interface JournaledWorkload {
  /** Every acknowledgement so far, in the order received. */
  readonly journal: readonly Acknowledgement[];
  /** Operations the loops started (acknowledged or not). */
  readonly operationsSent: number;
  /** Resolves once `count` more acknowledgements arrived. */
  acknowledged(count: number): Promise<void>;
  /** Stops the loops after their current operation and closes the clients. */
  stop(): Promise<void>;
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/**
 * Starts `clientsPerAgent` SDK clients (`transport: 'websocket'`) for each of the two test agents
 * on `baseUrl`, each running `loopsPerClient` loops (operations in flight = clients × loops).
 * @param baseUrl - the coordinator (`http://127.0.0.1:<port>`); keep the port across restarts.
 */
export function startJournaledWorkload(
  baseUrl: string,
  clientsPerAgent: number,
  loopsPerClient: number,
): JournaledWorkload {
  const journal: Acknowledgement[] = [];
  let stopping = false;
  let operationsSent = 0;
  const clients = [TEST_TOKENS.agentA, TEST_TOKENS.agentB].flatMap((agent) =>
    Array.from({ length: clientsPerAgent }, () => ({
      holderId: agent.holderId,
      client: new LeaseFenceClient({
        baseUrl,
        token: agent.token,
        holderId: agent.holderId,
        clockSkewMillis: 50,
        timeoutMillis: 2000,
        retry: { maxAttempts: 6, initialDelayMillis: 50, maxDelayMillis: 500 },
        transport: 'websocket',
      }),
    })),
  );
  const loop = async (client: LeaseFenceClient, holderId: string, name: string): Promise<void> => {
    for (let round = 0; !stopping; round += 1) {
      const resource = `${name}-${round}`;
      try {
        operationsSent += 1;
        const acquired = await client.acquire(resource, { ttlMillis: 60_000 });
        if (!acquired.ok) continue;
        const lease: Lease = acquired.lease;
        journal.push({ kind: 'acquire', resource, holderId, fence: lease.fence });
        for (let renewal = 0; renewal < 2 && !stopping; renewal += 1) {
          operationsSent += 1;
          const renewed = await client.renew(lease, { ttlMillis: 60_000 });
          if (!renewed.ok) break;
          journal.push({ kind: 'renew', resource, fence: lease.fence });
        }
        operationsSent += 1;
        const released = await client.release(lease);
        if (released.ok) journal.push({ kind: 'release', resource, fence: lease.fence });
      } catch {
        await sleep(20); // the coordinator is down, recovering or failing: nothing acknowledged
      }
    }
  };
  const loops = clients.flatMap(({ client, holderId }, clientIndex) =>
    Array.from({ length: loopsPerClient }, (_, loopIndex) => loop(client, holderId, `k${clientIndex}-${loopIndex}`)),
  );
  return {
    journal,
    get operationsSent() {
      return operationsSent;
    },
    async acknowledged(count) {
      const target = journal.length + count;
      while (journal.length < target) await sleep(5);
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map(({ client }) => client.close()));
    },
  };
}

/** Every event of the log, read page by page with the viewer token. */
export async function readWholeLog(baseUrl: string): Promise<LoggedEvent[]> {
  const viewer = coordinatorHttp(baseUrl, TEST_TOKENS.viewer.token);
  const events: LoggedEvent[] = [];
  for (;;) {
    const page = await viewer.get<{ events: LoggedEvent[] }>(
      `/v1/events?after=${events.at(-1)?.position ?? 0}&limit=1000`,
    );
    if (page.status !== 200) throw new Error(`GET /v1/events answered ${page.status}`);
    if (page.body.events.length === 0) return events;
    events.push(...page.body.events);
  }
}

/**
 * Checks `journal` against the log and the current holders; returns one line per problem (empty:
 * none). The rules: every acknowledged grant is a `LeaseGranted` with that holder and fence, every
 * acknowledged renewal a `LeaseRenewed` of that generation (at least as many as acknowledged),
 * every acknowledged release a `LeaseReleased` of it; `LeaseGranted` fences strictly increase in
 * log order (so no fence is handed out twice, and each one after a restart is above every earlier
 * one); no requestId granted twice, no renewal requestId logged twice; no generation renewed after
 * its release, and none both released and live in `GET /v1/leases`.
 */
export async function checkJournal(
  baseUrl: string,
  journal: readonly Acknowledgement[],
): Promise<{
  readonly problems: readonly string[];
  readonly events: readonly LoggedEvent[];
}> {
  const events = await readWholeLog(baseUrl);
  const key = (resource: string | undefined, fence: number | undefined): string => `${resource}#${fence}`;
  const granted = new Map<string, string | undefined>();
  const renewals = new Map<string, number>();
  const released = new Set<string>();
  const problems: string[] = [];
  const grantRequestIds = new Set<string>();
  const renewRequestIds = new Set<string>();
  let highestFence = 0;
  for (const { position, event } of events) {
    const { resource, fence, holderId, requestId } = event.data;
    const id = key(resource, fence);
    if (event.type === 'LeaseGranted') {
      if (fence! <= highestFence) problems.push(`position ${position}: fence ${fence} after ${highestFence}`);
      highestFence = Math.max(highestFence, fence!);
      if (grantRequestIds.has(requestId!)) problems.push(`position ${position}: requestId ${requestId} granted twice`);
      grantRequestIds.add(requestId!);
      granted.set(id, holderId);
    } else if (event.type === 'LeaseRenewed') {
      if (released.has(id)) problems.push(`position ${position}: ${id} renewed after its release`);
      if (renewRequestIds.has(requestId!)) problems.push(`position ${position}: renewal ${requestId} logged twice`);
      renewRequestIds.add(requestId!);
      renewals.set(id, (renewals.get(id) ?? 0) + 1);
    } else if (event.type === 'LeaseReleased') {
      released.add(id);
    }
  }
  const renewalsAcknowledged = new Map<string, number>();
  for (const ack of journal) {
    const id = key(ack.resource, ack.fence);
    if (ack.kind === 'acquire' && granted.get(id) !== ack.holderId) problems.push(`acknowledged grant ${id} missing`);
    if (ack.kind === 'renew') renewalsAcknowledged.set(id, (renewalsAcknowledged.get(id) ?? 0) + 1);
    if (ack.kind === 'release' && !released.has(id)) problems.push(`acknowledged release ${id} missing`);
  }
  for (const [id, count] of renewalsAcknowledged)
    if ((renewals.get(id) ?? 0) < count)
      problems.push(`${id}: ${count} renewals acknowledged, ${renewals.get(id) ?? 0} logged`);
  const leases = await coordinatorHttp(baseUrl, TEST_TOKENS.viewer.token).get<{
    leases: { resource: string; fence: number }[];
  }>('/v1/leases');
  if (leases.status !== 200) throw new Error(`GET /v1/leases answered ${leases.status}`);
  for (const lease of leases.body.leases)
    if (released.has(key(lease.resource, lease.fence)))
      problems.push(`${lease.resource}#${lease.fence} released and live`);
  return { problems, events };
}
