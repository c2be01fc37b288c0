/**
 * `lease-fence mcp`: serves leases with fencing tokens to AI agents over the Model Context
 * Protocol, on stdio (the default: one session, the process) or Streamable HTTP (`--http`).
 * Connection settings are the command line's own (`connection.ts`); the token must be an agent's.
 */
import { createRequire } from 'node:module';
import { Command, InvalidArgumentError, Option } from 'commander';
import { z } from 'zod';
import {
  addConnectionOptions,
  connectionSettingsOf,
  coordinatorHttp,
  openAgentConnection,
  toCliError,
} from '../connection.js';
import { coordinatorHttpReads } from './coordinator-reads.js';
import { DURATION_SYNTAX, DurationMillisSchema, parseDurationMillis } from '../duration.js';
import { createLeaseFenceMcpServer } from './server.js';
import { serveStdio, serveStreamableHttp } from './transports.js';
import { UsageError } from '../exit-codes.js';
import type { CliIo } from '../cli-io.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** The default `--port` of `--http`. */
export const DEFAULT_MCP_PORT = 3200;
/** The default `--host` of `--http`: loopback only. */
export const DEFAULT_MCP_HOST = '127.0.0.1';
/** The default `--session-idle-timeout` of `--http`. */
export const DEFAULT_SESSION_IDLE_TIMEOUT = '30m';
/** The default `--max-sessions` of `--http`: sessions kept at once. */
export const DEFAULT_MAX_SESSIONS = 100;

const PortSchema = z.coerce
  .number()
  .int('must be a whole number')
  .min(0, 'must be 0 (any free port) to 65535')
  .max(65_535, 'must be 0 (any free port) to 65535');

const parseIdleTimeout = (text: string): number => {
  const parsed = DurationMillisSchema.safeParse(text);
  if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues.map((i) => i.message).join('; '));
  if (parsed.data < 1) throw new InvalidArgumentError(`must be longer than 0, got ${JSON.stringify(text)}`);
  return parsed.data;
};

const parseMaxSessions = (text: string): number => {
  const count = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(count) || count < 1)
    throw new InvalidArgumentError(`must be a whole number of sessions, 1 or more, got ${JSON.stringify(text)}`);
  return count;
};

const parsePort = (text: string): number => {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`must be a port number 0-65535, got ${JSON.stringify(text)}`);
  const parsed = PortSchema.safeParse(text);
  if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
};

/** The options (commander's camel-case names) that only `--http` reads: given without it, they are refused, not ignored. */
const HTTP_ONLY_OPTIONS = ['port', 'host', 'sessionIdleTimeout', 'maxSessions'] as const;

/** `sessionIdleTimeout` → `session-idle-timeout`: an option's name as typed. */
const kebabCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/**
 * The {@link UsageError} for an `--http` endpoint that cannot listen, naming the flag to change
 * (a port in use or not allowed, a host that is not an address of this machine); other errors
 * pass through.
 */
const listenError = (error: unknown, host: string, port: number): unknown => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const at = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new UsageError(
        `--port ${port}: ${at} is in use by another process: pick another --port (0 takes any free port, printed on stderr)`,
        { cause: error },
      );
    case 'EACCES':
      return new UsageError(
        `--port ${port}: this user may not listen on ${at} (EACCES): pick a port above 1023, or 0 for any free port`,
        { cause: error },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
      return new UsageError(
        `--host ${host}: cannot listen on it (${code}): give an address of this machine, e.g. 127.0.0.1 (the default) or 0.0.0.0`,
        { cause: error },
      );
    default:
      return error;
  }
};

/**
 * Builds the `mcp` subcommand.
 *
 * Exits (through the program's error handling) with the connection's codes when the coordinator
 * cannot be reached or the token is not an agent's, before serving anything.
 *
 * @param io - Its `onReaderGone` is set while serving stdio, so a client gone mid-call ends the session.
 */
export function mcpCommand(io: CliIo): Command {
  const command = new Command('mcp')
    .description(
      'Serve fenced leases to AI agents over MCP: tools acquire_lease, renew_lease, release_lease, who_holds, list_rejections, explain_rejection, fenced_request; resources lease-fence://leases and lease-fence://rejections. Leases are renewed while the session lives and released when it ends. stdio by default (logs go to stderr); --http for Streamable HTTP at /mcp.',
    )
    .addOption(new Option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio'))
    .addOption(
      new Option('--port <port>', `port for --http (0: any free port, printed on stderr)`)
        .argParser(parsePort)
        .default(DEFAULT_MCP_PORT),
    )
    .addOption(
      new Option(
        '--host <host>',
        'interface for --http; loopback (the default) also checks the Host header against DNS rebinding',
      ).default(DEFAULT_MCP_HOST),
    )
    .addOption(
      new Option(
        '--session-idle-timeout <duration>',
        `for --http: end a session (releasing its leases) after this long without a request (an open notification stream is none), e.g. 10m, 2h (${DURATION_SYNTAX}); a client that comes back later initializes a new session`,
      )
        .argParser(parseIdleTimeout)
        .default(parseDurationMillis(DEFAULT_SESSION_IDLE_TIMEOUT), DEFAULT_SESSION_IDLE_TIMEOUT),
    )
    .addOption(
      new Option(
        '--max-sessions <count>',
        'for --http: the most sessions kept at once; an initialize beyond it is answered 503 until one ends',
      )
        .argParser(parseMaxSessions)
        .default(DEFAULT_MAX_SESSIONS),
    );
  addConnectionOptions(command);
  command.action(
    async (
      options: { http?: boolean; port: number; host: string; sessionIdleTimeout: number; maxSessions: number },
      self: Command,
    ) => {
      if (options.http !== true) {
        const httpOnly = HTTP_ONLY_OPTIONS.filter((name) => self.getOptionValueSource(name) === 'cli');
        if (httpOnly.length > 0)
          throw new UsageError(
            `${httpOnly.map((name) => `--${kebabCase(name)}`).join(', ')}: only with --http (stdio takes none of them): add --http to serve Streamable HTTP, or leave them out`,
          );
      }
      const settings = connectionSettingsOf(self);
      const agent = await openAgentConnection(settings, 'lease-fence mcp');
      const reads = coordinatorHttpReads(coordinatorHttp(settings));
      // The same words for a coordinator that is down or refuses the token as the other commands use.
      const describeFailure = (error: unknown): string => {
        const described = toCliError(error, settings);
        return described instanceof Error ? described.message : String(described);
      };
      const newSession = () =>
        createLeaseFenceMcpServer({ client: agent.client, reads, version: VERSION, describeFailure });
      const stop = new AbortController();
      const onSignal = (): void => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        if (options.http !== true) {
          process.stderr.write(
            `lease-fence mcp: serving ${agent.holderId} on stdio, coordinator ${settings.coordinatorUrl}\n`,
          );
          // stdout is the protocol: once its reader is gone (the client died mid-call) the session
          // ends as when stdin closes, releasing its leases, rather than the process exiting at once.
          io.onReaderGone = () => stop.abort();
          await serveStdio(newSession, stop.signal);
          return;
        }
        const endpoint = await serveStreamableHttp(newSession, {
          host: options.host,
          port: options.port,
          sessionIdleMillis: options.sessionIdleTimeout,
          maxSessions: options.maxSessions,
        }).catch((error: unknown) => {
          throw listenError(error, options.host, options.port);
        });
        process.stderr.write(`lease-fence mcp: listening on ${endpoint.url} as ${agent.holderId}\n`);
        await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
        await endpoint.close();
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
  );
  return command;
}
