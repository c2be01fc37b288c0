/**
 * The connection settings every `lease-fence` command and the MCP server share: which coordinator,
 * which token, how much clock skew to allow. Each comes from a flag or its environment variable; a
 * flag wins over any variable. Values are checked with zod before anything is sent, and a bad one
 * is a {@link UsageError} naming the flag and the variable. Token values are never echoed.
 *
 * | flag            | variable                       | what                                                    |
 * | --------------- | ------------------------------ | ------------------------------------------------------- |
 * | `--url`         | `LEASE_FENCE_URL`              | the coordinator's base URL (http or https)              |
 * | `--token-file`  | `LEASE_FENCE_AGENT_TOKEN_FILE` | a file holding one token (surrounding whitespace cut)   |
 * | `--token`       | `LEASE_FENCE_AGENT_TOKEN`      | the token itself (visible in `ps`: prefer the file)     |
 * | `--clock-skew`  | `LEASE_FENCE_CLOCK_SKEW`       | bound on clock drift over one TTL, default `500ms`      |
 */
import { readFileSync } from 'node:fs';
import {
  CoordinatorHttp,
  CoordinatorHttpError,
  CoordinatorReplyError,
  CoordinatorUnavailableError,
  CoordinatorUnreachableError,
  coordinatorUrlProblem,
  LeaseFenceClient,
} from '@lease-fence/client';
import { isUnset } from '@lease-fence/config-env';
import { BearerTokenSchema, ErrorReplySchema, type WhoAmIReply, WhoAmIReplySchema } from '@lease-fence/protocol';
import { type Command, Option } from 'commander';
import { z } from 'zod';
import { DurationMillisSchema } from './duration.js';
import { CliError, EXIT, UsageError } from './exit-codes.js';

/** Each connection setting's flag and environment variable. */
export const CONNECTION_SETTINGS = {
  url: { flag: '--url', env: 'LEASE_FENCE_URL' },
  tokenFile: { flag: '--token-file', env: 'LEASE_FENCE_AGENT_TOKEN_FILE' },
  token: { flag: '--token', env: 'LEASE_FENCE_AGENT_TOKEN' },
  clockSkew: { flag: '--clock-skew', env: 'LEASE_FENCE_CLOCK_SKEW' },
} as const;

/** The name of one connection setting. */
export type ConnectionSettingName = keyof typeof CONNECTION_SETTINGS;

/** The clock skew allowed when neither `--clock-skew` nor `LEASE_FENCE_CLOCK_SKEW` is given. */
export const DEFAULT_CLOCK_SKEW = '500ms';

/** One setting's raw text and where it came from. */
export interface SettingValue {
  readonly value: string;
  readonly from: 'flag' | 'env';
}

/** The raw connection settings given (absent = given neither as a flag nor in the environment). */
export type ConnectionInput = { readonly [K in ConnectionSettingName]?: SettingValue };

/** Checked connection settings. */
export interface ConnectionSettings {
  /** The coordinator's base URL, without a trailing slash, e.g. `http://127.0.0.1:3000`. */
  readonly coordinatorUrl: string;
  /** The bearer token (an agent's for `run`; any role's for the reads). */
  readonly agentToken: string;
  /** Where the token came from, for messages: `--token-file /etc/agent.token`, `LEASE_FENCE_AGENT_TOKEN`, … */
  readonly tokenSource: string;
  /** Milliseconds subtracted from every lease deadline for clock drift (the SDK's `clockSkewMillis`). */
  readonly clockSkewMillis: number;
}

/** An agent's checked connection: the settings, the holder its token is bound to, and an SDK client for it. */
export interface AgentConnection extends ConnectionSettings {
  /** The holder id the coordinator's tokens file binds the token to (from `GET /v1/whoami`). */
  readonly holderId: string;
  /** The SDK client: acquire, renew, release, `keep`, `withLease`. */
  readonly client: LeaseFenceClient;
}

/**
 * Adds the connection options (`--url`, `--token-file`, `--token`, `--clock-skew`), each with its
 * environment variable, to `command`. Commander reads the variable only when the flag is absent.
 *
 * @returns `command`, for chaining.
 */
