import { REJECTION_BATCH_MAX_BODY_BYTES } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, type ParseConfigContext } from './config.js';

const context = (dashboards: readonly string[] = []): ParseConfigContext => ({
  cwd: '/srv/coordinator',
  defaultDashboardDir: '/srv/dashboard/dist',
  hasIndexHtml: (dir) => dashboards.includes(dir),
});

const configError = (env: Record<string, string>, ctx = context()): ConfigError => {
  try {
    parseConfig(env, ctx);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected parseConfig to throw ConfigError');
};

describe('parseConfig', () => {
  describe('defaults', () => {
    it('gives every documented default when the environment is empty', () => {
      // Act
      const config = parseConfig({}, context());

      // Assert
      expect(config).toEqual({
        port: 3000,
        host: '127.0.0.1',
        dataDir: '/srv/coordinator/data',
        eventLog: 'sqlite',
        eventStoreConnectionString: undefined,
        sqliteDurability: 'full',
        sqliteWriter: 'thread',
        namespace: 'default',
        defaultTtlMillis: 10_000,
        minTtlMillis: 100,
        maxTtlMillis: 3_600_000,
        snapshotEvery: 10_000,
        checkpointIntervalMillis: 1_000,
        floorWaitMillis: 0,
        lostFenceMarginFences: 1_000_000,
        heartbeat: false,
        role: 'active',
        takeoverAfterMillis: 3_000,
        reopenInitialDelayMillis: 100,
        reopenMaxDelayMillis: 5_000,
        tokensFile: '/srv/coordinator/data/tokens.json',
        dashboardDir: undefined,
        logLevel: 'info',
        maxBodyBytes: 16_384,
        streamMaxBufferedBytes: 1_048_576,
        streamHeartbeatMillis: 5_000,
        streamStatsMillis: 1_000,
        streamPingMillis: 15_000,
        fenceFirstPatterns: [],
        fenceFirstTimeoutMillis: 3_000,
        lockDelays: [],
        shutdownDeadlineMillis: 10_000,
      });
    });

    it("accepts by default a body as large as a gate's batch of refusals (REJECTION_BATCH_MAX_BODY_BYTES), so none is refused 413", () => {
      expect(parseConfig({}, context()).maxBodyBytes).toBeGreaterThanOrEqual(REJECTION_BATCH_MAX_BODY_BYTES);
    });

    it('serves the dashboard package build by default only when it holds index.html', () => {
      expect(parseConfig({}, context(['/srv/dashboard/dist'])).dashboardDir).toBe('/srv/dashboard/dist');
      expect(parseConfig({}, context()).dashboardDir).toBeUndefined();
    });

    it('puts the tokens file in the data directory unless LEASE_FENCE_TOKENS_FILE names one', () => {
      expect(parseConfig({ LEASE_FENCE_DATA_DIR: '/var/lib/lf' }, context()).tokensFile).toBe(
        '/var/lib/lf/tokens.json',
      );
      expect(parseConfig({ LEASE_FENCE_TOKENS_FILE: 'secrets/t.json' }, context()).tokensFile).toBe(
        '/srv/coordinator/secrets/t.json',
      );
    });

    it('treats an empty variable as unset', () => {
      expect(parseConfig({ PORT: '', LOG_LEVEL: '  ' }, context())).toMatchObject({ port: 3000, logLevel: 'info' });
    });
  });

  describe('valid values', () => {
    it('parses numbers, the memory log and an upper-case log level', () => {
      // Act
      const config = parseConfig(
        {
          PORT: '0',
          LEASE_FENCE_EVENT_LOG: 'memory',
          LEASE_FENCE_TTL_MILLIS: '2500',
          LEASE_FENCE_MIN_TTL_MILLIS: '500',
          LEASE_FENCE_MAX_TTL_MILLIS: '60000',
          LOG_LEVEL: 'WARN',
          LEASE_FENCE_SQLITE_DURABILITY: 'normal',
          LEASE_FENCE_SQLITE_WRITER: 'inline',
        },
        context(),
      );

      // Assert
      expect(config).toMatchObject({
        port: 0,
        eventLog: 'memory',
        defaultTtlMillis: 2500,
        minTtlMillis: 500,
        maxTtlMillis: 60_000,
        logLevel: 'warn',
        sqliteDurability: 'normal',
        sqliteWriter: 'inline',
      });
    });

    it.each([
      'kurrentdb://localhost:2113?tls=false',
      'kurrentdb+discover://admin:changeit@cluster.dns:2113',
      'kurrent://127.0.0.1:2113?tls=false',
      'kdb://127.0.0.1:2113?tls=false',
      'esdb://localhost:2113?tls=false',
      'esdb+discover://cluster.dns:2113',
    ])('selects the eventstoredb log with EVENTSTORE_CONNECTION_STRING=%s', (connectionString) => {
      // Act
      const config = parseConfig(
        {
          LEASE_FENCE_EVENT_LOG: 'eventstoredb',
          EVENTSTORE_CONNECTION_STRING: ` ${connectionString} `,
          LEASE_FENCE_SIGNING_KEYS_FILE: 'keys.json',
        },
        context(),
      );

      // Assert
      expect(config).toMatchObject({ eventLog: 'eventstoredb', eventStoreConnectionString: connectionString });
    });

    it('resolves LEASE_FENCE_SIGNING_KEYS_FILE against the working directory; unset = generated in the data dir', () => {
      expect(parseConfig({ LEASE_FENCE_SIGNING_KEYS_FILE: ' keys/signing.json ' }, context()).signingKeysFile).toBe(
        '/srv/coordinator/keys/signing.json',
      );
      expect(parseConfig({}, context()).signingKeysFile).toBeUndefined();
    });

    it('ignores EVENTSTORE_CONNECTION_STRING unless the eventstoredb log is selected', () => {
      expect(
        parseConfig({ EVENTSTORE_CONNECTION_STRING: 'kurrentdb://db:2113' }, context()).eventStoreConnectionString,
      ).toBeUndefined();
    });

    it('takes the standby settings, taking over after 3 checkpoint intervals by default', () => {
      // Act
      const config = parseConfig(
        { LEASE_FENCE_ROLE: 'standby', LEASE_FENCE_HEARTBEAT: 'TRUE', LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '500' },
        context(),
      );

      // Assert
      expect(config).toMatchObject({
        role: 'standby',
        heartbeat: true,
        checkpointIntervalMillis: 500,
        takeoverAfterMillis: 1_500,
      });
      expect(
        parseConfig({ LEASE_FENCE_ROLE: 'standby', LEASE_FENCE_TAKEOVER_AFTER_MILLIS: '10000' }, context())
          .takeoverAfterMillis,
      ).toBe(10_000);
    });

    it('takes the stream ping interval from LEASE_FENCE_STREAM_PING_MILLIS', () => {
      expect(parseConfig({ LEASE_FENCE_STREAM_PING_MILLIS: '250' }, context()).streamPingMillis).toBe(250);
    });

    it('takes the shutdown deadline from LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS', () => {
      expect(parseConfig({ LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS: '2500' }, context()).shutdownDeadlineMillis).toBe(
        2_500,
      );
    });

    it('takes fence-first resource patterns, comma-separated, and their timeout', () => {
      const config = parseConfig(
        { LEASE_FENCE_FENCE_FIRST: 'deploy-slot, repo:web/* ', LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS: '1500' },
        context(),
      );
      expect(config.fenceFirstPatterns).toEqual(['deploy-slot', 'repo:web/*']);
      expect(config.fenceFirstTimeoutMillis).toBe(1500);
    });

    it('reads LEASE_FENCE_LOCK_DELAY as pattern=millis pairs, spaces ignored', () => {
      expect(parseConfig({ LEASE_FENCE_LOCK_DELAY: 'deploy-*=5000, db = 2000 ,*=0' }, context()).lockDelays).toEqual([
        { pattern: 'deploy-*', millis: 5000 },
        { pattern: 'db', millis: 2000 },
        { pattern: '*', millis: 0 },
      ]);
      expect(parseConfig({ LEASE_FENCE_LOCK_DELAY: 'a=b=10' }, context()).lockDelays).toEqual([
        { pattern: 'a=b', millis: 10 },
      ]);
    });
  });

  describe('LEASE_FENCE_LOCK_DELAY', () => {
    it.each([
      ['a pair without =', 'deploy-*=5000,db-*', 'pair 2 "db-*" must be pattern=millis, e.g. deploy-*=5000'],
      [
        'a delay that is not a whole number',
        'deploy-*=5s',
        'pair 1 "deploy-*=5s": the delay must be a whole number of milliseconds, got "5s"',
      ],
      [
        'a negative delay',
        'deploy-*=-5',
        'pair 1 "deploy-*=-5": the delay must be a whole number of milliseconds, got "-5"',
      ],
      [
        'a delay over 2^31 - 1',
        'deploy-*=2147483648',
        'pair 1 "deploy-*=2147483648": the delay must be an integer of milliseconds in [0, 2147483647], got 2147483648',
      ],
      [
        'a * inside a pattern',
        'a*b=5',
        'pair 1 "a*b=5": the pattern may contain `*` only as its last character, got "a*b"',
      ],
      ['an empty pattern', '=5', 'pair 1 "=5": the pattern must not be empty, got ""'],
      [
        'a pattern listed twice',
        'db=1,db=2',
        'pair 2 "db=2": the pattern "db" is listed twice; give each pattern one delay',
      ],
      ['a stray comma', 'db=1,', 'pair 2 "" must be pattern=millis, e.g. deploy-*=5000'],
    ])('refuses %s, naming the pair', (_name, value, message) => {
      expect(configError({ LEASE_FENCE_LOCK_DELAY: value }).issues).toEqual([
        { variable: 'LEASE_FENCE_LOCK_DELAY', message },
      ]);
    });
  });

  describe('bad values', () => {
    it.each([
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '-1'],
      ['PORT', '3.5'],
      ['LEASE_FENCE_TTL_MILLIS', '0'],
      ['LEASE_FENCE_TTL_MILLIS', '10s'],
      ['LEASE_FENCE_MAX_TTL_MILLIS', String(2 ** 31)],
      ['LEASE_FENCE_SNAPSHOT_EVERY', '0'],
      ['LEASE_FENCE_EVENT_LOG', 'postgres'],
      ['LEASE_FENCE_NAMESPACE', 'has space'],
      ['LEASE_FENCE_SQLITE_DURABILITY', 'off'],
      ['LEASE_FENCE_SQLITE_WRITER', 'worker'],
      ['LOG_LEVEL', 'loud'],
      ['LEASE_FENCE_ROLE', 'leader'],
      ['LEASE_FENCE_HEARTBEAT', 'yes'],
      ['LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS', '5'],
      ['LEASE_FENCE_TAKEOVER_AFTER_MILLIS', '0'],
      ['LEASE_FENCE_REOPEN_MAX_DELAY_MILLIS', '0'],
      ['LEASE_FENCE_STREAM_PING_MILLIS', '0'],
      ['LEASE_FENCE_STREAM_PING_MILLIS', '15s'],
      ['LEASE_FENCE_STREAM_PING_MILLIS', '3600001'],
      ['LEASE_FENCE_FENCE_FIRST', 'deploy-*-slot'],
      ['LEASE_FENCE_FENCE_FIRST', 'a,,b'],
      ['LEASE_FENCE_FENCE_FIRST_TIMEOUT_MILLIS', '0'],
      ['LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS', '99'],
      ['LEASE_FENCE_SHUTDOWN_DEADLINE_MILLIS', '10s'],
    ])('refuses %s=%s with a message naming the variable and the value', (variable, value) => {
      // Act
      const error = configError({ [variable]: value });

      // Assert
      expect(error.code).toBe('invalid-config');
      expect(error.issues.map((i) => i.variable)).toEqual([variable]);
      expect(error.message).toContain(variable);
    });

    it('requires EVENTSTORE_CONNECTION_STRING with the eventstoredb log, naming it and an example', () => {
      const error = configError({ LEASE_FENCE_EVENT_LOG: 'eventstoredb', LEASE_FENCE_SIGNING_KEYS_FILE: 'keys.json' });
      expect(error.issues).toEqual([
        {
          variable: 'EVENTSTORE_CONNECTION_STRING',
          message: expect.stringContaining('LEASE_FENCE_EVENT_LOG=eventstoredb'),
        },
      ]);
      expect(error.message).toContain('kurrentdb://localhost:2113?tls=false');
    });

    it('requires LEASE_FENCE_SIGNING_KEYS_FILE with the eventstoredb log, saying why and how to create one', () => {
      const error = configError({
        LEASE_FENCE_EVENT_LOG: 'eventstoredb',
        EVENTSTORE_CONNECTION_STRING: 'kurrentdb://db:2113',
      });
      expect(error.issues).toEqual([
        {
          variable: 'LEASE_FENCE_SIGNING_KEYS_FILE',
          message: expect.stringContaining('a primary and its standby sign grants with the same key'),
        },
      ]);
      expect(error.message).toContain('signing-keys-cli.js');
    });

    it('refuses a connection string without a KurrentDB or EventStoreDB scheme, without echoing it (it may hold a password)', () => {
      const error = configError({
        LEASE_FENCE_EVENT_LOG: 'eventstoredb',
        EVENTSTORE_CONNECTION_STRING: 'https://admin:s3cret@db:2113',
        LEASE_FENCE_SIGNING_KEYS_FILE: 'keys.json',
      });
      expect(error.issues.map((i) => i.variable)).toEqual(['EVENTSTORE_CONNECTION_STRING']);
      expect(error.message).not.toContain('s3cret');
    });

    it('refuses a standby on a memory log, which no other coordinator can share', () => {
      const error = configError({ LEASE_FENCE_ROLE: 'standby', LEASE_FENCE_EVENT_LOG: 'memory' });
      expect(error.issues).toEqual([
        { variable: 'LEASE_FENCE_ROLE', message: expect.stringContaining('LEASE_FENCE_EVENT_LOG=memory') },
      ]);
    });

    it('refuses a standby that would take over between two heartbeats of an idle coordinator', () => {
      const error = configError({
        LEASE_FENCE_ROLE: 'standby',
        LEASE_FENCE_CHECKPOINT_INTERVAL_MILLIS: '1000',
        LEASE_FENCE_TAKEOVER_AFTER_MILLIS: '1000',
      });
      expect(error.issues.map((i) => i.variable)).toEqual(['LEASE_FENCE_TAKEOVER_AFTER_MILLIS']);
    });

    it('refuses a first reopen delay above the longest one, naming LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS', () => {
      const error = configError({ LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS: '6000' });
      expect(error.issues.map((i) => i.variable)).toEqual(['LEASE_FENCE_REOPEN_INITIAL_DELAY_MILLIS']);
    });

    it('refuses a default TTL outside the configured bounds, naming LEASE_FENCE_TTL_MILLIS', () => {
      const error = configError({ LEASE_FENCE_TTL_MILLIS: '50', LEASE_FENCE_MIN_TTL_MILLIS: '100' });
      expect(error.issues).toEqual([
        { variable: 'LEASE_FENCE_TTL_MILLIS', message: expect.stringContaining('[100, 3600000]') },
      ]);
    });

    it('refuses a minimum TTL above the maximum, naming LEASE_FENCE_MIN_TTL_MILLIS', () => {
      const error = configError({
        LEASE_FENCE_MIN_TTL_MILLIS: '5000',
        LEASE_FENCE_MAX_TTL_MILLIS: '1000',
        LEASE_FENCE_TTL_MILLIS: '2000',
      });
      expect(error.issues.map((i) => i.variable)).toEqual(['LEASE_FENCE_MIN_TTL_MILLIS']);
    });

    it('refuses a LEASE_FENCE_DASHBOARD_DIR without index.html instead of silently serving nothing', () => {
      const error = configError({ LEASE_FENCE_DASHBOARD_DIR: '/nowhere' });
      expect(error.issues.map((i) => i.variable)).toEqual(['LEASE_FENCE_DASHBOARD_DIR']);
    });

    it('reports every bad variable at once', () => {
      const error = configError({ PORT: 'x', LOG_LEVEL: 'y' });
      expect(error.issues.map((i) => i.variable).sort()).toEqual(['LOG_LEVEL', 'PORT']);
    });
  });
});
