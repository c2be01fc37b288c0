/**
 * Probe: kill -9 under load. Eight agents contend for sixteen resources over HTTP while the built
 * coordinator (SQLite log, fsync per group commit) is killed with SIGKILL at seeded moments (each boot first acknowledges a few grants) and
 * restarted on the same data dir. An agent resends an unanswered request with the same requestId
 * until it gets an answer, as the SDK does. At the end the whole log is read back and checked:
 *
 * - every grant an agent was answered with (acknowledged) is a `LeaseGranted` in the log;
 * - no fence was acknowledged for two different grants;
 * - every grant a boot made is above every fence acknowledged before that boot started;
 * - a retried acquire of a live grant (same requestId, resent at once, maybe across a restart)
 *   gets the same fence.
 *
 * Figures: cycles, grants, and the slowest recovery (spawn → `ready`).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { eventually } from '../support/eventually.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import {
  bySize,
  pause,
  PROBE_SEED,
  reportFigures,
  seededIntegers,
  PROBE_START_TIMEOUT_MILLIS,
} from './support/probe-settings.js';
import { PROBE_AGENT_IDS, PROBE_AGENT_TOKENS, PROBE_TOKEN_ENTRIES, PROBE_TOKENS } from './support/probe-tokens.js';
import { type LoggedEvent, readWholeLog } from './support/read-log.js';

/** SIGKILL/restart cycles. The bar is 15; the short run keeps `npm test` quick. */
const CYCLES = bySize(2, 20);
const RESOURCES = 16;
/** Grants each boot acknowledges before it may be killed, so every kill lands under load however slowly the machine starts the service. */
const GRANTS_PER_BOOT = 3;
/** After those, the kill comes this long later (milliseconds): seeded in this range. */
const LOAD_MILLIS = { min: 0, max: 600 };
/** One attempt of one request gives up after this long and is resent (milliseconds). */
const ATTEMPT_TIMEOUT_MILLIS = 5_000;
/**
 * Deadline of each wait for a boot's `GRANTS_PER_BOOT` grants (milliseconds): a failure with the
 * state waited on, not a timing claim (a boot that starts answering 503 for good fails here).
 */
const GRANTS_DEADLINE_MILLIS = 120_000;
/**
 * The test's timeout: every boot may take the probes' start timeout and then its grants' deadline
 * (on 2 shared cores a start has taken 41 s), so a slow machine meets the probe's own deadlines,
 * with their messages, before vitest's.
 */
const TEST_TIMEOUT_MILLIS = (CYCLES + 1) * (PROBE_START_TIMEOUT_MILLIS + GRANTS_DEADLINE_MILLIS + LOAD_MILLIS.max);

interface Acknowledged {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
}

interface Answer {
  readonly status: number;
  readonly body: { ok?: boolean; reason?: string; grant?: { fence: number; holderId: string; resource: string } };
}

let dataDir: string | undefined;
let current: RunningCoordinator | undefined;

afterAll(async () => {
  await current?.cleanup();
  if (dataDir !== undefined) await removeTempDir(dataDir);
});

