/**
 * The sidecar's configuration: every environment variable it reads, parsed once with zod into a
 * typed {@link GateConfig} with units in the names. Pure (the environment and the working
 * directory are parameters); `main.ts` is the one place that reads `process.env`.
 *
 * Same conventions as the coordinator's, by the same helpers (`@lease-fence/config-env`): an
 * unset or blank variable takes its default, a bad one is never replaced by it, and
 * {@link GateConfigError} names every offending variable.
 */
import { isAbsolute, resolve } from 'node:path';
import {
  EnvConfigError,
  envInteger,
  envIssuesOf,
  envLogLevel,
  envNamespace,
  envRequired,
  envText,
  LOG_LEVELS,
  type EnvIssue,
} from '@lease-fence/config-env';
import { coordinatorUrlProblem, GATE_LINK_PING_MILLIS } from '@lease-fence/client';
import { IdSchema } from '@lease-fence/protocol';
import { z } from 'zod';

/** pino log levels accepted in `LOG_LEVEL` (`@lease-fence/config-env`'s `LOG_LEVELS`). */
export const GATE_LOG_LEVELS = LOG_LEVELS;

/**
 * The parsed configuration. Durations are milliseconds, paths absolute.
 * @see {@link GATE_CONFIG_HELP} for each variable, its default and what it guarantees.
 */
export interface GateConfig {
  /** The resource this gate guards (the lease's resource name). `LEASE_FENCE_GATE_RESOURCE`, required. */
  readonly resource: string;
  /** The guarded service's origin, e.g. `http://127.0.0.1:8080` (no path). `LEASE_FENCE_GATE_UPSTREAM`, required. */
  readonly upstream: URL;
  /** TCP port to listen on; 0 picks a free one (logged as `listening`). `PORT`, default 3100. */
  readonly port: number;
  /** Interface to bind. `HOST`, default `127.0.0.1`. */
  readonly host: string;
  /** The coordinator's base URL (keys, reports, gate link). `LEASE_FENCE_COORDINATOR_URL`, required. */
  readonly coordinatorUrl: URL;
  /** A gate token of the coordinator's tokens file covering {@link resource}. `LEASE_FENCE_GATE_TOKEN`, required; never logged. */
  readonly gateToken: string;
  /** Directory of the floor file and its outbox. `LEASE_FENCE_DATA_DIR`, default `./data`. */
  readonly dataDir: string;
  /** The coordinator namespace whose grants are accepted. `LEASE_FENCE_NAMESPACE`, default `default`. */
  readonly namespace: string;
  /** Methods forwarded without a token (upper case); every other method needs one. `LEASE_FENCE_GATE_OPEN_METHODS`, default `GET,HEAD,OPTIONS`. */
  readonly openMethods: ReadonlySet<string>;
  /** An upstream that sends no reply headers, or stalls its body, this long gets 504; a client silent 5 s longer mid-request is disconnected (milliseconds). `LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS`, default 30 000. */
  readonly upstreamTimeoutMillis: number;
  /** Interval of the floor reports to the coordinator (milliseconds). `LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS`, default 5 000. */
  readonly floorReportMillis: number;
  /** Interval of the status reports to the coordinator (floor, outbox backlog, refusal and invalid-token counts; `GET /v1/gates`), milliseconds. `LEASE_FENCE_GATE_STATUS_REPORT_MILLIS`, default 5 000. */
  readonly statusReportMillis: number;
  /**
   * How often the gate link pings the coordinator (milliseconds); a link silent since the previous
   * ping is dropped and reopened, so a gate moves to a standby that took over from a frozen or cut-off
   * coordinator within about twice this. `LEASE_FENCE_GATE_LINK_PING_MILLIS`, default
   * `GATE_LINK_PING_MILLIS` of `@lease-fence/client` (5 000).
   */
  readonly linkPingMillis: number;
  /** pino level. `LOG_LEVEL`, default `info`. */
  readonly logLevel: (typeof GATE_LOG_LEVELS)[number];
}

