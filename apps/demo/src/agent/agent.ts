/**
 * One demo agent: picks a deploy slot, holds it through simulated model calls, and writes each
 * step to the slot with its fencing token. Some model calls stall the whole agent (its event
 * loop is blocked, as in a long GC pause or a synchronous call): renewals cannot run, the lease
 * expires, another agent takes the slot, and the stalled agent's next write — sent without
 * noticing, because it checked its signal just before the stall — is refused by the slot's
 * `lease-fence-gate` sidecar (409), and never reaches the deploy recorder behind it.
 */
import { LeaseLostError, type LeaseFenceClient } from '@lease-fence/client';
import type { Lease } from '@lease-fence/client';
import { seconds, type Logger } from '../log.js';
import type { Random } from '../random.js';
import { deployThroughGate } from './deploy-client.js';

/** Options of {@link runAgent}. */
export interface AgentOptions {
  readonly client: LeaseFenceClient;
  /** Each slot's gate (its `lease-fence-gate` sidecar's base URL), by resource. */
  readonly gateUrls: Readonly<Record<string, string>>;
  readonly resources: readonly string[];
  /** Lease duration asked for, in milliseconds. */
  readonly ttlMillis: number;
  /** Range of a model call's duration, in milliseconds. */
  readonly modelCallMillis: { readonly min: number; readonly max: number };
  /** Probability that a model call stalls the agent. */
  readonly stallProbability: number;
  readonly random: Random;
  readonly log: Logger;
  /** Blocks the agent for `millis` (no timers, no renewals). Production: `blockThread`. */
  readonly stall: (millis: number) => void | Promise<void>;
  /** Stops the agent after its current step. */
  readonly signal: AbortSignal;
}

/** What an agent did, for the demo's summary. */
export interface AgentStats {
  jobs: number;
  grants: number;
  denials: number;
  acceptedWrites: number;
  refusedWrites: number;
  lostLeases: number;
}

/** Blocks the calling thread for `millis`: timers, I/O callbacks and renewals all wait. */
export const blockThread = (millis: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis);
};

/** Runs the agent until `options.signal` aborts. */
export const runAgent = async (options: AgentOptions): Promise<AgentStats> => {
  const { client, log, random, signal } = options;
  const stats: AgentStats = { jobs: 0, grants: 0, denials: 0, acceptedWrites: 0, refusedWrites: 0, lostLeases: 0 };
  let resource = random.pick(options.resources);
  while (!signal.aborted) {
    let pauseMillis = random.integer(200, 1200);
    try {
      const result = await client.withLease(
        resource,
        (lease, leaseSignal) => runJob(options, stats, lease, leaseSignal),
        {
          ttlMillis: options.ttlMillis,
          signal,
          onRenewed: (lease) =>
            log(resource, `renewed fence ${lease.fence} (deadline in ${seconds(lease.remainingMillis())})`),
          onLost: (error) => {
            stats.lostLeases += 1;
            log(resource, `lease fence ${error.fence} LOST (${error.reason}): the job's signal is aborted`);
          },
          onRenewalError: (error) =>
            log(resource, `renewal failed, trying again before the deadline: ${describe(error)}`),
        },
      );
      if (result.ok) {
        const { release, lost } = result;
        const after = lost === undefined ? '' : ` after losing the lease (${lost.reason})`;
        log(
          resource,
          release.ok
            ? `released the slot (${result.value})`
            : `job ended (${result.value})${after}; release answered ${release.reason}`,
        );
        resource = random.pick(options.resources);
      } else {
        stats.denials += 1;
        switch (result.reason) {
          case 'held':
            log(resource, `held by ${result.heldBy}; trying again in ${seconds(result.retryAfterMillis)}`);
            pauseMillis = Math.min(result.retryAfterMillis, 5000) + random.integer(0, 150);
            break;
          case 'already-held':
            log(resource, `already mine under fence ${result.fence} from an earlier attempt; waiting for it to expire`);
            pauseMillis = Math.min(result.retryAfterMillis, 5000);
            break;
          case 'expired':
            log(resource, `the grant owed to this request already ended (fence ${result.fence ?? '?'}); asking again`);
            break;
          case 'lock-delay':
            log(resource, `in its lock-delay after a lost holder; trying again in ${seconds(result.retryAfterMillis)}`);
            pauseMillis = Math.min(result.retryAfterMillis, 5000) + random.integer(0, 150);
            break;
          case 'dead-on-arrival':
            log(
              resource,
              `grant fence ${result.fence} arrived DEAD (${seconds(result.lateByMillis)} past its deadline after retries): released it, not used`,
            );
            break;
        }
      }
    } catch (error) {
      if (signal.aborted) break;
      log(
        resource,
        error instanceof LeaseLostError ? `gave up the job: ${error.message}` : `error: ${describe(error)}`,
      );
      resource = random.pick(options.resources);
    }
    await pause(pauseMillis, signal);
  }
  return stats;
};

