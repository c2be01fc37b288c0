/**
 * Starts the coordinator: parse the configuration (exit 1 naming a bad variable), load the
 * tokens file (exit 1 naming a bad entry and field, or saying how to create a missing one), load
 * the grant signing keys (exit 1 saying what is wrong with the key file), take
 * the SQLite log's lock (exit 1 if another coordinator holds it: nothing of the log is touched),
 * create the Nest application, listen, log `listening` with the bound URL, and only then recover
 * (`/readyz` answers 503 `recovering` meanwhile) and log `ready`. A process that cannot listen
 * exits without having appended to the log; a host that does not resolve or is not this machine's,
 * and a port in use or privileged, are refused like any bad setting, naming `HOST` or `PORT`.
 * SIGTERM / SIGINT: stop accepting, finish in-flight appends, close the log, exit 0; connections
 * still open at half of `LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS` are closed, and a shutdown still
 * unfinished at the deadline (a hung log, a WebSocket peer that never completes the close) logs
 * what was still open and exits 1.
 * Started with an IPC channel (as `scripts/start.mjs` starts it), it stops the same way when the
 * channel closes: its launcher is gone (even `kill -9` of the launcher's process group), and
 * nobody would stop it otherwise.
 *
 * HTTP: one pipeline, Nest on Fastify (`http/http-adapter.ts`); connection-close while stopping,
 * then the middleware and exception filter of `http/http.module.ts`, for every route. WebSockets:
 * Nest gateways on the `ws` adapter, upgraded through `websocket/websocket-upgrades.ts`.
 */
import 'reflect-metadata';
import { KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { AuthFailureLog } from './auth/auth-failure-log.js';
import { loadTokensFile, TokensFileError } from './auth/tokens-file.js';
import { type Config, ConfigError } from './config/config.js';
import { readConfig } from './config/read-config.js';
import { CoordinatorHost } from './coordinator/coordinator-host.js';
import { acquireLogLock, type LogLock, LogLockedError } from './event-log/log-lock.js';
import { sqliteFileOf } from './event-log/open-event-log.js';
import { createHttpAdapter } from './http/http-adapter.js';
import { CoordinatorWsAdapter } from './websocket/coordinator-ws.adapter.js';
import { WebSocketUpgrades } from './websocket/websocket-upgrades.js';
import { createLogger, drainLogger, NestPinoLogger } from './logging/logger.js';
import { GrantSigner } from './signing/grant-signer.js';
import { SigningWorker } from './signing/signing-worker.js';
import { loadSigningKeys, SIGNING_KEYS_FILE_VARIABLE, SigningKeysError } from './signing/signing-keys.js';

/** Server keep-alive: longer than common client and load-balancer idle timeouts, so connections are reused. */
const KEEP_ALIVE_TIMEOUT_MILLIS = 65_000;
/**
 * After a stop signal, connections still open after this share of the shutdown deadline
 * (`LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS`, see `Config.shutdownDeadlineMillis`) are closed: 5 s
 * of the default 10 s.
 */
const SHUTDOWN_GRACE_SHARE = 0.5;
/** Longest wait for the last log lines to reach stdout before exiting (milliseconds). */
const LOG_DRAIN_MILLIS = 1_000;

/** Exits with `code` once the log lines so far are written, or after {@link LOG_DRAIN_MILLIS} (stdout may be gone). */
async function exit(logger: Logger, code: number): Promise<never> {
  await drainLogger(logger, LOG_DRAIN_MILLIS);
  process.exit(code);
}

/** Refuses to start: one clean message on stderr (no log line, no stack), exit 1. */
function refuseStart(message: string): never {
  writeRefusal(message);
  process.exit(1);
}

/** Writes why the coordinator does not start to stderr, prefixed with its name. */
function writeRefusal(message: string): void {
  process.stderr.write(`lease-fence coordinator: ${message}\n`);
}

/** Listen errors that come from the host (`HOST`): it does not resolve, or is not an address of this machine. */
const HOST_LISTEN_ERRORS: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);
/** Listen errors that come from the port (`PORT`): taken by another process, or privileged. */
const PORT_LISTEN_ERRORS: ReadonlySet<string> = new Set(['EADDRINUSE', 'EACCES']);

/**
 * A listen error that a setting explains, as the {@link ConfigError} naming `HOST` or `PORT`
 * (e.g. `HOST: cannot listen on "0.0.0.0x" (getaddrinfo ENOTFOUND)`); `undefined` for any other.
 */