/**
 * Thrown by {@link parseGateConfig} when a variable is missing, malformed or out of range.
 * `issues` names every offending variable; `main.ts` prints the message and exits 1.
 */
export class GateConfigError extends EnvConfigError {
  /** @param issues - One entry per offending variable: its name and what is wrong. */
  constructor(issues: readonly EnvIssue[]) {
    super(issues);
    this.name = 'GateConfigError';
  }
}

/**
 * What makes an http(s) URL unusable as the guarded service's origin, or `undefined`: credentials
 * (they would be printed in errors), or a path, query or fragment (a forwarded request keeps its own).
 */
const upstreamOriginProblem = (url: URL, text: string): string | undefined => {
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)';
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '')
    return `must be an origin without a path, e.g. http://127.0.0.1:8080 (requests keep their own path), got ${JSON.stringify(text)}`;
  return undefined;
};

/**
 * An http(s) URL: with `originOnly` the guarded service's origin (`upstreamOriginProblem`),
 * otherwise a coordinator base URL (the SDK's `coordinatorUrlProblem`, the rule the CLI and SDK keep).
 */
const httpUrl = (what: string, originOnly: boolean) =>
  envRequired(what).transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be an http(s) URL (${what}), got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: `must be an http(s) URL, got protocol ${JSON.stringify(url.protocol)}` });
      return z.NEVER;
    }
    const problem = originOnly ? upstreamOriginProblem(url, text) : coordinatorUrlProblem(url);
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return url;
  });

/** An HTTP method token (RFC 9110 §9.1: a `tchar` sequence), compared upper-case as Node reports methods. */
const METHOD_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const EnvSchema = z.object({
  LEASE_FENCE_GATE_RESOURCE: envRequired('the resource this gate guards').pipe(IdSchema),
  LEASE_FENCE_GATE_UPSTREAM: httpUrl('the guarded service, e.g. http://127.0.0.1:8080', true),
  PORT: envInteger(0, 65_535, '(TCP port)', 3100),
  HOST: envText('127.0.0.1'),
  LEASE_FENCE_COORDINATOR_URL: httpUrl('the coordinator, e.g. http://127.0.0.1:3000', false),
  LEASE_FENCE_GATE_TOKEN: envRequired("a gate token of the coordinator's tokens file covering the resource"),
  LEASE_FENCE_DATA_DIR: envText('./data'),
  LEASE_FENCE_NAMESPACE: envNamespace('default'),
  LEASE_FENCE_GATE_OPEN_METHODS: z
    .string()
    .optional()
    .transform((raw, ctx): ReadonlySet<string> => {
      if (raw === undefined) return new Set(['GET', 'HEAD', 'OPTIONS']);
      const methods = raw
        .split(',')
        .map((method) => method.trim())
        .filter((method) => method !== '');
      const bad = methods.find((method) => !METHOD_PATTERN.test(method));
      if (bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `must be comma-separated HTTP methods (e.g. GET,HEAD,OPTIONS; empty = every method needs a token), got ${JSON.stringify(bad)}`,
        });
        return z.NEVER;
      }
      return new Set(methods.map((method) => method.toUpperCase()));
    }),
  LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS: envInteger(1, 3_600_000, 'of milliseconds', 30_000),
  LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS: envInteger(1, 3_600_000, 'of milliseconds', 5_000),
  LEASE_FENCE_GATE_STATUS_REPORT_MILLIS: envInteger(100, 3_600_000, 'of milliseconds', 5_000),
  LEASE_FENCE_GATE_LINK_PING_MILLIS: envInteger(100, 3_600_000, 'of milliseconds', GATE_LINK_PING_MILLIS),
  LOG_LEVEL: envLogLevel('info'),
});

