/**
 * Probe: a restart loop must not keep a silent holder's lease alive. Agent A takes a lease of
 * `TTL_MILLIS` and goes silent; the coordinator is killed with SIGKILL `LIFETIME_MILLIS` after each
 * `ready` and restarted on the same log, while agent B keeps asking for the resource. Downtime is
 * not counted (libs/coordinator-core/README.md: recovery carries a lease with the grace it had left when
 * the dead boot was last seen alive), but each boot that lived must shorten the grace: B must get
 * the resource once the boots' uptime adds up to twice the TTL, one boot more for the boot that
 * granted. Counting boots, not wall time, keeps the bound independent of how slowly this machine
 * starts the service.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { bySize, pause, reportFigures, PROBE_START_TIMEOUT_MILLIS } from './support/probe-settings.js';
import { PROBE_AGENT_TOKENS, PROBE_TOKEN_ENTRIES } from './support/probe-tokens.js';

/** Agent A's lease. */
const TTL_MILLIS = 3_000;
/** How long each boot lives after `ready` before it is killed. */
const LIFETIME_MILLIS = 2_000;
/** Boots after the granting one by which B must hold the resource: 2 × TTL of uptime, plus one. */
const BOUND_BOOTS = Math.ceil((2 * TTL_MILLIS) / LIFETIME_MILLIS) + 1;
/** Boots the probe runs at most before it gives up (and fails). */
const MAX_BOOTS = bySize(BOUND_BOOTS + 2, 15);
/**
 * The test's timeout: every boot may take the probes' start timeout (on 2 shared cores a start
 * has taken 41 s) and then its lifetime, so a slow machine meets the probe's own deadlines, with
 * their messages, before vitest's.
 */
const TEST_TIMEOUT_MILLIS = MAX_BOOTS * (PROBE_START_TIMEOUT_MILLIS + 2 * LIFETIME_MILLIS);

let dataDir: string | undefined;
let current: RunningCoordinator | undefined;

afterAll(async () => {
  await current?.cleanup();
  if (dataDir !== undefined) await removeTempDir(dataDir);
});

describe('probe: restart loop with a silent holder', () => {
  it(
    `gives the resource to another holder within ${BOUND_BOOTS} boots of ${LIFETIME_MILLIS} ms when the holder of a ${TTL_MILLIS} ms lease goes silent`,
    async () => {
      dataDir = await createTempDir('lease-fence-probe-loop-');
      const start = async (): Promise<RunningCoordinator> =>
        startCoordinator({ dataDir, tokens: PROBE_TOKEN_ENTRIES, startTimeoutMillis: PROBE_START_TIMEOUT_MILLIS });
      current = await start();

      // Given agent A holds the resource and then says nothing more
      const granted = await call(current.url, 'POST', '/v1/leases/deploy-loop/acquire', {
        token: PROBE_AGENT_TOKENS[0]!,
        json: { requestId: 'silent-holder', ttlMillis: TTL_MILLIS },
      });
      expect(granted.status).toBe(200);

      // When the coordinator is killed LIFETIME_MILLIS after every ready while B keeps asking
      let attempts = 0;
      let grantedInBoot: number | undefined;
      let boot = 1;
      const startedAt = performance.now();
      for (; boot <= MAX_BOOTS && grantedInBoot === undefined; boot += 1) {
        const readyAt = performance.now();
        while (performance.now() - readyAt < LIFETIME_MILLIS) {
          attempts += 1;
          const reply = await call(current.url, 'POST', '/v1/leases/deploy-loop/acquire', {
            token: PROBE_AGENT_TOKENS[1]!,
            json: { requestId: `b-${attempts}` },
          });
          if (reply.status === 200) {
            grantedInBoot = boot;
            break;
          }
          expect(reply.status, reply.text).toBe(409);
          await pause(100);
        }
        if (grantedInBoot !== undefined) break;
        await current.kill();
        current = await start();
      }

      // Then B got it within the bound
      reportFigures('restart-loop', {
        ttlMillis: TTL_MILLIS,
        lifetimeMillis: LIFETIME_MILLIS,
        boundBoots: BOUND_BOOTS,
        grantedInBoot: grantedInBoot ?? `none in ${MAX_BOOTS}`,
        wallMillis: Math.round(performance.now() - startedAt),
        attempts,
      });
      expect(grantedInBoot).toBeDefined();
      expect(grantedInBoot!).toBeLessThanOrEqual(BOUND_BOOTS);
    },
    TEST_TIMEOUT_MILLIS,
  );
});