export function addConnectionOptions<C extends Command>(command: C): C {
  const { url, tokenFile, token, clockSkew } = CONNECTION_SETTINGS;
  command
    .addOption(new Option(`${url.flag} <url>`, "the coordinator's base URL, e.g. http://127.0.0.1:3000").env(url.env))
    .addOption(new Option(`${tokenFile.flag} <path>`, 'a file holding one token').env(tokenFile.env))
    .addOption(
      new Option(`${token.flag} <token>`, 'the token itself (other users can see it in ps: prefer --token-file)').env(
        token.env,
      ),
    )
    .addOption(
      new Option(
        `${clockSkew.flag} <duration>`,
        `bound on how far this host's clock may drift from the coordinator's over one TTL (${DEFAULT_CLOCK_SKEW} unless set; more for laptops and VMs that sleep)`,
      ).env(clockSkew.env),
    );
  return command;
}

/**
 * The connection settings given to `command` (after parsing), each with where it came from; a
 * blank variable is left out. Commander's value sources: `cli` = the flag, `env` = the variable.
 */
export function connectionInputOf(command: Command): ConnectionInput {
  const options = command.opts<Record<string, unknown>>();
  const input: Partial<Record<ConnectionSettingName, SettingValue>> = {};
  for (const name of Object.keys(CONNECTION_SETTINGS) as ConnectionSettingName[]) {
    const value = options[name];
    if (typeof value !== 'string') continue;
    const from = command.getOptionValueSource(name) === 'env' ? 'env' : 'flag';
    // A blank variable is unset, as the coordinator and the gate read theirs (`export VAR=` in a
    // shell or an empty line of an env file is how users clear one); a blank flag stays a bad value.
    if (from === 'env' && isUnset(value)) continue;
    input[name] = { value, from };
  }
  return input;
}

const BaseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' })
  .transform((text, context) => {
    const url = new URL(text);
    const problem = coordinatorUrlProblem(url);
    if (problem === undefined) return url.href.replace(/\/+$/, '');
    context.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });

/** `--url` / `LEASE_FENCE_URL: …`, or just the one that was used. */
const nameOf = (name: ConnectionSettingName, from?: SettingValue['from']): string => {
  const { flag, env } = CONNECTION_SETTINGS[name];
  if (from === 'flag') return flag;
  if (from === 'env') return env;
  return `${flag} (or ${env})`;
};

const check = <T>(schema: z.ZodType<T, string>, name: ConnectionSettingName, setting: SettingValue): T => {
  const parsed = schema.safeParse(setting.value);
  if (parsed.success) return parsed.data;
  const problem = parsed.error.issues.map((issue) => issue.message).join('; ');
  throw new UsageError(`${nameOf(name, setting.from)}: ${problem}`);
};

/** Reads a token file: one token, surrounding whitespace (a trailing newline) cut. */
export type ReadTokenFile = (path: string) => string;

const readTokenFileSync: ReadTokenFile = (path) => readFileSync(path, 'utf8');

/**
 * Checks the connection settings and reads the token file.
 *
 * Precedence: a flag beats every environment variable (so `--token-file` overrides
 * `LEASE_FENCE_AGENT_TOKEN`); `--token` and `--token-file` together are refused, and so are both
 * token variables set at once, since either choice could be the wrong one.
 *
 * @param input - The raw settings ({@link connectionInputOf}).
 * @param readTokenFile - Reads the token file. @defaultValue `readFileSync(path, 'utf8')`
 * @throws {@link UsageError} naming the flag or variable: no URL, a URL that is not http(s), no token,
 *   two tokens, a token file that cannot be read or does not hold exactly one token, a token with
 *   spaces or non-ASCII characters, or a clock skew that is not a duration.
 */
