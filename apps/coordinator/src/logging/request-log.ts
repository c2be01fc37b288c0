/**
 * The request log: one debug line per HTTP request once its reply is sent (method, path without
 * the query string, status, duration, request id). A middleware of every route
 * (`http/http.module.ts`), installed only when `LOG_LEVEL` is `debug` or `trace`, so at `info` no
 * request pays for it; refused credentials are logged at warn regardless (see
 * `auth/auth-failure-log.ts`), bugs (500) at error, both with the request id too.
 */
import type { Logger } from 'pino';
import { requestIdOf, type WithRequestId } from '../http/request-id.js';

/** The parts of the (Node) request the log reads. */
export interface LoggedRequest extends WithRequestId {
  readonly method?: string | undefined;
  /** The URL as received; everything from `?` on is dropped (a `token` may be there). */
  readonly originalUrl?: string;
  /** The URL, when the middleware layer set no `originalUrl`. */
  readonly url?: string | undefined;
}

/** The parts of the (Node) response the log reads. */
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
      const url = request.originalUrl ?? request.url ?? '/';
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      const requestId = requestIdOf(request);
      logger.debug(
        {
          method: request.method,
          path,
          status: response.statusCode,
          durationMillis: Math.round((now() - startedMillis) * 1000) / 1000,
          ...(requestId === undefined ? {} : { requestId }),
        },
        'request',
      );
    });
    next();
  };
}