/** The name of every environment variable the sidecar reads, in the order of its schema (and of `--help`). */
export const GATE_CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/** What `lease-fence-gate --help` prints: each variable, its default, what it means. */
export const GATE_CONFIG_HELP = `lease-fence-gate: a fencing reverse proxy. Writes (every method not in LEASE_FENCE_GATE_OPEN_METHODS)
must carry their lease's signed token in the Lease-Fence-Token header; the gate verifies it against the
coordinator's /v1/keys, raises its durable floor, then forwards the request (minus that header) upstream.
Stale or double-granted fences get 409, invalid tokens 401; neither reaches the upstream.
At start it raises the floor restored from LEASE_FENCE_DATA_DIR to the coordinator's latest grant for the
resource, and its refusal seq to after the coordinator's last; until then writes get 503 (reads pass).
Health, readiness and metrics: /.well-known/lease-fence-gate/{healthz,readyz,metrics} (never forwarded).

Environment:
  LEASE_FENCE_GATE_RESOURCE      required  the resource this gate guards (the lease's resource name)
  LEASE_FENCE_GATE_UPSTREAM      required  the guarded service's origin, e.g. http://127.0.0.1:8080 (no path)
  PORT                           3100      port to listen on (0 = any free port)
  HOST                           127.0.0.1 interface to bind
  LEASE_FENCE_COORDINATOR_URL    required  the coordinator's base URL, e.g. http://127.0.0.1:3000
  LEASE_FENCE_GATE_TOKEN         required  a gate token of the coordinator's tokens file covering the resource
  LEASE_FENCE_DATA_DIR           ./data    directory of the floor file and its refusal outbox
  LEASE_FENCE_NAMESPACE          default   the coordinator namespace whose grants are accepted
  LEASE_FENCE_GATE_OPEN_METHODS  GET,HEAD,OPTIONS  methods forwarded without a token (empty = none)
  LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS  30000  no reply headers (or a stalled body) this long: 504; a client silent 5 s longer mid-request is closed
  LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS      5000   interval of floor reports to the coordinator
  LEASE_FENCE_GATE_STATUS_REPORT_MILLIS     5000   interval of status reports (floor, outbox backlog, counts) to GET /v1/gates
  LEASE_FENCE_GATE_LINK_PING_MILLIS         ${GATE_LINK_PING_MILLIS}   gate link keepalive: a link silent this long past a ping is reopened
  LOG_LEVEL                      info      ${GATE_LOG_LEVELS.join(', ')}
`;

/**
 * Parses the sidecar's environment into a {@link GateConfig}. Unknown variables are ignored.
 * @param env - The environment (`process.env` in production).
 * @param cwd - Directory a relative `LEASE_FENCE_DATA_DIR` is resolved against.
 * @throws {@link GateConfigError} naming every offending variable.
 */
export function parseGateConfig(env: Readonly<Record<string, string | undefined>>, cwd: string): GateConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new GateConfigError(envIssuesOf(parsed.error));
  }
  const e = parsed.data;
  return {
    resource: e.LEASE_FENCE_GATE_RESOURCE,
    upstream: e.LEASE_FENCE_GATE_UPSTREAM,
    port: e.PORT,
    host: e.HOST,
    coordinatorUrl: e.LEASE_FENCE_COORDINATOR_URL,
    gateToken: e.LEASE_FENCE_GATE_TOKEN,
    dataDir: isAbsolute(e.LEASE_FENCE_DATA_DIR) ? e.LEASE_FENCE_DATA_DIR : resolve(cwd, e.LEASE_FENCE_DATA_DIR),
    namespace: e.LEASE_FENCE_NAMESPACE,
    openMethods: e.LEASE_FENCE_GATE_OPEN_METHODS,
    upstreamTimeoutMillis: e.LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS,
    floorReportMillis: e.LEASE_FENCE_GATE_FLOOR_REPORT_MILLIS,
    statusReportMillis: e.LEASE_FENCE_GATE_STATUS_REPORT_MILLIS,
    linkPingMillis: e.LEASE_FENCE_GATE_LINK_PING_MILLIS,
    logLevel: e.LOG_LEVEL,
  };
}