/** One job under a held lease: claim the slot, model calls, a write after each, done. */
const runJob = async (
  options: AgentOptions,
  stats: AgentStats,
  lease: Lease,
  leaseSignal: AbortSignal,
): Promise<string> => {
  const { log, random } = options;
  const resource = lease.resource;
  stats.jobs += 1;
  stats.grants += 1;
  log(resource, `granted fence ${lease.fence} (deadline in ${seconds(lease.remainingMillis())})`);
  /** Writes one step; `recheck: false` only right after a stall, the hazard being shown. */
  const write = async (step: string, recheck = true): Promise<boolean> => {
    if (recheck && leaseSignal.aborted) {
      log(resource, `not writing "${step}": the lease can no longer be trusted`);
      return false;
    }
    const gateUrl = options.gateUrls[resource];
    if (gateUrl === undefined) {
      log(resource, `not writing "${step}": no gate for this slot`);
      return false;
    }
    const result = await deployThroughGate(gateUrl, lease, step);
    if (result.ok) {
      stats.acceptedWrites += 1;
      log(
        resource,
        `wrote "${step}" with fence ${lease.fence}: accepted by the gate (deployment #${result.deploymentId})`,
      );
      return true;
    }
    if (result.reason === 'refused') {
      stats.refusedWrites += 1;
      const { rejected, current } = result;
      log(
        resource,
        `wrote "${step}" with fence ${rejected.fence}: REFUSED by the gate with 409 (${result.kind}: ${rejected.holderId} holds fence ${rejected.fence}, the slot's floor is fence ${current.fence} of ${current.holderId}; refusal #${result.seq}; not forwarded to the deploy recorder)`,
      );
    } else if (result.reason === 'invalid-token') {
      log(
        resource,
        `wrote "${step}" with fence ${lease.fence}: REFUSED by the gate with 401 (invalid token: ${result.message})`,
      );
    } else {
      log(resource, `could not reach the gate for "${step}": ${result.message}`);
    }
    return false;
  };

  if (!(await write('claim'))) return 'claim not accepted';
  const calls = random.integer(1, 2);
  for (let call = 1; call <= calls; call += 1) {
    const modelMillis = random.integer(options.modelCallMillis.min, options.modelCallMillis.max);
    const stalls = random.chance(options.stallProbability);
    if (stalls) {
      if (leaseSignal.aborted) return 'abandoned: lease lost';
      const stallMillis = random.integer(options.ttlMillis + 1000, options.ttlMillis * 2);
      log(
        resource,
        `model call ${call}: the agent STALLS for ${seconds(stallMillis)} (event loop blocked: no renewals)`,
      );
      await options.stall(stallMillis);
      // It checked its signal just before the stall, so it writes as if nothing happened.
      log(resource, `model call ${call}: back from the stall, writing without re-checking`);
    } else {
      log(
        resource,
        `model call ${call}: ${seconds(modelMillis)}${modelMillis > options.ttlMillis ? ' (longer than the ttl: renewals keep the lease)' : ''}`,
      );
      const finished = await pause(modelMillis, leaseSignal);
      if (!finished)
        return options.signal.aborted ? 'stopped during the model call' : 'abandoned: lease lost during the model call';
    }
    if (!(await write(`step ${call}/${calls}`, !stalls))) return `stopped at step ${call}`;
  }
  return (await write('done')) ? 'deployed' : 'done not accepted';
};

/** Waits `millis`; resolves false if `signal` aborted first. */
const pause = (millis: number, signal: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, millis);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
