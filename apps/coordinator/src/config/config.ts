/**
 * The coordinator's configuration: every environment variable it reads, parsed once with zod
 * into a typed {@link Config} with units in the names. This file is pure (the environment, the
 * working directory and a file-existence check are parameters); `read-config.ts` is the one
 * place that reads `process.env`.
 *
 * @see docs/design.md § Layout (apps/coordinator is the composition root)
 */
import { isAbsolute, resolve } from 'node:path';
import { checkLockDelayRules, type LockDelayRule } from '@lease-fence/coordinator-core';
import {
  EnvConfigError,
  envInteger as integer,
  envIssuesOf,
  envLogLevel,
  envNamespace,
  envText as text,
  isUnset as unset,
  LOG_LEVELS,
  type EnvIssue,
  type LogLevel,
} from '@lease-fence/config-env';
import { ResourcePatternSchema } from '@lease-fence/protocol';
import { MAX_TTL_MILLIS } from 'lease-fence';
import { z } from 'zod';

/** Event-log adapters this build can open (`LEASE_FENCE_EVENT_LOG`). */
export type EventLogKind = 'sqlite' | 'memory' | 'eventstoredb';

/** The adapters of {@link EventLogKind}, in the order the error message lists them. */
const EVENT_LOG_KINDS: readonly EventLogKind[] = ['sqlite', 'memory', 'eventstoredb'];

/**
 * What this process does with its log (`LEASE_FENCE_ROLE`): `active` recovers and grants;
 * `standby` follows the log of another coordinator and takes over when it falls silent.
 * @see docs/design.md § "The event-sourced coordinator" (single writer) and § Scale (a standby per shard)
 */
export type CoordinatorRole = 'active' | 'standby';

/**
 * Connection-string schemes the KurrentDB client accepts (`kurrentdb`, `kurrent`, `kdb`, each
 * also `+discover` for a cluster), plus EventStoreDB's `esdb` / `esdb+discover`, which the
 * adapter rewrites to `kurrentdb`.
 */
const EVENTSTORE_CONNECTION_STRING_PATTERN = /^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\/\S+$/i;

/** pino log levels accepted in `LOG_LEVEL`, and one of them (from `@lease-fence/config-env`). */
export { LOG_LEVELS, type LogLevel };

/**
 * The parsed configuration. Durations are milliseconds, sizes bytes, paths absolute.
 * @see {@link parseConfig} for the variable behind each field and its default.
 */
