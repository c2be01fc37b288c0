/**
 * The HTTP pipeline every route goes through, declared the Nest way: the exception filter as
 * `APP_FILTER`, and the middleware through {@link NestModule.configure}, in this order: the
 * request log (debug only), authentication of `/v1` (before the body is read: no token, no
 * validation feedback), 405 for a known route with the wrong method, and the dashboard's files
 * (when a build is configured). Then Fastify parses the body (`http/http-adapter.ts`), and the
 * route's guard and controller run.
 */
import { Inject, type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import type { Logger } from 'pino';
import { AuthFailureLog } from '../auth/auth-failure-log.js';
import { createAuthenticationMiddleware } from '../auth/authenticate.middleware.js';
import { TokenRegistry } from '../auth/token-registry.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { API_ROUTES } from '../docs/api-routes.js';
import { LOGGER } from '../logging/logger.js';
import { createRequestLogMiddleware } from '../logging/request-log.js';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { createMethodNotAllowedMiddleware } from './method-not-allowed.js';
import { createDashboardMiddleware } from './serve-dashboard.js';

/** Every path, the root included. */
const EVERY_ROUTE = { path: '{*path}', method: RequestMethod.ALL };

/** The filter and the middleware of every HTTP route. */
@Module({
  providers: [
    {
      provide: APP_FILTER,
      useFactory: (logger: Logger, config: Config, authFailures: AuthFailureLog, adapterHost: HttpAdapterHost) =>
        new ApiExceptionFilter(logger, { maxBodyBytes: config.maxBodyBytes }, authFailures, adapterHost.httpAdapter),
      inject: [LOGGER, CONFIG, AuthFailureLog, HttpAdapterHost],
    },
  ],
})
export class HttpModule implements NestModule {
  constructor(
    private readonly tokens: TokenRegistry,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Applies the middleware to every route, in the order of the module's description. */
  configure(consumer: MiddlewareConsumer): void {
    const middleware: ((request: never, response: never, next: (error?: unknown) => void) => void)[] = [];
    if (this.logger.isLevelEnabled('debug')) middleware.push(createRequestLogMiddleware(this.logger));
    middleware.push(createAuthenticationMiddleware(this.tokens), createMethodNotAllowedMiddleware(API_ROUTES));
    if (this.config.dashboardDir !== undefined) middleware.push(createDashboardMiddleware(this.config.dashboardDir));
    consumer.apply(...middleware).forRoutes(EVERY_ROUTE);
  }
}
