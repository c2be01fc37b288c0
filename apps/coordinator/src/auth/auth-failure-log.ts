/**
 * The log of refused credentials: every 401 and 403 (HTTP routes and stream upgrades) as one
 * warn line with the method, the path (never the query string, which may carry a stream
 * `token`), the status and the reason, never the token. Rate-limited, so a client hammering with
 * a bad token cannot flood the log: at most `maxLinesPerWindow` lines per window, then one line
 * saying how many were left out.
 */
import type { Logger } from 'pino';

/** One refused request. */
export interface AuthFailure {
  /** HTTP method, e.g. `POST`. */
  readonly method: string;
  /** Request URL; everything from `?` on is dropped before logging. */
  readonly url: string;
  /** 401 (no or unknown token) or 403 (a token whose role may not do this). */
  readonly status: 401 | 403;
  /** Why, as the reply says it (it never contains the token). */
  readonly reason: string;
  /** Client address, when known. */
  readonly remoteAddress?: string | undefined;
  /** The request's id (`http/request-id.ts`), when it went through the HTTP pipeline. */
  readonly requestId?: string | undefined;
}

/** Options of {@link AuthFailureLog}. */
export interface AuthFailureLogOptions {
  /** Lines logged per window at most. Positive integer. @defaultValue 10 */
  readonly maxLinesPerWindow?: number;
  /** Length of a window (milliseconds, the `now` clock). @defaultValue 10 000 */
  readonly windowMillis?: number;
  /** Monotonic milliseconds. @defaultValue `performance.now` */
  readonly now?: () => number;
}

/** Longest path written to the log (characters); longer ones are cut and marked with `…`. */
const MAX_LOGGED_PATH_LENGTH = 200;

/** Rate-limited warn log of 401 and 403 replies; one instance per process, shared by the HTTP filter and the stream. */
export class AuthFailureLog {
  private readonly maxLinesPerWindow: number;
  private readonly windowMillis: number;
  private readonly now: () => number;
  private windowStartMillis = Number.NEGATIVE_INFINITY;
  private linesInWindow = 0;
  private suppressed = 0;

  /**
   * @param logger - Where the lines go (warn level).
   * @param options - See {@link AuthFailureLogOptions}.
   * @throws RangeError when `maxLinesPerWindow` or `windowMillis` is not a positive integer.
   */
  constructor(
    private readonly logger: Pick<Logger, 'warn'>,
    options: AuthFailureLogOptions = {},
  ) {
    this.maxLinesPerWindow = options.maxLinesPerWindow ?? 10;
    this.windowMillis = options.windowMillis ?? 10_000;
    this.now = options.now ?? (() => performance.now());
    for (const [field, value] of [
      ['maxLinesPerWindow', this.maxLinesPerWindow],
      ['windowMillis', this.windowMillis],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new RangeError(`AuthFailureLog: ${field} must be a positive integer, got ${value}`);
    }
  }

  /** Logs `failure` at warn, unless this window's lines are used up (then it is counted, and the count logged when the next window opens). */
  record(failure: AuthFailure): void {
    const now = this.now();
    if (now - this.windowStartMillis >= this.windowMillis) {
      if (this.suppressed > 0) {
        this.logger.warn(
          { suppressed: this.suppressed, windowMillis: this.windowMillis },
          `${this.suppressed} more authentication failures were not logged (at most ${this.maxLinesPerWindow} lines per ${this.windowMillis} ms)`,
        );
      }
      this.windowStartMillis = now;
      this.linesInWindow = 0;
      this.suppressed = 0;
    }
    if (this.linesInWindow >= this.maxLinesPerWindow) {
      this.suppressed += 1;
      return;
    }
    this.linesInWindow += 1;
    const path = pathOf(failure.url);
    const fields = {
      method: failure.method,
      path,
      status: failure.status,
      reason: failure.reason,
      ...(failure.remoteAddress === undefined ? {} : { remoteAddress: failure.remoteAddress }),
      ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
    };
    this.logger.warn(
      fields,
      `${failure.status === 401 ? 'authentication' : 'authorization'} failed: ${failure.method} ${path}: ${failure.reason}`,
    );
  }
}

const pathOf = (url: string): string => {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > MAX_LOGGED_PATH_LENGTH ? `${path.slice(0, MAX_LOGGED_PATH_LENGTH)}…` : path;
};
