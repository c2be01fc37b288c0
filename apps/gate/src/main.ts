#!/usr/bin/env node
/**
 * `lease-fence-gate`: the composition root of the fencing reverse proxy. Reads the environment
 * once (the one reader of `process.env` here), restores the gate from its floor file, listens, and
 * reconciles the gate with the coordinator (`reconcileGateState`: its floor raised to the latest
 * fence granted on the resource, its next refusal seq above the last one the coordinator
 * recorded from it) before admitting any write, so an emptied or restored-from-backup data
 * directory neither admits stale tokens nor reuses refusal seqs. Then it runs:
 * the HTTP proxy (`gate-server.ts`), the refusal reporter draining the outbox
 * (`reportRejections`), the floor reporter (`reportFloors`), the admit reporter (`reportAdmits`:
 * each new fence admitted, so the log shows when a handover's exposure ended) and the gate link of fence-first
 * handover (`openGateLink`), all from `@lease-fence/client`, and the status reports
 * (`gate-status.ts`, listed by the coordinator at `GET /v1/gates`). SIGTERM / SIGINT stop it cleanly;
 * a kill -9 loses nothing acknowledged (every floor and refusal was durable before its answer).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FenceGateClient,
  FenceTokenVerifier,
  gateOptionsFrom,
  openFileFloorStore,
  openGateLink,
  reconcileGateState,
  reportAdmits,
  reportFloors,
  reportRejections,
  type GateState,
} from '@lease-fence/client';
import { acquirePidLock, PidLockedError, type PidLock } from '@lease-fence/client/pid-lock';
import { FenceGate } from 'lease-fence';
import { pino, type Logger } from 'pino';
import { GATE_CONFIG_HELP, GateConfigError, parseGateConfig, type GateConfig } from './config.js';
import { createGateServer, GATE_PATH_PREFIX } from './gate-server.js';
import { collectGateStatus, startStatusReports } from './gate-status.js';
import { createGateMetrics } from './metrics.js';
import { describeReportFailure, gateTokenNotCovering, isGateTokenNotCovering } from './report-failures.js';
import { retryFailureLog } from './retry-log.js';

/**
 * Loads the coordinator's keys into `verifier` (`FenceTokenVerifier.loadKeys`: its own fetch, on a
 * new connection) until it succeeds: readiness, since a gate that never saw the keys cannot admit.
 * Loaded at start, the first token of a holder is checked from the cache, even while the
 * coordinator is cut off; the verifier refetches only on an unknown `kid` or a set past its age.
 */
async function loadKeysOnce(
  verifier: FenceTokenVerifier,
  stopped: AbortSignal,
  onFailure: (error: unknown) => void,
): Promise<void> {
  while (!stopped.aborted) {
    try {
      await verifier.loadKeys();
      return;
    } catch (error) {
      if (stopped.aborted) return;
      onFailure(error);
      await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    }
  }
}

/**
 * Reads the coordinator's view of the gate's resource (`GET /v1/resources/:resource/gate-recovery`)
 * until it answers, and returns `saved` reconciled with it (`reconcileGateState`: the rule, pure);
 * `undefined` once `stopped`. Retried every second: the gate admits no write before it succeeds.
 */
async function reconcileWithCoordinator(
  resource: string,
  saved: GateState | undefined,
  coordinator: FenceGateClient,
  stopped: AbortSignal,
  onFailure: (error: unknown) => void,
): Promise<GateState | undefined> {
  while (!stopped.aborted) {
    try {
      return reconcileGateState(resource, saved, await coordinator.gateRecovery(resource, { signal: stopped }));
    } catch (error) {
      if (stopped.aborted) return undefined;
      onFailure(error);
      await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    }
  }
  return undefined;
}

/** The lock file of a gate's data directory: one gate per data directory. */
const GATE_LOCK_FILE = 'gate.lock';

/**
 * Takes the pid lock of the data directory (`<data dir>/gate.lock`) for the process lifetime,
 * before the floor is read: a second gate on the same directory would admit from a floor and hand
 * out refusal seqs the first one does not see (a stale fence reaching the upstream). Released at
 * exit (SIGTERM and SIGINT exit through `stop`); a crashed gate's lock is stale at once (its pid
 * is gone). A refusal exits 1 with a message naming the directory, the lock file and the holder.
 */
