import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EnvConfigError, envInteger, envIssuesOf, envLogLevel, envNamespace, envRequired, envText } from './env.js';

const Schema = z.object({
  PORT: envInteger(0, 65_535, '(TCP port)', 3000),
  TAKEOVER_MILLIS: envInteger(1, 3_600_000, 'of milliseconds', undefined),
  HOST: envText('127.0.0.1'),
  TOKEN: envRequired('a gate token'),
  LOG_LEVEL: envLogLevel('info'),
  LEASE_FENCE_NAMESPACE: envNamespace('default'),
});

const parse = (env: Record<string, string | undefined>) => Schema.safeParse({ TOKEN: 't', ...env });

describe('environment helpers', () => {
  it('gives unset and blank variables their defaults, and trims set ones', () => {
    expect(parse({ PORT: '  ', HOST: undefined, LOG_LEVEL: '' }).data).toEqual({
      PORT: 3000,
      TAKEOVER_MILLIS: undefined,
      HOST: '127.0.0.1',
      TOKEN: 't',
      LOG_LEVEL: 'info',
      LEASE_FENCE_NAMESPACE: 'default',
    });
    expect(parse({ PORT: ' +8080 ', HOST: ' 0.0.0.0 ', LOG_LEVEL: 'DEBUG', TOKEN: ' s ' }).data).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      LOG_LEVEL: 'debug',
      TOKEN: 's',
    });
  });

  it.each([
    ['PORT', '65536', 'must be an integer (TCP port) in [0, 65535], got "65536"'],
    ['PORT', '1e3', 'must be an integer (TCP port) in [0, 65535], got "1e3"'],
    ['PORT', '-1', 'must be an integer (TCP port) in [0, 65535], got "-1"'],
    ['TAKEOVER_MILLIS', '0', 'must be an integer of milliseconds in [1, 3600000], got "0"'],
    ['TOKEN', ' ', 'is required: a gate token'],
    ['LOG_LEVEL', 'loud', 'must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    ['LEASE_FENCE_NAMESPACE', 'a b', 'must use only letters, digits, _ . : -'],
    ['LEASE_FENCE_NAMESPACE', 'n'.repeat(201), 'must be at most 200 characters'],
  ])('refuses %s=%j, never falling back to the default, naming the variable', (variable, raw, message) => {
    const result = parse({ [variable]: raw });
    expect(result.success).toBe(false);
    expect(envIssuesOf(result.error!)).toEqual([{ variable, message }]);
  });

  it('names every offending variable in one error', () => {
    const result = parse({ PORT: 'x', TOKEN: undefined });
    const error = new EnvConfigError(envIssuesOf(result.error!));
    expect(error.code).toBe('invalid-config');
    expect(error.message).toBe(
      'invalid configuration:\n  PORT: must be an integer (TCP port) in [0, 65535], got "x"\n  TOKEN: is required: a gate token',
    );
  });
});