export function resolveConnectionSettings(
  input: ConnectionInput,
  readTokenFile: ReadTokenFile = readTokenFileSync,
): ConnectionSettings {
  if (input.url === undefined) {
    throw new UsageError(`${nameOf('url')}: the coordinator's base URL is required, e.g. http://127.0.0.1:3000`);
  }
  const coordinatorUrl = check(BaseUrlSchema, 'url', input.url);
  const { agentToken, tokenSource } = resolveToken(input, readTokenFile);
  const clockSkew = input.clockSkew ?? { value: DEFAULT_CLOCK_SKEW, from: 'flag' };
  const clockSkewMillis = check(DurationMillisSchema, 'clockSkew', clockSkew);
  return { coordinatorUrl, agentToken, tokenSource, clockSkewMillis };
}

const resolveToken = (
  input: ConnectionInput,
  readTokenFile: ReadTokenFile,
): { agentToken: string; tokenSource: string } => {
  const { tokenFile, token } = input;
  const flags = [tokenFile, token].filter((setting) => setting?.from === 'flag');
  const chosen =
    flags.length > 0
      ? {
          tokenFile: tokenFile?.from === 'flag' ? tokenFile : undefined,
          token: token?.from === 'flag' ? token : undefined,
        }
      : { tokenFile, token };
  if (chosen.tokenFile !== undefined && chosen.token !== undefined) {
    const [a, b] = [nameOf('tokenFile', chosen.tokenFile.from), nameOf('token', chosen.token.from)];
    throw new UsageError(`${a} and ${b} are both given: give one of them`);
  }
  if (chosen.token !== undefined) {
    return {
      agentToken: check(BearerTokenSchema, 'token', chosen.token),
      tokenSource: nameOf('token', chosen.token.from),
    };
  }
  if (chosen.tokenFile !== undefined) {
    const path = chosen.tokenFile.value;
    const name = nameOf('tokenFile', chosen.tokenFile.from);
    let text: string;
    try {
      text = readTokenFile(path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new UsageError(`${name}: cannot read the token file ${path}: ${reason}`, { cause: error });
    }
    const parsed = BearerTokenSchema.safeParse(text.trim());
    if (!parsed.success) {
      const problem = parsed.error.issues.map((issue) => issue.message).join('; ');
      throw new UsageError(`${name}: the token file ${path} must hold one token: it ${problem}`);
    }
    return { agentToken: parsed.data, tokenSource: `${name} ${path}` };
  }
  throw new UsageError(
    `a token is required: ${CONNECTION_SETTINGS.tokenFile.flag} <path> (or ${CONNECTION_SETTINGS.tokenFile.env}), or ${CONNECTION_SETTINGS.token.flag} <token> (or ${CONNECTION_SETTINGS.token.env})`,
  );
};

/** {@link resolveConnectionSettings} of `command`'s parsed options. @throws {@link UsageError} as it does. */
export function connectionSettingsOf(command: Command): ConnectionSettings {
  return resolveConnectionSettings(connectionInputOf(command));
}

/**
 * The SDK's HTTP transport for `settings` (its retries, timeouts and typed errors), for the reads
 * (`GET /v1/leases`, `/v1/events`, `/v1/rejections`, `/v1/whoami`).
 */
export function coordinatorHttp(settings: ConnectionSettings): CoordinatorHttp {
  return new CoordinatorHttp('lease-fence', { baseUrl: settings.coordinatorUrl, token: settings.agentToken });
}

/**
 * Asks the coordinator who the token is (`GET /v1/whoami`).
 * @throws {@link CliError} (69 unreachable, 77 token refused, 76 a reply the protocol does not allow).
 */
export async function whoAmI(settings: ConnectionSettings, signal?: AbortSignal): Promise<WhoAmIReply> {
  try {
    const { value } = await coordinatorHttp(settings).get('whoami', '/v1/whoami', { 200: WhoAmIReplySchema }, signal);
    return value;
  } catch (error) {
    throw toCliError(error, settings);
  }
}

/**
 * Opens an agent's connection: checks with the coordinator that the token is an agent's, learns the
 * holder it is bound to, and builds a {@link LeaseFenceClient} for it.
 *
 * @param what - What needs the agent token, for the wrong-role message (e.g. `lease-fence run`).
 * @throws {@link CliError} 77 when the token is refused or is not an agent's (the message says its role
 *   and where it came from); 69 when the coordinator cannot be reached; 76 on a reply the protocol does not allow.
 */
export async function openAgentConnection(
  settings: ConnectionSettings,
  what: string,
  signal?: AbortSignal,
): Promise<AgentConnection> {
  const principal = await whoAmI(settings, signal);
  if (principal.role !== 'agent') {
    throw new CliError(
      EXIT.tokenRefused,
      `${what} needs an agent token; the token from ${settings.tokenSource} has the ${principal.role} role at ${settings.coordinatorUrl}`,
    );
  }
  const client = new LeaseFenceClient({
    baseUrl: settings.coordinatorUrl,
    token: settings.agentToken,
    holderId: principal.holderId,
    clockSkewMillis: settings.clockSkewMillis,
  });
  return { ...settings, holderId: principal.holderId, client };
}

/**
 * Turns a failure of a request to the coordinator into the {@link CliError} the command line
 * reports: the coordinator's URL, what failed, and the exit code for it. Other errors pass through.
 *
 * @param flagOfField - The flag each request field came from (`{ ttlMillis: '--ttl' }`): the
 *   coordinator's 400 names the wire's fields, which the user never typed; the message names the flag.
 */
export function toCliError(
  error: unknown,
  settings: ConnectionSettings,
  flagOfField: Readonly<Record<string, string>> = {},
): unknown {
  const url = settings.coordinatorUrl;
  if (error instanceof CoordinatorUnreachableError) {
    return new CliError(EXIT.coordinatorUnavailable, `cannot reach the coordinator at ${url}: ${error.message}`, {
      cause: error,
    });
  }
  if (error instanceof CoordinatorUnavailableError) {
    return new CliError(EXIT.coordinatorUnavailable, `the coordinator at ${url} cannot serve now: ${error.message}`, {
      cause: error,
    });
  }
  if (error instanceof CoordinatorHttpError) {
    const message = messageOf(error.body, flagOfField);
    if (error.status === 401 || error.status === 403) {
      return new CliError(
        EXIT.tokenRefused,
        `the coordinator at ${url} refused the token from ${settings.tokenSource} (HTTP ${error.status}): ${message}`,
        { cause: error },
      );
    }
    if (error.status === 400) return new UsageError(`${error.operation}: ${message}`, { cause: error });
    if (error.status === 404) {
      // Every route the command line asks for exists on a coordinator: the URL is not a coordinator's
      // base URL (most often one with /v1 or another path of the API on it).
      const { flag, env } = CONNECTION_SETTINGS.url;
      return new UsageError(
        `no lease-fence coordinator answers at ${url} (${error.operation}: HTTP 404: ${message}): ${flag} (or ${env}) must be the coordinator's base URL, the one its dashboard link starts with, e.g. http://127.0.0.1:3000, without /v1`,
        { cause: error },
      );
    }
    return new CliError(
      EXIT.protocol,
      `${error.operation}: the coordinator at ${url} answered HTTP ${error.status}: ${message}`,
      {
        cause: error,
      },
    );
  }
  if (error instanceof CoordinatorReplyError) {
    return new CliError(EXIT.protocol, `the coordinator at ${url}: ${error.message}`, { cause: error });
  }
  return error;
}

/**
 * The coordinator's error message (with the fields its issues name, each by the flag it came from
 * when `flagOfField` has one), or the body as text.
 */
const messageOf = (body: unknown, flagOfField: Readonly<Record<string, string>>): string => {
  const parsed = ErrorReplySchema.safeParse(body);
  if (!parsed.success) return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body);
  const issues = parsed.data.issues ?? [];
  const wire = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  const nameOf = (path: string): string => (Object.hasOwn(flagOfField, path) ? flagOfField[path]! : path);
  const named = issues.map((issue) => `${nameOf(issue.path)}: ${issue.message}`).join('; ');
  if (wire === '') return parsed.data.message;
  return parsed.data.message.includes(wire)
    ? parsed.data.message.replace(wire, named)
    : `${parsed.data.message} (${named})`;
};