function lockDataDirOrExit(dataDir: string, logger: Logger): void {
  const lockFile = join(dataDir, GATE_LOCK_FILE);
  let lock: PidLock;
  try {
    lock = acquirePidLock(lockFile, {
      holderKind: 'gate',
      guarded: `the data directory ${dataDir}`,
      advice: `stop it or give this gate another LEASE_FENCE_DATA_DIR (one gate per data directory; lock file ${lockFile})`,
    });
  } catch (error) {
    const message =
      error instanceof PidLockedError
        ? error.message
        : `cannot lock the data directory ${dataDir} (${lockFile}): ${(error as Error).message}`;
    process.stderr.write(`lease-fence-gate: ${message}\n`);
    process.exit(1);
  }
  process.on('exit', () => lock.release());
  if (lock.replacedStale !== undefined)
    logger.warn(
      { lockFile, previousPid: lock.replacedStale.pid },
      `replaced the lock of gate pid ${lock.replacedStale.pid}, which is gone`,
    );
}

async function run(config: GateConfig): Promise<void> {
  const logger = pino({ level: config.logLevel, base: { service: 'lease-fence-gate', resource: config.resource } });
  await mkdir(config.dataDir, { recursive: true });
  lockDataDirOrExit(config.dataDir, logger);
  const store = await openFileFloorStore({
    path: join(config.dataDir, `${encodeURIComponent(config.resource)}.floor.json`),
    resource: config.resource,
  });
  const saved = await store.load();
  logger.info(
    { floor: saved?.floor ?? null, nextSeq: saved?.nextSeq ?? 1, outbox: store.pendingRejections().length },
    'floor restored',
  );

  const keysUrl = new URL('v1/keys', `${config.coordinatorUrl.href.replace(/\/+$/, '')}/`).href;
  const verifier = new FenceTokenVerifier({
    namespace: config.namespace,
    keys: { url: keysUrl },
    onInvalidToken: (error) => logger.warn({ reason: error.reason }, 'invalid token refused'),
  });
  const coordinator = new FenceGateClient({ baseUrl: config.coordinatorUrl, token: config.gateToken });
  const stopping = new AbortController();
  let keysFetched = false;
  void loadKeysOnce(verifier, stopping.signal, retryFailureLog(logger, "cannot fetch the coordinator's keys yet")).then(
    () => {
      keysFetched = !stopping.signal.aborted;
    },
  );
  const metrics = createGateMetrics(config.resource, store);

  // The outbox and admits need no gate: they run from the start.
  /** One log of retried failures per message (an outage; a token that does not cover the resource). */
  const retriedReports = new Map<string, ReturnType<typeof retryFailureLog>>();
  const rejections = reportRejections(store, coordinator, {
    onError: (error, rejection) => {
      const line = describeReportFailure(error, rejection);
      if (!line.retried) {
        logger.error({ err: error, seq: rejection.seq }, line.message);
        return;
      }
      let log = retriedReports.get(line.message);
      if (log === undefined)
        retriedReports.set(line.message, (log = retryFailureLog(logger, line.message, line.level)));
      log(error, { seq: rejection.seq });
    },
    onReported: (rejection) => logger.info({ seq: rejection.seq }, 'refusal reported'),
  });
  const admits = reportAdmits(coordinator, {
    // The saved floor, not the reconciled one: a fence granted while the gate was down is reported once admitted here.
    admittedFences: new Map(saved?.floor === undefined ? [] : [[config.resource, saved.floor.fence]]),
    onError: (error, token) => logger.debug({ err: error, fence: token.fence }, 'admit not reported'),
  });

  /** What runs once the gate is reconciled: floor reports, the gate link, status reports. */
  let running: { readonly stop: () => Promise<unknown> } | undefined;
  const startReconciled = (gate: FenceGate): void => {
    const floors = reportFloors([gate], coordinator, {
      everyMillis: config.floorReportMillis,
      onError: (error) => logger.debug({ err: error }, 'floor not reported this round'),
    });
    const link = openGateLink({
      baseUrl: config.coordinatorUrl,
      token: config.gateToken,
      guards: [{ gate, store }],
      pingIntervalMillis: config.linkPingMillis,
      onEvent: (event) => {
        if (event.type === 'disconnected')
          logger.debug({ err: event.error, retryInMillis: event.retryInMillis }, 'gate link down');
        else if (event.type === 'refused' || event.type === 'admit-failed')
          logger.warn({ event }, `gate link: ${event.type}`);
        else logger.info(event, `gate link: ${event.type}`);
      },
    });
    const statusReports = startStatusReports({
      collect: () => collectGateStatus({ gate, outbox: store, metrics }, Date.now()),
      link,
      client: coordinator,
      everyMillis: config.statusReportMillis,
      onError: (error) => logger.debug({ err: error }, 'status not reported this round'),
    });
    running = { stop: () => Promise.allSettled([statusReports.stop(), link.close(), floors.stop()]) };
  };
  const coordinatorSilent = retryFailureLog(
    logger,
    "cannot read the coordinator's latest fence yet: writes are refused (503) until it answers",
  );
  const tokenNotCovering = retryFailureLog(
    logger,
    `cannot read the coordinator's latest fence: ${gateTokenNotCovering(config.resource)}; writes are refused (503) until then (retried)`,
    'error',
  );
  const reconciled = reconcileWithCoordinator(config.resource, saved, coordinator, stopping.signal, (error) =>
    (isGateTokenNotCovering(error) ? tokenNotCovering : coordinatorSilent)(error),
  ).then(async (state) => {
    if (state === undefined) return new Promise<FenceGate>(() => undefined); // stopping: never admits
    try {
      // Durable at once, so the raised floor and seq survive a restart while the coordinator is down.
      await store.save(state); // its outbox is the saved one: merged by seq, nothing rewritten
    } catch (error) {
      // Not needed for safety: each admit or refusal saves the gate's (reconciled) floor and seq before its answer.
      logger.warn({ err: error }, 'cannot save the reconciled floor yet');
    }
    const gate = new FenceGate(config.resource, gateOptionsFrom(state));
    logger.info({ floor: gate.floor ?? null, nextSeq: gate.nextSeq }, 'floor reconciled with the coordinator');
    startReconciled(gate);
    return gate;
  });
  const app = await createGateServer({
    gate: reconciled,
    store,
    verifier,
    upstream: config.upstream,
    openMethods: config.openMethods,
    upstreamTimeoutMillis: config.upstreamTimeoutMillis,
    isReady: () => keysFetched,
    metrics,
    logger,
    onAdmitted: admits.admitted,
  });
  const address = await app.listen({ port: config.port, host: config.host });
  logger.info(
    { url: address, upstream: config.upstream.origin, ownPaths: `${GATE_PATH_PREFIX}/{healthz,readyz,metrics}` },
    'listening',
  );

  let stopped = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopped) return;
    stopped = true;
    logger.info({ signal }, 'stopping');
    stopping.abort();
    await app.close();
    await Promise.allSettled([running?.stop(), rejections.close(), admits.stop()]);
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  onParentGone = () => void stop('parent gone');
}

/**
 * What to do when the IPC channel of a supervisor that started the gate with one (the demo does)
 * closes because it died: exit before the gate runs, stop cleanly once it does.
 */
let onParentGone = (): void => process.exit(0);

const main = async (): Promise<void> => {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(GATE_CONFIG_HELP);
    return;
  }
  // Watched from the start, so a supervisor that dies while the gate is still starting is noticed
  // too: the gate stops instead of running on as an orphan holding its port and data directory.
  if (process.channel !== undefined) {
    process.channel.unref();
    process.once('disconnect', () => onParentGone());
  }
  let config: GateConfig;
  try {
    config = parseGateConfig(process.env, process.cwd());
  } catch (error) {
    if (!(error instanceof GateConfigError)) throw error;
    process.stderr.write(`lease-fence-gate: ${error.message}\n(run with --help for every variable)\n`);
    process.exit(1);
  }
  await run(config);
};

main().catch((error: unknown) => {
  process.stderr.write(`lease-fence-gate: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