function listenRefusal(error: unknown, config: Pick<Config, 'host' | 'port'>): ConfigError | undefined {
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (typeof code !== 'string') return undefined;
  const cause = `(${typeof syscall === 'string' ? `${syscall} ` : ''}${code})`;
  if (HOST_LISTEN_ERRORS.has(code))
    return new ConfigError([{ variable: 'HOST', message: `cannot listen on ${JSON.stringify(config.host)} ${cause}` }]);
  if (PORT_LISTEN_ERRORS.has(code))
    return new ConfigError([
      { variable: 'PORT', message: `cannot listen on port ${config.port} of ${JSON.stringify(config.host)} ${cause}` },
    ]);
  return undefined;
}

function configOrExit(): Config {
  try {
    return readConfig();
  } catch (error) {
    if (error instanceof ConfigError) refuseStart(error.message);
    throw error;
  }
}

/**
 * Takes the SQLite log's lock for the process lifetime (released at exit), before anything opens
 * the log. Only an `active` coordinator on `sqlite` takes it: a `standby` shares the log with the
 * active one by design, and the other logs are not files of this data directory.
 */
function lockLogOrExit(config: Config, logger: Logger): LogLock | undefined {
  if (config.eventLog !== 'sqlite' || config.role !== 'active') return undefined;
  const logFile = sqliteFileOf(config);
  let lock: LogLock;
  try {
    mkdirSync(config.dataDir, { recursive: true });
    lock = acquireLogLock(logFile);
  } catch (error) {
    refuseStart(
      error instanceof LogLockedError
        ? error.message
        : `cannot lock the event log ${logFile}: ${(error as Error).message}`,
    );
  }
  process.on('exit', () => lock.release());
  if (lock.replacedStale !== undefined) {
    logger.warn(
      { lockFile: lock.lockFile, previousPid: lock.replacedStale.pid },
      `replaced the lock of coordinator pid ${lock.replacedStale.pid}, which is gone`,
    );
  }
  return lock;
}

/**
 * With an IPC channel to its launcher (`scripts/start.mjs` opens one), stops when the channel
 * closes: the launcher has died (a `kill -9` of its process group does not reach this process,
 * which runs in a group of its own). The channel does not keep the process alive by itself.
 */
function stopWhenLauncherGone(stop: (signal: string) => Promise<void>): void {
  if (process.channel === undefined) return;
  process.channel.unref();
  if (!process.connected) void stop('launcher-gone');
  else process.once('disconnect', () => void stop('launcher-gone'));
}