export interface Config {
  /** TCP port to listen on; 0 picks a free port (the bound URL is logged as `listening`). `PORT`, default 3000. */
  readonly port: number;
  /** Interface to bind. `HOST`, default `127.0.0.1`. */
  readonly host: string;
  /** Directory holding the SQLite log and, by default, the tokens file. `LEASE_FENCE_DATA_DIR`, default `./data`. */
  readonly dataDir: string;
  /** Which EventLog adapter to open. `LEASE_FENCE_EVENT_LOG`, default `sqlite`. */
  readonly eventLog: EventLogKind;
  /**
   * Where the KurrentDB / EventStoreDB server is, e.g. `kurrentdb://localhost:2113?tls=false`
   * (`esdb://` accepted). `EVENTSTORE_CONNECTION_STRING`: required when `eventLog` is
   * `eventstoredb`, `undefined` otherwise. May hold credentials: never logged.
   */
  readonly eventStoreConnectionString: string | undefined;
  /**
   * SQLite durability: `full` fsyncs every group commit (survives power loss); `normal` survives a
   * process crash only. `LEASE_FENCE_SQLITE_DURABILITY`, default `full`.
   */
  readonly sqliteDurability: 'full' | 'normal';
  /**
   * Which thread runs SQLite's write transactions: `thread` (a writer thread owns the write
   * connection; the coordinator decides the next batch while the last one commits, at most 16
   * appends in flight, those queued behind a commit sharing the next one) or `inline` (on the event loop, one append at a time). Either way an
   * outcome is acknowledged only after the commit covering it. `LEASE_FENCE_SQLITE_WRITER`,
   * default `thread`: in three bench:service runs (both transports, interleaved with `inline`) it
   * did 1.04-1.53× the acquires/s of `inline` in 5 comparisons of 6, 0.87× in the sixth.
   */
  readonly sqliteWriter: 'inline' | 'thread';
  /** The coordinator namespace: one ordered log each. `LEASE_FENCE_NAMESPACE`, default `default`. */
  readonly namespace: string;
  /** TTL granted when an acquire names none (milliseconds). `LEASE_FENCE_TTL_MILLIS`, default 10 000. */
  readonly defaultTtlMillis: number;
  /** Smallest TTL a caller may ask for (milliseconds). `LEASE_FENCE_MIN_TTL_MILLIS`, default 100. */
  readonly minTtlMillis: number;
  /** Largest TTL a caller may ask for (milliseconds, ≤ 2^31 - 1). `LEASE_FENCE_MAX_TTL_MILLIS`, default 3 600 000. */
  readonly maxTtlMillis: number;
  /** Events between snapshots. `LEASE_FENCE_SNAPSHOT_EVERY`, default 10 000. */
  readonly snapshotEvery: number;
  /**
   * While leases are live (always, with `heartbeat`), an uptime checkpoint is appended after this
   * long without an append (milliseconds, this boot's monotonic clock). `LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS`, default 1 000.
   */
  readonly checkpointIntervalMillis: number;
  /**
   * Checkpoint also with no live lease, so a standby can tell an idle coordinator from a dead one.
   * Set it on every coordinator of a namespace that has a standby. `LEASE_FENCE_HEARTBEAT` (`true` / `false`), default `false`.
   */
  readonly heartbeat: boolean;
  /** `active` (recover and grant) or `standby` (follow, take over on silence). `LEASE_FENCE_ROLE`, default `active`. */
  readonly role: CoordinatorRole;
  /**
   * A standby takes over once the log has had no append for this long (milliseconds, the standby's
   * monotonic clock). Greater than `checkpointIntervalMillis`. `LEASE_FENCE_TAKEOVER_AFTER_MILLIS`,
   * default 3 × `checkpointIntervalMillis`.
   */
  readonly takeoverAfterMillis: number;
  /**
   * First wait before re-opening the coordinator after the event log failed (milliseconds); it
   * doubles per failed attempt, with jitter, up to `reopenMaxDelayMillis`.
   * `LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS`, default 100.
   */
  readonly reopenInitialDelayMillis: number;
  /** Longest wait between attempts to re-open the coordinator (milliseconds). `LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS`, default 5 000. */
  readonly reopenMaxDelayMillis: number;
  /**
   * After starting on a log that has issued no fence (new, or lost), acquisitions get 503
   * `awaiting-floors` for this long (milliseconds), so gates report their floors before the first
   * grant. `LEASE_FENCE_FLOOR_WAIT_MILLIS`, default 0 (no wait).
   */
  readonly floorWaitMillis: number;
  /**
   * Fences skipped above a gate's floor that is above every fence the log issued for its resource
   * (the log was lost): room for fences issued before the loss that no gate saw.
   * `LEASE_FENCE_LOST_FENCE_MARGIN`, default 1 000 000.
   */
  readonly lostFenceMarginFences: number;
  /** Bearer tokens file (JSON). `LEASE_FENCE_TOKENS_FILE`, default `<dataDir>/tokens.json`. */
  readonly tokensFile: string;
  /**
   * The operator's signing key set file (a JWKS of Ed25519 keys; the first one signs grants).
   * `LEASE_FENCE_SIGNING_KEYS_FILE`; `undefined` = `<dataDir>/signing-keys.json`, generated on the
   * first start. Required with `eventstoredb`, so a primary and its standby sign with the same key.
   */
  readonly signingKeysFile: string | undefined;
  /** Dashboard production build to serve at `/`, when there is one. `LEASE_FENCE_DASHBOARD_DIR`, default the dashboard package's `dist` if it exists. */
  readonly dashboardDir: string | undefined;
  /** pino level. `LOG_LEVEL`, default `info`. */
  readonly logLevel: LogLevel;
  /** Largest accepted request body (bytes); larger → 413. `LEASE_FENCE_MAX_BODY_BYTES`, default 16 384. */
  readonly maxBodyBytes: number;
  /**
   * Bound on a stream client's unsent bytes (the socket's `bufferedAmount`); above it the client is
   * sent `closing` (`slow-consumer`) and disconnected. `LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES`, default 1 MiB.
   */
  readonly streamMaxBufferedBytes: number;
  /** A heartbeat frame is sent when nothing was sent for this long (milliseconds). `LEASE_FENCE_STREAM_HEARTBEAT_MILLIS`, default 5 000. */
  readonly streamHeartbeatMillis: number;
  /** Interval of the stream's `stats` frames (milliseconds). `LEASE_FENCE_STREAM_STATS_MILLIS`, default 1 000. */
  readonly streamStatsMillis: number;
  /**
   * Interval of the stream's WebSocket pings (milliseconds, the event loop's timers); a client that
   * has not answered one (no pong) by the next is terminated and its subscription closed.
   * `LEASE_FENCE_STREAM_PING_MILLIS`, default 15 000.
   */
  readonly streamPingMillis: number;
  /**
   * Resource patterns (a name, or a prefix ending in `*`; the syntax of gate tokens) whose
   * acquires are fence-first: the lease becomes active only after a gate guarding the resource
   * durably admitted the new fence over the gate link. `LEASE_FENCE_FENCE_FIRST`, comma-separated,
   * default none.
   */
  readonly fenceFirstPatterns: readonly string[];
  /**
   * How long a fence-first acquire waits for a gate before its fence is burned and it answers 503
   * `fence-unavailable` (milliseconds). `LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS`, default 3 000.
   */
  readonly fenceFirstTimeoutMillis: number;
  /**
   * Lock-delay rules: after a lease on a covered resource ends by expiry (not release), or a gate
   * refuses a write of its holder, the resource is not granted again for the delay of the most
   * specific covering pattern (acquires get 409 `lock-delay` with `retryAfterMillis`).
   * `LEASE_FENCE_LOCK_DELAY`, `pattern=millis` pairs separated by commas (`deploy-*=5000,db-*=2000`);
   * patterns as in gate tokens. Default none.
   */
  readonly lockDelays: readonly LockDelayRule[];
  /**
   * Bound on a SIGTERM/SIGINT shutdown (milliseconds, the event loop's timers): connections still
   * open at half of it are closed, and a shutdown still unfinished at it (a hung event log, a peer
   * that never completes a WebSocket close) is abandoned: what was still open is logged and the
   * process exits 1. Keep it below the stop timeout of whatever supervises the process (`docker
   * stop` waits 10 s, `scripts/start.mjs` 15 s) minus the 1 s log drain. `LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS`,
   * default 10 000.
   */
  readonly shutdownDeadlineMillis: number;
}

