/**
 * Starts the coordinator: parse the configuration (exit 1 naming a bad variable), load the
 * tokens file (exit 1 naming a bad entry and field), create the Nest application, listen, log
 * `listening` with the bound URL, then wait for recovery and log `ready`.
 * SIGTERM / SIGINT: stop accepting, finish in-flight appends, close the log, exit 0.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { loadTokensFile } from './auth/tokens-file.js';
import { type Config, ConfigError } from './config/config.js';
import { readConfig } from './config/read-config.js';
import { CoordinatorHost } from './coordinator/coordinator-host.js';
import { ApiExceptionFilter } from './http/api-exception.filter.js';
import { createDashboardMiddleware } from './http/serve-dashboard.js';
import { createLogger, NestPinoLogger } from './logging/logger.js';

/** Server keep-alive: longer than common client and load-balancer idle timeouts, so connections are reused. */
const KEEP_ALIVE_TIMEOUT_MILLIS = 65_000;
/** After a stop signal, connections still open after this long are closed (milliseconds). */
const SHUTDOWN_GRACE_MILLIS = 5_000;

const flush = (logger: Logger): Promise<void> => new Promise((resolve) => logger.flush(() => resolve()));

async function exit(logger: Logger, code: number): Promise<never> {
  await flush(logger);
  process.exit(code);
}

function configOrExit(): Config {
  try {
    return readConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`lease-fence coordinator: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
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
    logger.fatal({ err: error }, (error as Error).message);
    return exit(logger, 1);
  }

  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ config, tokens, logger }), {
      logger: new NestPinoLogger(logger),
      bodyParser: false,
      abortOnError: false,
    });
  } catch (error) {
    logger.fatal({ err: error }, `cannot start: ${(error as Error).message}`);
    return exit(logger, 1);
  }
  app.useBodyParser('json', { limit: config.maxBodyBytes, strict: true });
  app.useGlobalFilters(new ApiExceptionFilter(logger, { maxBodyBytes: config.maxBodyBytes }));
  app.set('etag', false);
  app.disable('x-powered-by');
  let stopping = false;
  // While stopping, every reply closes its connection, so keep-alive connections end after their
  // in-flight request and the server's close() does not wait for idle timeouts.
  app.use((_request: unknown, response: { setHeader(name: string, value: string): void }, next: () => void) => {
    if (stopping) response.setHeader('connection', 'close');
    next();
  });
  if (config.dashboardDir !== undefined) app.use(createDashboardMiddleware(config.dashboardDir));

  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: stop accepting, finish in-flight appends, close the log');
    const server = app.getHttpServer() as import('node:http').Server;
    setTimeout(() => {
      logger.warn({ afterMillis: SHUTDOWN_GRACE_MILLIS }, 'shutdown: closing connections still open');
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MILLIS).unref();
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

  try {
    await app.listen(config.port, config.host);
  } catch (error) {
    logger.fatal({ err: error, host: config.host, port: config.port }, `cannot listen: ${(error as Error).message}`);
    return exit(logger, 1);
  }
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MILLIS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MILLIS + 1_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, port, eventLog: config.eventLog, namespace: config.namespace, dataDir: config.dataDir }, 'listening');
  if (config.dashboardDir !== undefined) logger.info({ url: `${url}/`, dir: config.dashboardDir }, `dashboard at ${url}/`);
  else logger.info('no dashboard build found: set LEASE_FENCE_DASHBOARD_DIR or build apps/dashboard to serve it at /');

  const recovered = await app.get(CoordinatorHost).recovered();
  if (!recovered.ok) {
    logger.fatal({ err: recovered.error }, `recovery failed: ${(recovered.error as Error).message}`);
    await app.close().catch(() => undefined);
    return exit(logger, 1);
  }
  const { coordinator } = recovered;
  logger.info({ url, bootId: coordinator.bootId, position: coordinator.position, issuedFence: coordinator.issuedFence, recovery: coordinator.recovery }, 'ready');
}

await main();
