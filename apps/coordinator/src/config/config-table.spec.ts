/**
 * The configuration table of `docs/service.md` says what the schema does: it lists every variable
 * of {@link CONFIG_VARIABLES} and no other, and each default it gives is the one
 * {@link parseConfig} applies to an empty environment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, parseConfig, type Config, type ParseConfigContext } from './config.js';

const guide = readFileSync(new URL('../../../../docs/service.md', import.meta.url), 'utf8');

const cwd = '/srv/coordinator';
const defaultDashboardDir = '/srv/dashboard/dist';
/** The context of a checkout where the dashboard was built, so its default applies. */
const context: ParseConfigContext = { cwd, defaultDashboardDir, hasIndexHtml: (dir) => dir === defaultDashboardDir };
const defaults = parseConfig({}, context);

/**
 * How the table writes the default of each variable, and whether `defaults` bears it out. Values
 * the schema computes from other settings are written in words; every other one as the value.
 */
const shown = (value: unknown): string => {
  if (value === undefined) return '—';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(',');
  return String(value);
};
const DEFAULT_IN_TABLE: Record<string, { readonly shows: string; readonly holds: (config: Config) => boolean }> = {
  PORT: { shows: shown(defaults.port), holds: () => true },
  HOST: { shows: shown(defaults.host), holds: () => true },
  LEASE_FENCE_DATA_DIR: { shows: './data', holds: (config) => config.dataDir === join(cwd, 'data') },
  LEASE_FENCE_EVENT_LOG: { shows: shown(defaults.eventLog), holds: () => true },
  EVENTSTORE_CONNECTION_STRING: { shows: shown(defaults.eventStoreConnectionString), holds: () => true },
  LEASE_FENCE_SQLITE_DURABILITY: { shows: shown(defaults.sqliteDurability), holds: () => true },
  LEASE_FENCE_SQLITE_WRITER: { shows: shown(defaults.sqliteWriter), holds: () => true },
  LEASE_FENCE_NAMESPACE: { shows: shown(defaults.namespace), holds: () => true },
  LEASE_FENCE_TTL_MILLIS: { shows: shown(defaults.defaultTtlMillis), holds: () => true },
  LEASE_FENCE_MIN_TTL_MILLIS: { shows: shown(defaults.minTtlMillis), holds: () => true },
  LEASE_FENCE_MAX_TTL_MILLIS: { shows: shown(defaults.maxTtlMillis), holds: () => true },
  LEASE_FENCE_SNAPSHOT_EVERY: { shows: shown(defaults.snapshotEvery), holds: () => true },
  LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: { shows: shown(defaults.checkpointIntervalMillis), holds: () => true },
  LEASE_FENCE_HEARTBEAT: { shows: shown(defaults.heartbeat), holds: () => true },
  LEASE_FENCE_ROLE: { shows: shown(defaults.role), holds: () => true },
  LEASE_FENCE_TAKEOVER_AFTER_MILLIS: {
    shows: '3 × checkpoint interval',
    holds: (config) => config.takeoverAfterMillis === 3 * config.checkpointIntervalMillis,
  },
  LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS: { shows: shown(defaults.reopenInitialDelayMillis), holds: () => true },
  LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS: { shows: shown(defaults.reopenMaxDelayMillis), holds: () => true },
  LEASE_FENCE_FLOOR_WAIT_MILLIS: { shows: shown(defaults.floorWaitMillis), holds: () => true },
  LEASE_FENCE_LOST_FENCE_MARGIN: { shows: shown(defaults.lostFenceMarginFences), holds: () => true },
  LEASE_FENCE_TOKENS_FILE: {
    shows: '<data dir>/tokens.json',
    holds: (config) => config.tokensFile === join(config.dataDir, 'tokens.json'),
  },
  LEASE_FENCE_SIGNING_KEYS_FILE: {
    shows: '<data dir>/signing-keys.json, generated (mode 0600) on the first start',
    holds: (config) => config.signingKeysFile === undefined,
  },
  LEASE_FENCE_DASHBOARD_DIR: {
    shows: 'apps/dashboard/dist if built',
    holds: (config) => config.dashboardDir === defaultDashboardDir,
  },
  LOG_LEVEL: { shows: shown(defaults.logLevel), holds: () => true },
  LEASE_FENCE_MAX_BODY_BYTES: { shows: shown(defaults.maxBodyBytes), holds: () => true },
  LEASE_FENCE_STREAM_MAX_BUFFERED_BYTES: { shows: shown(defaults.streamMaxBufferedBytes), holds: () => true },
  LEASE_FENCE_STREAM_HEARTBEAT_MILLIS: { shows: shown(defaults.streamHeartbeatMillis), holds: () => true },
  LEASE_FENCE_STREAM_STATS_MILLIS: { shows: shown(defaults.streamStatsMillis), holds: () => true },
  LEASE_FENCE_STREAM_PING_MILLIS: { shows: shown(defaults.streamPingMillis), holds: () => true },
  LEASE_FENCE_FENCE_FIRST: { shows: shown(defaults.fenceFirstPatterns), holds: () => true },
  LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS: { shows: shown(defaults.fenceFirstTimeoutMillis), holds: () => true },
  LEASE_FENCE_LOCK_DELAY: { shows: shown(defaults.lockDelays), holds: () => true },
  LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS: { shows: shown(defaults.shutdownDeadlineMillis), holds: () => true },
};

/** The rows of the guide's configuration table: each variable named in a row, with the default written for it. */
function tableDefaults(): Map<string, string> {
  const header = /^\|\s*variable\s*\|\s*default\s*\|\s*meaning\s*\|/m.exec(guide);
  if (header === null) throw new Error('docs/service.md has no configuration table (| variable | default | meaning |)');
  const rows = guide.slice(header.index).split('\n').slice(2);
  const table = new Map<string, string>();
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    // Cells between unescaped pipes, without the padding Prettier aligns them with.
    const [variableCell, defaultCell] = row
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    const variables = variableCell!.split(' / ').map((name) => name.replaceAll('`', ''));
    const written = defaultCell!.split(' / ');
    variables.forEach((variable, index) =>
      table.set(variable, (written.length === variables.length ? written[index]! : defaultCell!).replaceAll('`', '')),
    );
  }
  return table;
}

describe("docs/service.md's configuration table", () => {
  const table = tableDefaults();

  it('lists every variable of the schema, and no other', () => {
    expect([...table.keys()].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('knows how each variable of the schema writes its default', () => {
    expect(Object.keys(DEFAULT_IN_TABLE).sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it.each(CONFIG_VARIABLES.map((variable) => [variable]))(
    'gives the default that parseConfig applies for %s',
    (variable) => {
      const expected = DEFAULT_IN_TABLE[variable]!;
      expect(table.get(variable)).toBe(expected.shows);
      expect(expected.holds(defaults)).toBe(true);
    },
  );
});