/** `['TCPWrap', 'Timeout', 'TCPWrap']` → `{ TCPWrap: 2, Timeout: 1 }`: what keeps the process busy, for the log. */
const countOf = (names: readonly string[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
};

/**
 * Loads the grant signing keys (the operator's file, or the data directory's, generated on the
 * first start), or refuses to start saying what is wrong with the file.
 */
async function signerOrExit(config: Config, logger: Logger): Promise<GrantSigner> {
  try {
    const keys = await loadSigningKeys(config.signingKeysFile, config.dataDir);
    const fields = { file: keys.file, kid: keys.active.kid, publishedKeys: keys.published.length };
    if (keys.generated) logger.info(fields, 'generated a signing key (mode 0600): grants are signed with it');
    else logger.info(fields, 'signing grants with the first key of the key set file');
    if (keys.readableByOthers)
      logger.warn({ file: keys.file }, 'the signing keys file is readable by group or others: chmod 600 it');
    // Signs each append's grants while it is committed; if the thread dies, grants are signed
    // on the main thread from then on (`signing/signing-worker.ts`).
    const worker = new SigningWorker(KeyObject.from(keys.active.privateKey), (error) =>
      logger.error(
        { err: error },
        'the grant signing thread stopped: grants are signed on the main thread from now on',
      ),
    );
    return new GrantSigner(keys, config.namespace, worker);
  } catch (error) {
    if (!(error instanceof SigningKeysError)) throw error;
    await drainLogger(logger, LOG_DRAIN_MILLIS);
    const variable = config.signingKeysFile === undefined ? 'LEASE_FENCE_DATA_DIR' : SIGNING_KEYS_FILE_VARIABLE;
    refuseStart(new ConfigError([{ variable, message: error.message }]).message);
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'bug: uncaught exception');
    void exit(logger, 1);
  });
  process.on('unhandledRejection', (error) => {
    logger.fatal({ err: error }, 'bug: unhandled promise rejection');
    void exit(logger, 1);
  });

  let tokens;
  try {
    tokens = await loadTokensFile(config.tokensFile);
  } catch (error) {
    if (!(error instanceof TokensFileError)) throw error;
    await drainLogger(logger, LOG_DRAIN_MILLIS);
    refuseStart(
      new ConfigError([{ variable: 'LEASE_FENCE_TOKENS_FILE', message: `${error.file}: ${error.problems.join('; ')}` }])
        .message,
    );
  }
  lockLogOrExit(config, logger);
  const signer = await signerOrExit(config, logger);
  const authFailures = new AuthFailureLog(logger);

  const nestLogger = new NestPinoLogger(logger);
  let app: NestFastifyApplication;
  try {
    app = await NestFactory.create<NestFastifyApplication>(
      AppModule.forRoot({ config, tokens, logger, authFailures, signer }),
      createHttpAdapter({ maxBodyBytes: config.maxBodyBytes }),
      {
        logger: nestLogger,
        bodyParser: false,
        abortOnError: false,
      },
    );
  } catch (error) {
    logger.fatal({ err: error }, `cannot start: ${(error as Error).message}`);
    return exit(logger, 1);
  }
  app.useWebSocketAdapter(new CoordinatorWsAdapter(app, app.get(WebSocketUpgrades)));
  let stopping = false;
  // While stopping, every reply closes its connection, so keep-alive connections end after their
  // in-flight request and the server's close() does not wait for idle timeouts.
  app.use((_request: unknown, response: { setHeader(name: string, value: string): void }, next: () => void) => {
    if (stopping) response.setHeader('connection', 'close');
    next();
  });

  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: stop accepting, finish in-flight appends, close the log');
    const server = app.getHttpServer() as import('node:http').Server;
    const graceMillis = Math.round(config.shutdownDeadlineMillis * SHUTDOWN_GRACE_SHARE);
    setTimeout(() => {
      logger.warn({ afterMillis: graceMillis }, 'shutdown: closing connections still open');
      server.closeAllConnections();
    }, graceMillis).unref();
    setTimeout(() => {
      server.getConnections((_error, openConnections) => {
        logger.error(
          {
            afterMillis: config.shutdownDeadlineMillis,
            openConnections,
            stillOpen: countOf(process.getActiveResourcesInfo()),
          },
          'shutdown did not finish in time (an append, the event log or a hook still pending); exiting',
        );
        void exit(logger, 1);
      });
    }, config.shutdownDeadlineMillis); // not unref'd: it must fire even if nothing else keeps the process up
    try {
      await app.close();
      logger.info('stopped');
      await exit(logger, 0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      await exit(logger, 1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  stopWhenLauncherGone(stop);

  // Nest logs a failed listen itself, as a bare `Error: …` line; the refusal below says it once.
  app.useLogger(false);
  try {
    await app.listen(config.port, config.host);
  } catch (error) {
    const refused = listenRefusal(error, config);
    if (refused !== undefined) {
      writeRefusal(refused.message);
      return exit(logger, 1); // the log lines before it are drained first
    }
    logger.fatal({ err: error, host: config.host, port: config.port }, `cannot listen: ${(error as Error).message}`);
    return exit(logger, 1);
  }
  app.useLogger(nestLogger);
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MILLIS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MILLIS + 1_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info(
    { url, port, eventLog: config.eventLog, namespace: config.namespace, dataDir: config.dataDir },
    'listening',
  );
  if (config.dashboardDir !== undefined)
    logger.info({ url: `${url}/`, dir: config.dashboardDir }, `dashboard at ${url}/`);
  else logger.info('no dashboard build found: set LEASE_FENCE_DASHBOARD_DIR or build apps/dashboard to serve it at /');

  // Recovery starts only now that the port is bound (see CoordinatorHost.recovered).
  const recovered = await app.get(CoordinatorHost).recovered();
  if (!recovered.ok) {
    logger.fatal({ err: recovered.error }, `recovery failed: ${(recovered.error as Error).message}`);
    await app.close().catch(() => undefined);
    return exit(logger, 1);
  }
  const { coordinator } = recovered;
  logger.info(
    {
      url,
      bootId: coordinator.bootId,
      position: coordinator.position,
      issuedFence: coordinator.issuedFence,
      recovery: coordinator.recovery,
    },
    'ready',
  );
}

await main();
