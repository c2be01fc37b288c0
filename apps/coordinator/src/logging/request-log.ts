/**
 * The request log: one debug line per HTTP request once its reply is sent (method, path without
 * the query string, status, duration). `main.ts` installs it only when `LOG_LEVEL` is `debug` or
 * `trace`, so at `info` the hot path pays nothing for it; refused credentials are logged at warn
 * regardless (see `auth/auth-failure-log.ts`), bugs (500) at error.
 */
import type { Logger } from 'pino';

/** The parts of the (Express) request the log reads. */
export interface LoggedRequest {
  readonly method: string;
  /** The URL as received; everything from `?` on is dropped (a `token` may be there). */
  readonly originalUrl: string;
}

/** The parts of the (Express) response the log reads. */
export interface LoggedResponse {
  readonly statusCode: number;
  once(event: 'finish', listener: () => void): unknown;
}

/**
 * Creates the request-log middleware.
 * @param logger - Written at debug.
 * @param now - Monotonic milliseconds. @defaultValue `performance.now`
 */
export function createRequestLogMiddleware(logger: Pick<Logger, 'debug'>, now: () => number = () => performance.now()) {
  return (request: LoggedRequest, response: LoggedResponse, next: () => void): void => {
    const startedMillis = now();
    response.once('finish', () => {
      const query = request.originalUrl.indexOf('?');
      const path = query === -1 ? request.originalUrl : request.originalUrl.slice(0, query);
      logger.debug({ method: request.method, path, status: response.statusCode, durationMillis: Math.round((now() - startedMillis) * 1000) / 1000 }, 'request');
    });
    next();
  };
}