/**
 * Thrown by {@link parseConfig} when a variable is malformed or out of range. `issues` names
 * every offending variable; the message lists them one per line. The process exits 1 on it.
 */
export class ConfigError extends EnvConfigError {
  /** @param issues - One entry per offending variable: its name and what is wrong. */
  constructor(issues: readonly EnvIssue[]) {
    super(issues);
    this.name = 'ConfigError';
  }
}

/** What {@link parseConfig} needs besides the environment; injected so the parse stays pure. */
export interface ParseConfigContext {
  /** Directory relative paths are resolved against (the process's working directory). */
  readonly cwd: string;
  /** Absolute path of the dashboard package's build, used when `LEASE_FENCE_DASHBOARD_DIR` is unset and it exists. */
  readonly defaultDashboardDir: string;
  /** Whether a directory holding `index.html` exists at the path. */
  readonly hasIndexHtml: (dir: string) => boolean;
}

const EnvSchema = z.object({
  PORT: integer(0, 65_535, '(TCP port)', 3000),
  HOST: text('127.0.0.1'),
  LEASE_FENCE_DATA_DIR: text('./data'),
  LEASE_FENCE_EVENT_LOG: text('sqlite').transform((raw, ctx): EventLogKind => {
    const kind = EVENT_LOG_KINDS.find((k) => k === raw);
    if (kind !== undefined) return kind;
    ctx.addIssue({ code: 'custom', message: `must be ${EVENT_LOG_KINDS.join(', ')}, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  }),
  EVENTSTORE_CONNECTION_STRING: z.string().optional(),
  LEASE_FENCE_SQLITE_DURABILITY: text('full').pipe(
    z.enum(['full', 'normal'], { error: (issue) => `must be full or normal, got ${JSON.stringify(issue.input)}` }),
  ),
  LEASE_FENCE_SQLITE_WRITER: text('thread').pipe(
    z.enum(['inline', 'thread'], { error: (issue) => `must be inline or thread, got ${JSON.stringify(issue.input)}` }),
  ),
  LEASE_FENCE_NAMESPACE: envNamespace('default'),
  LEASE_FENCE_TTL_MILLIS: integer(1, MAX_TTL_MILLIS, 'of milliseconds', 10_000),
  LEASE_FENCE_MIN_TTL_MILLIS: integer(1, MAX_TTL_MILLIS, 'of milliseconds', 100),
  LEASE_FENCE_MAX_TTL_MILLIS: integer(1, MAX_TTL_MILLIS, 'of milliseconds', 3_600_000),
  LEASE_FENCE_SNAPSHOT_EVERY: integer(1, Number.MAX_SAFE_INTEGER, 'number of events', 10_000),
  LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: integer(10, 3_600_000, 'of milliseconds', 1_000),
  LEASE_FENCE_HEARTBEAT: text('false').transform((raw, ctx): boolean => {
    const value = raw.toLowerCase();
    if (value === 'true' || value === 'false') return value === 'true';
    ctx.addIssue({ code: 'custom', message: `must be true or false, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  }),
  LEASE_FENCE_ROLE: text('active').pipe(
    z.enum(['active', 'standby'], {
      error: (issue) => `must be active or standby, got ${JSON.stringify(issue.input)}`,
    }),
  ),
  LEASE_FENCE_TAKEOVER_AFTER_MILLIS: integer(1, 3_600_000, 'of milliseconds', undefined),
  LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS: integer(1, 3_600_000, 'of milliseconds', 100),
  LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS: integer(1, 3_600_000, 'of milliseconds', 5_000),
  LEASE_FENCE_FLOOR_WAIT_MILLIS: integer(0, 3_600_000, 'of milliseconds', 0),
  LEASE_FENCE_LOST_FENCE_MARGIN: integer(0, 2 ** 50, 'number of fences', 1_000_000),
  LEASE_FENCE_TOKENS_FILE: z.string().optional(),
  LEASE_FENCE_SIGNING_KEYS_FILE: z.string().optional(),
  LEASE_FENCE_DASHBOARD_DIR: z.string().optional(),
  LOG_LEVEL: envLogLevel('info'),
  LEASE_FENCE_MAX_BODY_BYTES: integer(256, 1024 * 1024, 'of bytes', 16 * 1024),
  LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES: integer(1024, 256 * 1024 * 1024, 'of bytes', 1024 * 1024),
  LEASE_FENCE_STREAM_HEARTBEAT_MILLIS: integer(10, 3_600_000, 'of milliseconds', 5_000),
  LEASE_FENCE_STREAM_STATS_MILLIS: integer(10, 3_600_000, 'of milliseconds', 1_000),
  LEASE_FENCE_STREAM_PING_MILLIS: integer(10, 3_600_000, 'of milliseconds', 15_000),
  LEASE_FENCE_FENCE_FIRST: text('').transform((raw, ctx): readonly string[] => {
    if (raw === '') return [];
    const patterns = raw.split(',').map((pattern) => pattern.trim());
    for (const [index, pattern] of patterns.entries()) {
      const parsed = ResourcePatternSchema.safeParse(pattern);
      if (!parsed.success) {
        ctx.addIssue({
          code: 'custom',
          message: `pattern ${index + 1} (${JSON.stringify(pattern)}) ${parsed.error.issues[0]?.message ?? 'is not a resource pattern'}; expected comma-separated resource names, each optionally ending in *`,
        });
        return z.NEVER;
      }
    }
    return patterns;
  }),
  LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS: integer(1, 3_600_000, 'of milliseconds', 3_000),
  LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS: integer(100, 3_600_000, 'of milliseconds', 10_000),
  LEASE_FENCE_LOCK_DELAY: text('').transform((raw, ctx): readonly LockDelayRule[] => {
    const parsed = parseLockDelays(raw);
    if (typeof parsed !== 'string') return parsed;
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }),
});

/**
 * The name of every environment variable the coordinator reads, in the order of its schema.
 * `docs/service.md`'s configuration table lists exactly these (`config-table.spec.ts` checks it).
 */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/**
 * `LEASE_FENCE_LOCK_DELAY`: `pattern=millis` pairs separated by commas, spaces around each part
 * ignored; empty = no rules. The pattern is everything before the pair's last `=`, so a pattern
 * may contain `=` but not `,`. The rules themselves (pattern syntax, each pattern once, the delay's
 * range) are checked by coordinator-core's `checkLockDelayRules`, the one copy of them.
 * @returns the rules, or the message naming the first bad pair.
 */
function parseLockDelays(raw: string): readonly LockDelayRule[] | string {
  if (raw === '') return [];
  const pairs = raw.split(',').map((pair) => pair.trim());
  const rules: { pattern: string; millis: number }[] = [];
  for (const [index, pair] of pairs.entries()) {
    const name = `pair ${index + 1} ${JSON.stringify(pair)}`;
    const equals = pair.lastIndexOf('=');
    if (equals < 0) return `${name} must be pattern=millis, e.g. deploy-*=5000`;
    const millisText = pair.slice(equals + 1).trim();
    if (!/^\d+$/.test(millisText))
      return `${name}: the delay must be a whole number of milliseconds, got ${JSON.stringify(millisText)}`;
    rules.push({ pattern: pair.slice(0, equals).trim(), millis: Number(millisText) });
  }
  try {
    return checkLockDelayRules(
      '',
      rules,
      (index, field) =>
        `pair ${index + 1} ${JSON.stringify(pairs[index])}: the ${field === 'millis' ? 'delay' : 'pattern'}`,
    );
  } catch (error) {
    return (error as Error).message.replace(/^: /, '');
  }
}

/**
 * Parses the coordinator's environment variables into a {@link Config}. Unknown variables are
 * ignored; every known one is validated, and cross-field rules are checked
 * (`LEASE_FENCE_MIN_TTL_MILLIS ≤ LEASE_FENCE_TTL_MILLIS ≤ LEASE_FENCE_MAX_TTL_MILLIS`;
 * `EVENTSTORE_CONNECTION_STRING` and `LEASE_FENCE_SIGNING_KEYS_FILE` required with `LEASE_FENCE_EVENT_LOG=eventstoredb`; a standby
 * needs a shared log and `LEASE_FENCE_TAKEOVER_AFTER_MILLIS > LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS`;
 * `LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS ≤ LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS`).
 * Never replaces a bad value with its default.
 *
 * @param env - The environment (`process.env` in production).
 * @param context - Working directory and dashboard lookup; see {@link ParseConfigContext}.
 * @throws {@link ConfigError} naming every offending variable.
 */
export function parseConfig(env: Readonly<Record<string, string | undefined>>, context: ParseConfigContext): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(envIssuesOf(parsed.error));
  }
  const e = parsed.data;
  const issues: { variable: string; message: string }[] = [];
  if (e.LEASE_FENCE_MIN_TTL_MILLIS > e.LEASE_FENCE_MAX_TTL_MILLIS) {
    issues.push({
      variable: 'LEASE_FENCE_MIN_TTL_MILLIS',
      message: `must be ≤ LEASE_FENCE_MAX_TTL_MILLIS (${e.LEASE_FENCE_MAX_TTL_MILLIS}), got ${e.LEASE_FENCE_MIN_TTL_MILLIS}`,
    });
  } else if (
    e.LEASE_FENCE_TTL_MILLIS < e.LEASE_FENCE_MIN_TTL_MILLIS ||
    e.LEASE_FENCE_TTL_MILLIS > e.LEASE_FENCE_MAX_TTL_MILLIS
  ) {
    issues.push({
      variable: 'LEASE_FENCE_TTL_MILLIS',
      message: `must be within [LEASE_FENCE_MIN_TTL_MILLIS, LEASE_FENCE_MAX_TTL_MILLIS] = [${e.LEASE_FENCE_MIN_TTL_MILLIS}, ${e.LEASE_FENCE_MAX_TTL_MILLIS}] milliseconds, got ${e.LEASE_FENCE_TTL_MILLIS}`,
    });
  }
  const rawConnectionString = e.EVENTSTORE_CONNECTION_STRING;
  const connectionString =
    rawConnectionString === undefined || unset(rawConnectionString) ? undefined : rawConnectionString.trim();
  if (e.LEASE_FENCE_EVENT_LOG === 'eventstoredb' && connectionString === undefined) {
    issues.push({
      variable: 'EVENTSTORE_CONNECTION_STRING',
      message: 'is required when LEASE_FENCE_EVENT_LOG=eventstoredb, e.g. kurrentdb://localhost:2113?tls=false',
    });
  } else if (
    e.LEASE_FENCE_EVENT_LOG === 'eventstoredb' &&
    !EVENTSTORE_CONNECTION_STRING_PATTERN.test(connectionString ?? '')
  ) {
    // The value may hold credentials: name the scheme we expected, never echo the string.
    issues.push({
      variable: 'EVENTSTORE_CONNECTION_STRING',
      message:
        'must be a kurrentdb://, kurrentdb+discover://, kurrent://, kdb:// or esdb:// connection string (e.g. kurrentdb://localhost:2113?tls=false)',
    });
  }
  const signingKeysFile =
    e.LEASE_FENCE_SIGNING_KEYS_FILE === undefined || unset(e.LEASE_FENCE_SIGNING_KEYS_FILE)
      ? undefined
      : e.LEASE_FENCE_SIGNING_KEYS_FILE.trim();
  if (e.LEASE_FENCE_EVENT_LOG === 'eventstoredb' && signingKeysFile === undefined) {
    issues.push({
      variable: 'LEASE_FENCE_SIGNING_KEYS_FILE',
      message:
        'is required when LEASE_FENCE_EVENT_LOG=eventstoredb, so that a primary and its standby sign grants with the same key; ' +
        'create one with `node apps/coordinator/dist/signing/signing-keys-cli.js <file>` and give every coordinator of the namespace the same file',
    });
  }
  const takeoverAfterMillis = e.LEASE_FENCE_TAKEOVER_AFTER_MILLIS ?? 3 * e.LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS;
  if (e.LEASE_FENCE_ROLE === 'standby') {
    if (e.LEASE_FENCE_EVENT_LOG === 'memory') {
      issues.push({
        variable: 'LEASE_FENCE_ROLE',
        message:
          'standby needs a log shared with the active coordinator (eventstoredb or sqlite), got LEASE_FENCE_EVENT_LOG=memory',
      });
    }
    if (takeoverAfterMillis <= e.LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS) {
      issues.push({
        variable: 'LEASE_FENCE_TAKEOVER_AFTER_MILLIS',
        message: `must be greater than LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS (${e.LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS}), or an idle coordinator is taken over between two heartbeats; got ${takeoverAfterMillis}`,
      });
    }
  }
  if (e.LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS > e.LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS) {
    issues.push({
      variable: 'LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS',
      message: `must be ≤ LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS (${e.LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS}), got ${e.LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS}`,
    });
  }
  const absolute = (path: string): string => (isAbsolute(path) ? path : resolve(context.cwd, path));
  const dataDir = absolute(e.LEASE_FENCE_DATA_DIR);
  let dashboardDir: string | undefined;
  if (env.LEASE_FENCE_DASHBOARD_DIR !== undefined && !unset(env.LEASE_FENCE_DASHBOARD_DIR)) {
    dashboardDir = absolute(env.LEASE_FENCE_DASHBOARD_DIR.trim());
    if (!context.hasIndexHtml(dashboardDir)) {
      issues.push({
        variable: 'LEASE_FENCE_DASHBOARD_DIR',
        message: `must be a directory holding index.html, got ${JSON.stringify(env.LEASE_FENCE_DASHBOARD_DIR)}`,
      });
    }
  } else if (context.hasIndexHtml(context.defaultDashboardDir)) {
    dashboardDir = context.defaultDashboardDir;
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    eventLog: e.LEASE_FENCE_EVENT_LOG,
    eventStoreConnectionString: e.LEASE_FENCE_EVENT_LOG === 'eventstoredb' ? connectionString : undefined,
    sqliteDurability: e.LEASE_FENCE_SQLITE_DURABILITY,
    sqliteWriter: e.LEASE_FENCE_SQLITE_WRITER,
    namespace: e.LEASE_FENCE_NAMESPACE,
    defaultTtlMillis: e.LEASE_FENCE_TTL_MILLIS,
    minTtlMillis: e.LEASE_FENCE_MIN_TTL_MILLIS,
    maxTtlMillis: e.LEASE_FENCE_MAX_TTL_MILLIS,
    snapshotEvery: e.LEASE_FENCE_SNAPSHOT_EVERY,
    checkpointIntervalMillis: e.LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS,
    heartbeat: e.LEASE_FENCE_HEARTBEAT,
    floorWaitMillis: e.LEASE_FENCE_FLOOR_WAIT_MILLIS,
    lostFenceMarginFences: e.LEASE_FENCE_LOST_FENCE_MARGIN,
    role: e.LEASE_FENCE_ROLE,
    takeoverAfterMillis,
    reopenInitialDelayMillis: e.LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS,
    reopenMaxDelayMillis: e.LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS,
    tokensFile:
      e.LEASE_FENCE_TOKENS_FILE !== undefined && !unset(e.LEASE_FENCE_TOKENS_FILE)
        ? absolute(e.LEASE_FENCE_TOKENS_FILE.trim())
        : resolve(dataDir, 'tokens.json'),
    signingKeysFile: signingKeysFile === undefined ? undefined : absolute(signingKeysFile),
    dashboardDir,
    logLevel: e.LOG_LEVEL,
    maxBodyBytes: e.LEASE_FENCE_MAX_BODY_BYTES,
    streamMaxBufferedBytes: e.LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES,
    streamHeartbeatMillis: e.LEASE_FENCE_STREAM_HEARTBEAT_MILLIS,
    streamStatsMillis: e.LEASE_FENCE_STREAM_STATS_MILLIS,
    streamPingMillis: e.LEASE_FENCE_STREAM_PING_MILLIS,
    fenceFirstPatterns: e.LEASE_FENCE_FENCE_FIRST,
    fenceFirstTimeoutMillis: e.LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS,
    lockDelays: e.LEASE_FENCE_LOCK_DELAY,
    shutdownDeadlineMillis: e.LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS,
  };
}
