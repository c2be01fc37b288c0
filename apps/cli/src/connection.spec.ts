import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  addConnectionOptions,
  connectionInputOf,
  resolveConnectionSettings,
  type ConnectionInput,
} from './connection.js';
import { UsageError } from './exit-codes.js';

const flag = (value: string) => ({ value, from: 'flag' }) as const;
const env = (value: string) => ({ value, from: 'env' }) as const;
const files: Record<string, string> = {
  '/agent.token': 'file-token-1\n',
  '/two.token': 'a b\n',
  '/empty.token': ' \n',
};
const readTokenFile = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
  return text;
};
const resolve = (input: ConnectionInput) => resolveConnectionSettings(input, readTokenFile);
const refusal = (input: ConnectionInput): string => {
  try {
    resolve(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
};

describe('connection settings', () => {
  it('resolves the URL, a token file and the default clock skew', () => {
    expect(resolve({ url: flag('http://127.0.0.1:3000/'), tokenFile: flag('/agent.token') })).toEqual({
      coordinatorUrl: 'http://127.0.0.1:3000',
      agentToken: 'file-token-1',
      tokenSource: '--token-file /agent.token',
      clockSkewMillis: 500,
    });
  });

  it('lets a flag win over any variable: --token-file beats LEASE_FENCE_AGENT_TOKEN', () => {
    const settings = resolve({ url: env('http://c:1'), tokenFile: flag('/agent.token'), token: env('env-token') });
    expect(settings.agentToken).toBe('file-token-1');
    expect(
      resolve({ url: env('http://c:1'), token: flag('flag-token'), tokenFile: env('/agent.token') }),
    ).toMatchObject({ agentToken: 'flag-token', tokenSource: '--token' });
  });

  it('refuses two tokens at the same level, naming both', () => {
    expect(refusal({ url: flag('http://c:1'), token: flag('t'), tokenFile: flag('/agent.token') })).toBe(
      '--token-file and --token are both given: give one of them',
    );
    expect(refusal({ url: flag('http://c:1'), token: env('t'), tokenFile: env('/agent.token') })).toBe(
      'LEASE_FENCE_AGENT_TOKEN_FILE and LEASE_FENCE_AGENT_TOKEN are both given: give one of them',
    );
  });

  it.each([
    [{ tokenFile: flag('/agent.token') }, "--url (or LEASE_FENCE_URL): the coordinator's base URL is required"],
    [{ url: env('ftp://c'), token: flag('t') }, 'LEASE_FENCE_URL: must be an absolute http:// or https:// URL'],
    [{ url: flag('localhost:3000'), token: flag('t') }, '--url: must be an absolute http:// or https:// URL'],
    [{ url: flag('http://c:1/?x=1'), token: flag('t') }, '--url: must have no query (?…) or fragment (#…)'],
    [{ url: env('http://c:1#top'), token: flag('t') }, 'LEASE_FENCE_URL: must have no query (?…) or fragment (#…)'],
    [{ url: env('http://u:secret@c:1'), token: flag('t') }, 'LEASE_FENCE_URL: must not carry credentials'],
    [{ url: flag('http://c:1') }, 'a token is required: --token-file <path> (or LEASE_FENCE_AGENT_TOKEN_FILE)'],
    [{ url: flag('http://c:1'), token: env('has space') }, 'LEASE_FENCE_AGENT_TOKEN: must be printable ASCII'],
    [
      { url: flag('http://c:1'), tokenFile: flag('/missing') },
      '--token-file: cannot read the token file /missing: ENOENT',
    ],
    [
      { url: flag('http://c:1'), tokenFile: env('/two.token') },
      'LEASE_FENCE_AGENT_TOKEN_FILE: the token file /two.token must hold one token',
    ],
    [{ url: flag('http://c:1'), tokenFile: flag('/empty.token') }, 'must hold one token: it must not be empty'],
    [
      { url: flag('http://c:1'), token: flag('t'), clockSkew: env('100') },
      'LEASE_FENCE_CLOCK_SKEW: must be a whole number with a unit',
    ],
  ] satisfies [ConnectionInput, string][])('refuses %j naming the setting', (input, message) => {
    expect(refusal(input)).toContain(message);
  });

  it('never echoes a token in a refusal', () => {
    expect(refusal({ url: flag('http://c:1'), token: flag('sécret-value') })).not.toContain('sécret');
    expect(refusal({ url: flag('http://c:1'), tokenFile: flag('/two.token') })).not.toContain('a b');
  });

  it('takes a blank variable as unset, as the coordinator and the gate do (LEASE_FENCE_AGENT_TOKEN= beside a token file)', () => {
    const command = addConnectionOptions(new Command('x').exitOverride());
    const blank = { LEASE_FENCE_AGENT_TOKEN: '', LEASE_FENCE_CLOCK_SKEW: ' ', LEASE_FENCE_AGENT_TOKEN_FILE: '/t' };
    Object.assign(process.env, blank);
    try {
      command.parse(['--url', 'http://from-flag:2'], { from: 'user' });
    } finally {
      for (const name of Object.keys(blank)) delete process.env[name];
    }
    expect(connectionInputOf(command)).toEqual({ url: flag('http://from-flag:2'), tokenFile: env('/t') });
  });

  it('reads flags and variables through commander, the flag first', () => {
    const command = addConnectionOptions(new Command('x').exitOverride());
    process.env['LEASE_FENCE_URL'] = 'http://from-env:1';
    process.env['LEASE_FENCE_CLOCK_SKEW'] = '2s';
    try {
      command.parse(['--url', 'http://from-flag:2', '--token', 'tok'], { from: 'user' });
    } finally {
      delete process.env['LEASE_FENCE_URL'];
      delete process.env['LEASE_FENCE_CLOCK_SKEW'];
    }
    expect(connectionInputOf(command)).toEqual({
      url: flag('http://from-flag:2'),
      token: flag('tok'),
      clockSkew: env('2s'),
    });
  });
});