describe('probe: kill -9 under load', () => {
  it(
    `loses no acknowledged grant and reuses no fence over ${CYCLES} SIGKILL/restart cycles of 8 agents on ${RESOURCES} resources`,
    async () => {
      dataDir = await createTempDir('lease-fence-probe-kill-');
      const start = async (): Promise<{ app: RunningCoordinator; recoveryMillis: number }> => {
        const spawnedAt = performance.now();
        const app = await startCoordinator({
          dataDir,
          tokens: PROBE_TOKEN_ENTRIES,
          env: { LEASE_FENCE_TTL_MILLIS: '10000' },
          startTimeoutMillis: PROBE_START_TIMEOUT_MILLIS,
        });
        return { app, recoveryMillis: performance.now() - spawnedAt };
      };
      const first = await start();
      current = first.app;
      const recoveries: number[] = [];

      const acknowledged: Acknowledged[] = [];
      const violations: string[] = [];
      let stopping = false;
      let attemptsResent = 0;

      /** Sends one request until something answers it (not 503): the same body every time, as a retry must be. */
      const send = async (token: string, path: string, body: unknown): Promise<Answer> => {
        for (;;) {
          const app = current!;
          try {
            const response = await fetch(`${app.url}${path}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify(body),
              signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MILLIS),
            });
            const answer: Answer = { status: response.status, body: (await response.json()) as Answer['body'] };
            if (answer.status !== 503) return answer;
          } catch {
            // killed mid-request, or not listening yet: resend below
          }
          attemptsResent += 1;
          await pause(20);
        }
      };

      const agent = async (index: number): Promise<void> => {
        const holderId = PROBE_AGENT_IDS[index]!;
        const token = PROBE_AGENT_TOKENS[index]!;
        const picks = seededIntegers(PROBE_SEED + index, 4_096, 0, RESOURCES - 1);
        for (let n = 0; !stopping; n += 1) {
          const resource = `res-${picks[n % picks.length]!}`;
          const requestId = `${holderId}-${n}`;
          const acquire = await send(token, `/v1/leases/${resource}/acquire`, { requestId });
          if (acquire.status === 409) {
            await pause(5);
            continue;
          }
          if (acquire.status !== 200 || acquire.body.grant === undefined) {
            violations.push(
              `acquire ${requestId} of ${resource} answered ${acquire.status} ${JSON.stringify(acquire.body)}`,
            );
            continue;
          }
          const fence = acquire.body.grant.fence;
          acknowledged.push({ resource, holderId, fence, requestId });
          // A retried acquire of a live grant (the reply could have been lost) must get the same fence.
          const retry = await send(token, `/v1/leases/${resource}/acquire`, { requestId });
          if (retry.status !== 200 || retry.body.grant?.fence !== fence) {
            violations.push(
              `retried acquire ${requestId} (fence ${fence}) answered ${retry.status} ${JSON.stringify(retry.body)}`,
            );
          }
          // 410: an earlier attempt of this release was applied and its reply lost.
          const release = await send(token, `/v1/leases/${resource}/release`, { fence });
          if (release.status !== 200 && release.status !== 410) {
            violations.push(
              `release of ${resource} fence ${fence} answered ${release.status} ${JSON.stringify(release.body)}`,
            );
          }
        }
      };

      const agents = Promise.all(PROBE_AGENT_IDS.map((_, index) => agent(index)));
      const loadMillis = seededIntegers(PROBE_SEED, CYCLES, LOAD_MILLIS.min, LOAD_MILLIS.max);
      /** Per restart: the highest fence acknowledged before its process was spawned. */
      const highestAcknowledgedBeforeBoot: number[] = [];
      /** Resolves once `count` more grants are acknowledged than `from`. */
      const grantsAcknowledged = async (from: number, count: number): Promise<void> => {
        await eventually(
          () =>
            `${count} grants after the first ${from}: ${acknowledged.length} acknowledged, ${attemptsResent} attempts resent, violations ${JSON.stringify(violations.slice(0, 5))}`,
          () => acknowledged.length >= from + count,
          GRANTS_DEADLINE_MILLIS,
          10,
        );
      };
      for (let cycle = 0; cycle < CYCLES; cycle += 1) {
        await grantsAcknowledged(acknowledged.length, GRANTS_PER_BOOT);
        await pause(loadMillis[cycle]!);
        const killed = await current.kill();
        expect(killed.signal).toBe('SIGKILL');
        highestAcknowledgedBeforeBoot.push(Math.max(0, ...acknowledged.map((a) => a.fence)));
        const next = await start();
        current = next.app;
        recoveries.push(next.recoveryMillis);
      }
      await grantsAcknowledged(acknowledged.length, GRANTS_PER_BOOT);
      stopping = true;
      await agents;

      // The whole log, read back from the last boot.
      const log = await readWholeLog(current.url, PROBE_TOKENS.viewer);
      const grants = log.filter((e) => e.event.type === 'LeaseGranted');
      const grantByFence = new Map<number, LoggedEvent['event']['data']>(
        grants.map((e) => [Number(e.event.data['fence']), e.event.data]),
      );
      const starts = log.filter((e) => e.event.type === 'CoordinatorStarted').map((e) => e.position);

      // Every acknowledged grant is in the log, with its resource and holder.
      const missing = acknowledged.filter((a) => {
        const logged = grantByFence.get(a.fence);
        return (
          logged?.['resource'] !== a.resource ||
          logged['holderId'] !== a.holderId ||
          logged['requestId'] !== a.requestId
        );
      });
      // No fence was acknowledged (or logged) for two grants.
      const requestIdsByFence = new Map<number, Set<string>>();
      for (const a of acknowledged)
        requestIdsByFence.set(a.fence, (requestIdsByFence.get(a.fence) ?? new Set()).add(a.requestId));
      const acknowledgedTwice = [...requestIdsByFence].filter(([, ids]) => ids.size > 1);
      // Every grant of a boot is above every fence acknowledged before that boot started.
      expect(starts).toHaveLength(CYCLES + 1);
      const notAbove = highestAcknowledgedBeforeBoot.flatMap((highest, restart) => {
        const from = starts[restart + 1]!;
        const to = starts[restart + 2] ?? Number.POSITIVE_INFINITY;
        return grants
          .filter((e) => e.position > from && e.position < to && Number(e.event.data['fence']) <= highest)
          .map(
            (e) =>
              `boot ${restart + 2} granted fence ${String(e.event.data['fence'])} at position ${e.position}, not above ${highest}`,
          );
      });

      reportFigures('kill-under-load', {
        cycles: CYCLES,
        grants: acknowledged.length,
        loggedGrants: grants.length,
        resentAttempts: attemptsResent,
        slowestRecoveryMillis: Math.round(Math.max(...recoveries)),
        medianRecoveryMillis: Math.round([...recoveries].sort((x, y) => x - y)[Math.floor(recoveries.length / 2)]!),
        missing: missing.length,
        acknowledgedTwice: acknowledgedTwice.length,
        notAboveEarlier: notAbove.length,
        violations: violations.length,
      });
      expect(acknowledged.length).toBeGreaterThanOrEqual((CYCLES + 1) * GRANTS_PER_BOOT);
      expect(missing).toEqual([]);
      expect(acknowledgedTwice).toEqual([]);
      expect(new Set(grants.map((e) => e.event.data['fence'])).size).toBe(grants.length);
      expect(notAbove).toEqual([]);
      expect(violations).toEqual([]);
    },
    TEST_TIMEOUT_MILLIS,
  );
});
