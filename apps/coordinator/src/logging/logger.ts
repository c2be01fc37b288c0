/**
 * Structured JSON logging with pino on an asynchronous destination (no synchronous write per
 * log line), and the adapter that routes NestJS's own log calls into it.
 */
import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';

/** DI token of the process's pino {@link Logger}. */
export const LOGGER = Symbol('lease-fence:logger');

/**
 * Creates the process logger: one JSON object per line on stdout, written asynchronously.
 * Call `logger.flush()` (or `flushSync` on exit paths) before the process ends.
 *
 * @param level - Minimum level written.
 */
export function createLogger(level: LogLevel): Logger {
  makeStdoutNonBlocking();
  return pino(
    { level, base: { service: 'lease-fence-coordinator', pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Puts stdout in non-blocking mode when it is a pipe or a socket, by opening Node's
 * `process.stdout` stream on it (libuv does that for pipes and sockets; files and terminals are
 * left as they are).
 *
 * Why: sonic-boom writes from libuv's thread pool. On a blocking pipe whose reader has stalled
 * (a launcher or log shipper that stopped reading), that write never returns, and
 * `process.exit` waits for the thread pool's threads: the process could never exit, whatever its
 * shutdown deadline. Non-blocking, the write fails with EAGAIN, sonic-boom retries it on a timer,
 * and {@link drainLogger} can give up on it.
 */
function makeStdoutNonBlocking(): void {
  void process.stdout.writable;
}

/** The part of pino's asynchronous destination (sonic-boom) that {@link drainLogger} uses. */
interface LogDestination {
  write(data: string): boolean;
  once(event: 'drain' | 'error', listener: () => void): unknown;
  removeListener(event: 'drain' | 'error', listener: () => void): unknown;
  flushSync(): void;
}

/**
 * Waits until the log lines written so far have been handed to stdout (or the write failed), for
 * at most `timeoutMillis`, so that the process can then exit without blocking on stdout. Call it
 * right before `process.exit`.
 *
 * Why: at exit pino flushes its destination synchronously, and sonic-boom's `flushSync` retries a
 * failed write forever (100 ms sleeps), whatever the error. With stdout's reader gone (its
 * launcher was killed: EPIPE) or stalled (a full pipe: EAGAIN), a coordinator told to stop never
 * ended. After this wait, a write still pending is abandoned: the exit-time `flushSync` becomes a
 * no-op, as pino itself does once it has seen EPIPE (`filterBrokenPipe` in pino's lib/tools.js).
 *
 * @param logger - A logger made by {@link createLogger}.
 * @param timeoutMillis - Longest wait (milliseconds).
 * @returns whether everything was handed over (`false`: lines still pending were dropped).
 */
export async function drainLogger(logger: Logger, timeoutMillis: number): Promise<boolean> {
  const destination = (logger as unknown as Record<symbol, LogDestination>)[pino.symbols.streamSym]!;
  const drained = await new Promise<boolean>((resolve) => {
    const settle = (outcome: boolean): void => {
      clearTimeout(timer);
      destination.removeListener('drain', onDrain);
      destination.removeListener('error', onDrain);
      resolve(outcome);
    };
    const onDrain = (): void => settle(true);
    const timer = setTimeout(() => settle(false), timeoutMillis);
    destination.once('drain', onDrain);
    destination.once('error', onDrain);
    // An empty write: 'drain' follows once it and every line queued before it are written.
    destination.write('');
  });
  if (!drained) destination.flushSync = () => undefined;
  return drained;
}

/** Nest contexts whose `log` calls are start-up chatter (module and route listings): logged at debug. */
const CHATTY_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
  'WebSocketsController',
]);

/**
 * Routes NestJS's logger calls into pino, keeping Nest's `context` as a field. Nest's start-up
 * chatter goes to `debug`, so `info` stays for things an operator acts on.
 */
export class NestPinoLogger implements LoggerService {
  /** @param logger - The process logger. */
  constructor(private readonly logger: Logger) {}

  /** Nest `log` → pino info (debug for start-up chatter). */
  log(message: unknown, context?: string): void {
    if (context !== undefined && CHATTY_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }

  /** Nest `error` → pino error; an Error message keeps its stack. */
  error(message: unknown, stackOrContext?: string, context?: string): void {
    if (message instanceof Error) this.logger.error({ context: stackOrContext, err: message }, message.message);
    else
      this.logger.error(
        { context: context ?? stackOrContext, stack: context === undefined ? undefined : stackOrContext },
        String(message),
      );
  }

  /** Nest `warn` → pino warn. */
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }

  /** Nest `debug` → pino debug. */
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  /** Nest `verbose` → pino trace. */
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }

  /** Nest `fatal` → pino fatal. */
  fatal(message: unknown, context?: string): void {
    this.logger.fatal({ context }, String(message));
  }
}
