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
        sqliteDurability: 'full',
        namespace: 'default',
        defaultTtlMillis: 10_000,
        minTtlMillis: 100,
        maxTtlMillis: 3_600_000,
        snapshotEvery: 10_000,
        tokensFile: '/srv/coordinator/data/tokens.json',
        dashboardDir: undefined,
        logLevel: 'info',
        maxBodyBytes: 16_384,
        streamMaxBufferedBytes: 1_048_576,
        streamHeartbeatMillis: 5_000,
        streamStatsMillis: 1_000,
      });
    });

    it('serves the dashboard package build by default only when it holds index.html', () => {
      expect(parseConfig({}, context(['/srv/dashboard/dist'])).dashboardDir).toBe('/srv/dashboard/dist');
      expect(parseConfig({}, context()).dashboardDir).toBeUndefined();
    });

    it('puts the tokens file in the data directory unless LEASE_FENCE_TOKENS_FILE names one', () => {
      expect(parseConfig({ LEASE_FENCE_DATA_DIR: '/var/lib/lf' }, context()).tokensFile).toBe('/var/lib/lf/tokens.json');
      expect(parseConfig({ LEASE_FENCE_TOKENS_FILE: 'secrets/t.json' }, context()).tokensFile).toBe('/srv/coordinator/secrets/t.json');
    });

    it('treats an empty variable as unset', () => {
      expect(parseConfig({ PORT: '', LOG_LEVEL: '  ' }, context())).toMatchObject({ port: 3000, logLevel: 'info' });
    });
  });

  describe('valid values', () => {
    it('parses numbers, the memory log and an upper-case log level', () => {
      // Act
      const config = parseConfig({
        PORT: '0', LEASE_FENCE_EVENT_LOG: 'memory', LEASE_FENCE_TTL_MILLIS: '2500', LEASE_FENCE_MIN_TTL_MILLIS: '500',
        LEASE_FENCE_MAX_TTL_MILLIS: '60000', LOG_LEVEL: 'WARN', LEASE_FENCE_SQLITE_DURABILITY: 'normal',
      }, context());

      // Assert
      expect(config).toMatchObject({ port: 0, eventLog: 'memory', defaultTtlMillis: 2500, minTtlMillis: 500, maxTtlMillis: 60_000, logLevel: 'warn', sqliteDurability: 'normal' });
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
      ['LOG_LEVEL', 'loud'],
    ])('refuses %s=%s with a message naming the variable and the value', (variable, value) => {
      // Act
      const error = configError({ [variable]: value });

      // Assert
      expect(error.code).toBe('invalid-config');
      expect(error.issues.map((i) => i.variable)).toEqual([variable]);
      expect(error.message).toContain(variable);
    });

    it('rejects eventstoredb clearly as not supported by this build yet', () => {
      const error = configError({ LEASE_FENCE_EVENT_LOG: 'eventstoredb' });
      expect(error.message).toMatch(/LEASE_FENCE_EVENT_LOG: eventstoredb is not supported by this build yet/);
    });

    it('refuses a default TTL outside the configured bounds, naming LEASE_FENCE_TTL_MILLIS', () => {
      const error = configError({ LEASE_FENCE_TTL_MILLIS: '50', LEASE_FENCE_MIN_TTL_MILLIS: '100' });
      expect(error.issues).toEqual([{ variable: 'LEASE_FENCE_TTL_MILLIS', message: expect.stringContaining('[100, 3600000]') }]);
    });

    it('refuses a minimum TTL above the maximum, naming LEASE_FENCE_MIN_TTL_MILLIS', () => {
      const error = configError({ LEASE_FENCE_MIN_TTL_MILLIS: '5000', LEASE_FENCE_MAX_TTL_MILLIS: '1000', LEASE_FENCE_TTL_MILLIS: '2000' });
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
